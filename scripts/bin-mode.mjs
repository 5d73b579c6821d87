// After the build: the package's bin (dist/cli/rbp.js, package.json "bin") is made executable.
// tsc writes it 0644, and npm links no bin for the project itself, so in a fresh clone
// `npx rbp ...` would answer "rbp: Permission denied" (test/project/readme.test.ts runs it).
import { chmodSync, readFileSync } from "node:fs";

const { bin } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8"));
for (const file of Object.values(bin)) chmodSync(new URL(`../${file}`, import.meta.url), 0o755);
