/**
 * Jupyter's own kernel test suite against the rbp kernel: `test/kernel/jkt_rbp.py` (a
 * `jupyter_kernel_test.KernelTests` with TypeScript samples for every test of the suite: kernel
 * info, stdout, stderr, completion, is_complete, the pager, error, execute_result, display_data,
 * history tail/range/search, inspect, clear_output) run with Debian's /usr/bin/python3 and its
 * python3-jupyter-kernel-test 0.4.5 (scripts/install-notebook-deps.sh installs it), on the
 * kernelspec `rbp kernel install --kind rbp` writes into a project-local JUPYTER_PATH. The suite
 * validates every message against the protocol's schema. Any failure, error or skip fails this
 * test. Without the package the test is skipped, except in CI (CI set), where that fails.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { IN_CI } from "../ci.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const OUT = join(ROOT, "test-output", "kernel-jkt");
const JUPYTER_DIR = join(OUT, "jupyter");
const PYTHON = "/usr/bin/python3";
const SUITE = join(ROOT, "test", "kernel", "jkt_rbp.py");

const probe = spawnSync(PYTHON, ["-c", "import jupyter_kernel_test; print(jupyter_kernel_test.__version__)"], { encoding: "utf8" });
const hasSuite = probe.status === 0;
const why = `Debian's python3-jupyter-kernel-test is not installed (${probe.error?.message ?? probe.stderr?.trim().split("\n").pop() ?? `exit ${probe.status}`}); install it with scripts/install-notebook-deps.sh`;

function env(): NodeJS.ProcessEnv {
  const e: NodeJS.ProcessEnv = { ...process.env, JUPYTER_PATH: JUPYTER_DIR, JUPYTER_RUNTIME_DIR: join(OUT, "runtime"), PYTHONWARNINGS: "ignore" };
  for (const k of ["RBP_BASE_URL", "CSA_BASE_URL", "CSA_API_KEY", "CSA_ACCESS_ID", "RBP_API_VERSION", "RBP_JKT_KERNEL"]) delete e[k];
  return e;
}

describe.skipIf(!hasSuite && !IN_CI)(`jupyter_kernel_test against the rbp kernel${hasSuite ? "" : ` (skipped: ${why})`}`, () => {
  beforeAll(() => {
    if (!hasSuite) throw new Error(`CI is set but ${why}`);
    const main = join(ROOT, "dist", "kernel", "main.js");
    if (!existsSync(main)) throw new Error(`the kernel is not built (${main}); run npm run build (npm test does)`);
    rmSync(OUT, { recursive: true, force: true });
    mkdirSync(join(OUT, "cwd"), { recursive: true });
    const r = spawnSync(process.execPath, [join(ROOT, "dist", "cli", "rbp.js"), "kernel", "install", "--kind", "rbp", "--jupyter-path", JUPYTER_DIR], {
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
  });

  it("passes every test of the suite, none skipped", async () => {
    expect(probe.stdout.trim()).toBe("0.4.5");
    // In a folder of the package: `import ... from "rbp-notebook"` in a cell finds the package itself.
    const run = await new Promise<{ code: number | null; output: string }>((done) => {
      const child = spawn(PYTHON, [SUITE], { cwd: join(OUT, "cwd"), env: env(), stdio: ["ignore", "pipe", "pipe"] });
      let output = "";
      child.stdout.setEncoding("utf8").on("data", (s: string) => (output += s));
      child.stderr.setEncoding("utf8").on("data", (s: string) => (output += s));
      child.on("close", (code) => done({ code, output }));
    });
    expect(run.code, run.output).toBe(0);
    const passed = [...run.output.matchAll(/^(test_\w+) \(.*\) \.\.\. ok$/gm)].map((m) => m[1]);
    expect(passed, run.output).toEqual([
      "test_clear_output",
      "test_completion",
      "test_display_data",
      "test_error",
      "test_execute_result",
      "test_execute_stderr",
      "test_execute_stdout",
      "test_history",
      "test_inspect",
      "test_is_complete",
      "test_kernel_info",
      "test_pager",
    ]);
    expect(run.output).not.toMatch(/skipped|SKIPPED|FAIL|ERROR/);
  }, 600_000);
});
