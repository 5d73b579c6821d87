#!/usr/bin/env node
/**
 * prettier over the project's own files: those git tracks (`git ls-files`, so a scratch file or a
 * test's output beside them is never checked), minus .prettierignore. Outside a git checkout, the
 * project's folders and top-level files. Usage: node scripts/prettier-project.mjs --check | --write
 * (--list prints the files it would give prettier, one a line).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const mode = process.argv[2];
if (mode !== "--check" && mode !== "--write" && mode !== "--list") {
  console.error("usage: node scripts/prettier-project.mjs --check | --write | --list");
  process.exit(2);
}

let files;
try {
  files = execFileSync("git", ["ls-files", "-z"], { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], maxBuffer: 64 << 20 })
    .split("\0")
    .filter((f) => f !== "");
} catch {
  files = ["src", "test", "bench", "scripts", "docs", ".ci", "*.json", "*.ts", "*.mjs", "*.cjs", "*.md"];
}

if (mode === "--list") {
  process.stdout.write(files.map((f) => `${f}\n`).join(""));
  process.exit(0);
}

const prettier = createRequire(import.meta.url).resolve("prettier/bin/prettier.cjs");
// --ignore-unknown: tracked files prettier has no parser for (.wat, .sh, data) are skipped, not errors.
const run = spawnSync(process.execPath, [prettier, mode, "--ignore-unknown", "--log-level", "warn", ...files], { cwd: root, stdio: "inherit" });
if (run.status === 0 && mode === "--check") console.log(`prettier: ${files.length} tracked files checked, all formatted`);
process.exit(run.status ?? 1);
