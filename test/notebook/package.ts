/**
 * For the suites that use the built package (dist/) the way a user does: a project directory
 * whose node_modules/rbp-notebook links to this repository, which is what `npm install
 * <path-to-rbp-notebook>` creates (npm links a folder dependency), so `import "rbp-notebook"`
 * resolves by package name (exports map for Node, `types`/`typesVersions` for tslab's
 * TypeScript, which resolves like Node 10) and the package's own dependencies resolve from the
 * repository's node_modules.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const REPO = fileURLToPath(new URL("../../", import.meta.url));

function newest(dir: string): number {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(path) : entry.name.endsWith(".ts") ? statSync(path).mtimeMs : 0);
  }
  return t;
}

/** Throws unless dist/ is built from the current sources (`npm test` builds first). */
export function ensureBuilt(): void {
  const index = join(REPO, "dist", "index.js");
  let built: number;
  try {
    built = statSync(index).mtimeMs;
  } catch {
    throw new Error("dist/index.js is missing: run `npm run build` first (`npm test` does)");
  }
  if (newest(join(REPO, "src")) > built + 1) throw new Error("dist/ is older than src/: run `npm run build` first (`npm test` does)");
}

/** A fresh project directory with node_modules/rbp-notebook -> this repository. */
export function userProject(prefix = "rbp-user-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  mkdirSync(join(dir, "node_modules"));
  symlinkSync(REPO, join(dir, "node_modules", "rbp-notebook"), "dir");
  return dir;
}

/** Runs a command to its end (killed after `timeoutMs`): its exit code, output and wall time. */
export function runProcess(
  command: string,
  args: string[],
  options: { cwd: string; timeoutMs: number; env?: NodeJS.ProcessEnv },
): Promise<{ code: number | null; stdout: string; stderr: string; ms: number }> {
  return new Promise((done, fail) => {
    const started = Date.now();
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? process.env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      fail(new Error(`${command} ${args.join(" ")} did not end within ${options.timeoutMs} ms\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, options.timeoutMs);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}
