/** Completion, inspect and is-complete: from the language service, seeing the earlier cells and the helper's types. */
import path from "node:path";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { codePointToOffset, isCompleteWith, offsetToCodePoint } from "../../src/kernel/complete.js";
import { Session } from "./lang-session.js";

const session = new Session();
afterAll(() => session.dispose());

describe("complete and inspect", { timeout: 60_000 }, () => {
  it("completes names of earlier cells and members of the helper's module", async () => {
    await session.run(`const myLongName = 1;\nimport * as rbp from ${JSON.stringify(path.resolve("dist/index.js"))};`);
    const names = await session.executor.complete("myLo", 4);
    expect(names).toMatchObject({ matches: ["myLongName"], cursorStart: 0, cursorEnd: 4 });
    const members = await session.executor.complete("const p = rbp.gr", 16);
    expect(members.matches).toContain("grid");
    expect(members.cursorStart).toBe(14);
    const all = await session.executor.complete("rbp.", 4);
    expect(all.matches).toEqual(expect.arrayContaining(["grid", "maxfit", "psr", "connect"]));
    expect(all.matches.some((m) => m.startsWith("__rbp"))).toBe(false);
  });

  it("counts the cursor in code points", async () => {
    const code = "const s = '😀😀'; myLo";
    const result = await session.executor.complete(code, [...code].length);
    expect(result.matches).toEqual(["myLongName"]);
    expect(result.cursorStart).toBe([...code].length - 4);
    expect(codePointToOffset(code, [...code].length)).toBe(code.length);
    expect(offsetToCodePoint(code, code.length)).toBe([...code].length);
  });

  it("inspects a name: its type and doc comment", async () => {
    await session.run("import { double } from './util.js';");
    const found = await session.executor.inspect("double(2)", 3, 0);
    expect(found.found).toBe(true);
    expect(found.data["text/plain"]).toContain("double(x: number): number");
    expect(found.data["text/plain"]).toContain("Twice `x`.");
    const helper = await session.executor.inspect("rbp.grid", 8, 0);
    expect(helper.data["text/plain"]).toMatch(/function grid\(data: rbp\.FrameInput/);
    expect(await session.executor.inspect("   ", 1, 0)).toEqual({ found: false, data: {} });
  });
});

describe("isComplete", () => {
  const cases: Array<[code: string, status: string, indent?: string]> = [
    ["1 + 2", "complete"],
    ["", "complete"],
    ["const o = { a: [1, (2)] };", "complete"],
    ["a / b / c", "complete"],
    ["const r = /[/(]/g; `${r}`", "complete"],
    ["`a ${`b ${1}`} c`", "complete"],
    ["for (const x of xs) {", "incomplete", "  "],
    ["function f() {\n  if (x) {", "incomplete", "    "],
    ["const x =", "incomplete", ""],
    ["`abc ${1} and", "incomplete", ""],
    ["/* a comment", "incomplete", ""],
    ["foo(1,\n", "incomplete", "  "],
    [")", "invalid"],
    ["1 +)", "invalid"],
    ["{ ]", "invalid"],
    ["let s = 'abc\n", "invalid"],
    ["const const = 1;", "invalid"],
  ];
  for (const [code, status, indent] of cases) {
    it(`${JSON.stringify(code)} is ${status}`, () => {
      const result = isCompleteWith(ts, code);
      expect(result.status).toBe(status);
      if (indent !== undefined) expect(result.indent).toBe(indent);
      expect(session.executor.isComplete(code)).toEqual(result);
    });
  }
});
