/**
 * The executor as the shell uses it: versions, the last value (never awaited for the user),
 * realms, interrupt, input, magic positions, output routing, and the real helper from cells
 * (`import * as rbp from "<dist>"`, then `rbp.grid({ y, X })` on the embedded service).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { typescriptVersion } from "../../src/kernel/execute.js";
import { Session } from "./lang-session.js";
import { gold, goldCase } from "../gold.js";

const sessions: Session[] = [];
function session(): Session {
  const s = new Session();
  sessions.push(s);
  return s;
}
afterEach(async () => {
  for (const s of sessions.splice(0)) await s.dispose();
});

const g = globalThis as unknown as Record<string, unknown>;

describe("the executor", { timeout: 60_000 }, () => {
  it("reports the project's TypeScript as its language version", () => {
    const version = (JSON.parse(readFileSync("node_modules/typescript/package.json", "utf8")) as { version: string }).version;
    expect(typescriptVersion()).toBe(version);
    expect(session().executor.languageVersion).toBe(version);
    expect(version).toMatch(/^5\.9\./);
  });

  it("gives a bare promise back unawaited, and values of the main realm", async () => {
    const s = session();
    const { outcome } = await s.run("Promise.resolve(41 + 1)");
    const promise = outcome.status === "ok" ? outcome.value?.value : undefined;
    expect(promise).toBeInstanceOf(Promise);
    await expect(promise).resolves.toBe(42);
    const values = (await s.value("[new Map([[1, 2]]), [1, 2], new Error('e'), new Date(0)]")) as unknown[];
    expect(values[0]).toBeInstanceOf(Map);
    expect(values[1]).toBeInstanceOf(Array);
    expect(values[2]).toBeInstanceOf(Error);
    expect(values[3]).toBeInstanceOf(Date);
  });

  it("warms in the background, then runs cells", async () => {
    const s = session();
    await s.executor.warm();
    expect(await s.value("1 + 2")).toBe(3);
  });

  it("stops a synchronous busy loop on SIGINT, and the next cell runs", async () => {
    const s = session();
    const { outcome } = await s.run("let spins = 0;\nprocess.kill(process.pid, 'SIGINT');\nwhile (true) { spins++; }");
    expect(outcome).toMatchObject({ status: "error", ename: "KeyboardInterrupt" });
    expect(await s.value("typeof spins")).toBe("number");
  });

  it("stops a busy loop that comes after an await of the cell, on SIGINT", async () => {
    const s = session();
    const { outcome } = await s.run("const before = await Promise.resolve(1);\nprocess.kill(process.pid, 'SIGINT');\nwhile (true) {}");
    expect(outcome).toMatchObject({ status: "error", ename: "KeyboardInterrupt" });
    expect(await s.value("before")).toBe(1);
  });

  it("ends an awaiting cell when the signal aborts, and runs nothing once aborted", async () => {
    const s = session();
    const controller = new AbortController();
    g.__rbpTestStarted = () => controller.abort();
    try {
      const { outcome } = await s.run("(globalThis as any).__rbpTestStarted();\nawait new Promise(() => {});", { signal: controller.signal });
      expect(outcome).toMatchObject({ status: "error", ename: "KeyboardInterrupt" });
      const again = await s.run("console.log('ran')", { signal: controller.signal });
      expect(again.outcome).toMatchObject({ status: "error", ename: "KeyboardInterrupt" });
      expect(again.stdout).toBe("");
    } finally {
      delete g.__rbpTestStarted;
    }
  });

  it("input() asks the front end, and fails where it allows no input", async () => {
    const s = session();
    const answered = await s.run("const reply = await input('Name? ');\nreply", { answer: "Ann" });
    expect(answered.outcome).toEqual({ status: "ok", value: { value: "Ann (Name? )" } });
    const refused = await s.run("await input('Name? ')");
    expect(refused.outcome).toMatchObject({ status: "error", ename: "Error", evalue: "no stdin" });
  });

  it("moves positions of code generated from magics back to the cell (sourcePosition)", async () => {
    const s = session();
    const sourcePosition = (line: number, column: number) => ({ line: line + 10, column: column + 2 });
    const typeError = await s.run("const n: number = 'x';", { sourcePosition });
    expect(typeError.outcome).toMatchObject({ status: "error", ename: "CompileError", evalue: /^cell 1, line 11:9 - error TS2322/ });
    const thrown = await s.run("\nthrow new Error('boom');", { sourcePosition });
    expect(thrown.outcome.status).toBe("error");
    if (thrown.outcome.status === "error") expect(thrown.outcome.traceback, JSON.stringify(thrown.outcome)).toContain("    at cell 2, line 12:9");
  });

  it("sends console writes of timers to the last cell's output; dispose gives the console back", async () => {
    const s = session();
    const original = globalThis.console;
    const first = await s.run(
      "(globalThis as any).__rbpTestLater = new Promise<void>((resolve) => setTimeout(() => { console.log('later'); resolve(); }, 0));",
    );
    expect(first.outcome.status).toBe("ok");
    await (g.__rbpTestLater as Promise<void>);
    delete g.__rbpTestLater;
    expect(first.events).toEqual([["stdout", "later\n"]]);
    expect(globalThis.console).not.toBe(original);
    await s.dispose();
    expect(globalThis.console).toBe(original);
  });
});

describe("the helper from cells", () => {
  const dist = path.resolve("dist/index.js");

  it("import * as rbp from the built package, then rbp.grid({ y, X }) with names from an earlier cell", async () => {
    const s = session();
    const connect = await s.run(
      `import * as rbp from ${JSON.stringify(dist)};\nawait rbp.connect({ hosted: false, env: {}, envFile: false, local: { workers: 1 } });`,
    );
    expect(connect.outcome.status, JSON.stringify(connect.outcome)).toBe("ok");
    try {
      const { y, X } = gold.inputs;
      const theta = Object.fromEntries(gold.inputs.theta.map((value, i) => [`x${i + 1}`, value]));
      await s.run(`const X = ${JSON.stringify(X)};\nconst y = ${JSON.stringify(y)};\nconst theta = ${JSON.stringify(theta)};`);
      const run = await s.run("const p = await rbp.grid({ y, X }, { theta }, {}, { progress: 'none' });\np");
      expect(run.outcome.status, JSON.stringify(run.outcome)).toBe("ok");
      // (vitest loads modules through its own runner: the class is checked inside the kernel's realm, below)
      const p = (run.outcome.status === "ok" ? run.outcome.value?.value : undefined) as { yhat: number; constructor: { name: string } };
      expect(p.constructor.name).toBe("Prediction");
      expect(p.yhat).toBeCloseTo(goldCase("grid default").expect.yhat, 5);
      expect(await s.value("[p.k, p.attributes.length, p instanceof rbp.Prediction]")).toEqual([5, 5, true]);
      const typo = await s.run("p.yhatt");
      expect(typo.outcome).toMatchObject({
        status: "error",
        ename: "CompileError",
        evalue: /TS2551: Property 'yhatt' does not exist on type 'Prediction'. Did you mean 'yhat'\?/,
      });
    } finally {
      await s.run("await rbp.disconnect();");
    }
  }, 120_000);
});
