/**
 * The built executor (dist/kernel/execute.js) in a process of its own, as the kernel runs it:
 * creating it loads no compiler (start-up stays fast), and errors nobody caught (a throw in a
 * timer, an unhandled rejection) reach the last cell's stderr instead of ending the process.
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { LANG_FIXTURES } from "./lang-session.js";

const run = promisify(execFile);
const EXECUTE = path.resolve("dist/kernel/execute.js");

const SCRIPT = `
import { createRequire } from "node:module";
const { createExecutor } = await import(process.env.EXECUTE);
const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.endsWith("typescript/lib/typescript.js"));
const report = { beforeWarm: null, afterWarm: null, events: [], outcomes: [] };
const executor = createExecutor({ cwd: process.env.CWD });
report.beforeWarm = loaded();
await executor.warm();
report.afterWarm = loaded();
const output = { stream: (name, text) => report.events.push([name, text]), display() {}, clearOutput() {}, input: () => Promise.reject(new Error("no")) };
const signal = new AbortController().signal;
let count = 0;
const cell = async (code) => report.outcomes.push(await executor.execute(code, { executionCount: ++count, output, signal }));
await cell("function explode(): never {\\n  throw new Error('in a timer');\\n}");
await cell("(globalThis as any).done = new Promise<void>((resolve) => setTimeout(() => { setImmediate(resolve); explode(); }, 0));");
await globalThis.done;
await cell("(globalThis as any).done = new Promise<void>((resolve) => { void Promise.reject(new RangeError('nobody waits')); setTimeout(resolve, 0); });");
await globalThis.done;
await cell("'still alive'");
await executor.dispose();
process.stdout.write(JSON.stringify(report));
`;

describe("the built executor in its own process", () => {
  it("loads TypeScript only when warmed, and reports uncaught errors on the last cell's stderr", async () => {
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", SCRIPT], {
      env: { ...process.env, EXECUTE, CWD: LANG_FIXTURES },
      timeout: 120_000,
    });
    const report = JSON.parse(stdout) as {
      beforeWarm: boolean;
      afterWarm: boolean;
      events: Array<[string, string]>;
      outcomes: Array<{ status: string; value?: { value: unknown } }>;
    };
    expect(report.beforeWarm).toBe(false);
    expect(report.afterWarm).toBe(true);
    const stderr = report.events.filter((e) => e[0] === "stderr").map((e) => e[1]);
    expect(stderr).toHaveLength(2);
    expect(stderr[0]).toContain("Error: in a timer\n    at explode (cell 1, line 2:9)");
    expect(stderr[1]).toContain("RangeError: nobody waits");
    expect(report.outcomes.map((o) => o.status)).toEqual(["ok", "ok", "ok", "ok"]);
    expect(report.outcomes[3].value).toEqual({ value: "still alive" });
  }, 120_000);
});
