/** The cell transform: declared names, the last value, imports, and source maps that land on the cell's line and column. */
import { SourceMap } from "node:module";
import vm from "node:vm";
import { afterAll, describe, expect, it } from "vitest";
import { CellChecker } from "../../src/kernel/check.js";
import { transformCell } from "../../src/kernel/transform.js";
import { LANG_FIXTURES } from "./lang-session.js";

/** The 0-based line and column of `needle` in `text`. */
function positionOf(text: string, needle: string): { line: number; column: number } {
  const index = text.indexOf(needle);
  expect(index, `${needle} in ${text}`).toBeGreaterThanOrEqual(0);
  const before = text.slice(0, index).split("\n");
  return { line: before.length - 1, column: before[before.length - 1].length };
}

const checker = new CellChecker(LANG_FIXTURES);
afterAll(() => checker.dispose());

/** Runs a transformed cell in this realm with a scope, as the executor does (checked first, for the references to earlier cells). */
async function run(code: string, scope: Record<string, unknown> = Object.create(null) as Record<string, unknown>) {
  const checked = checker.check(code);
  expect(checked.diagnostics).toEqual([]);
  checker.commit(checked);
  const cell = transformCell(code, "/nb/cell.mts", new Set(checked.references));
  const f = new vm.Script(cell.js).runInThisContext() as (...args: unknown[]) => unknown;
  const started = f(scope, (s: string) => import(s), undefined, undefined, Object.defineProperty);
  return { result: cell.mode === "async" ? await (started as Promise<Result>) : await drive(started as Generator<unknown, Result>), scope, cell };
}

type Result = { value: unknown } | undefined;

/** Runs a cell's generator as the executor does (without its SIGINT guard): each yield is [awaited, offset]. */
async function drive(generator: Generator<unknown, Result>): Promise<Result> {
  let step = generator.next();
  while (!step.done) {
    const [awaited] = step.value as [unknown, number];
    let value: unknown;
    try {
      value = await awaited;
    } catch (error) {
      step = generator.throw(error);
      continue;
    }
    step = generator.next(value);
  }
  return step.value;
}

describe("transformCell", { timeout: 60_000 }, () => {
  it("lists the top-level value names, and which can be assigned", () => {
    const cell = transformCell(
      [
        "import * as ns from 'x';",
        "import d, { a, b as c } from 'y';",
        "import type { T } from 'z';",
        "import { type U, v } from 'w';",
        "const { k, l: [m] } = { k: 1, l: [2] };",
        "let n = 1, o = 2;",
        "var p;",
        "function f() {}",
        "class K {}",
        "enum E { A }",
        "namespace N { export const z = 1; }",
        "namespace OnlyTypes { export interface I {} }",
        "interface I {}",
        "type Alias = number;",
        "declare const ambient: number;",
        "{ const inner = 1; }",
      ].join("\n"),
      "/nb/c.mts",
    );
    expect(cell.declared.sort()).toEqual(["E", "K", "N", "a", "c", "d", "f", "k", "m", "n", "ns", "o", "p", "v"].sort());
    expect(cell.assignable.sort()).toEqual(["E", "K", "N", "f", "n", "o", "p"].sort());
    expect(cell.hasValue).toBe(false);
  });

  it("returns the last expression statement as { value }, and only that", async () => {
    expect((await run("const x = 2;\nx * 21")).result).toEqual({ value: 42 });
    expect((await run("1;\nconst y = 1;")).result).toBeUndefined();
    expect((await run("await Promise.resolve(3);;")).result).toEqual({ value: 3 });
    const bare = (await run("Promise.resolve(4)")).result;
    expect(bare?.value).toBeInstanceOf(Promise);
  });

  it("registers declarations on the scope as accessors: let can be assigned, const cannot", async () => {
    const { scope } = await run("let n = 1;\nconst c = 2;\nfunction f() { return n; }");
    expect(scope.n).toBe(1);
    scope.n = 5;
    expect((scope.f as () => number)()).toBe(5);
    expect(() => {
      scope.c = 3;
    }).toThrow(TypeError);
    expect(Object.getPrototypeOf(scope)).toBeNull();
  });

  it("reads names of earlier cells through the scope, also in shorthand and template literals", async () => {
    const scope = Object.create(null) as Record<string, unknown>;
    await run("const X = [1];\nlet y = 2;\nfunction who(this: unknown) { return this; }", scope);
    const later = await run("[1].map((X) => X + 1);\n({ y = 5 } = {});\n({ X, y, s: `${y}`, who: who() })", scope);
    expect(later.result).toEqual({ value: { X: [1], y: 5, s: "5", who: undefined } });
    expect(later.cell.js).toContain("$rbp$scope.X");
    expect(later.cell.js).toContain("(0, $rbp$scope.who)()");
    expect(later.cell.js).toContain("(X) => X + 1");
  });

  it("turns imports into waits for dynamic imports, and drops type-only ones and exports", () => {
    const { js } = transformCell(
      "import type { T } from 'z';\nimport { a } from './a.js';\nexport const b = a;\nexport { b as c };\nexport * from './d.js';",
      "/nb/c.mts",
    );
    expect(js).toMatch(/\(yield \[\$rbp\$import\('\.\/a\.js'\), 28\]\)/);
    expect(js).not.toMatch(/\bimport\s*[{*"']|\bexport\b|'z'|d\.js/);
  });

  it("maps every generated position back to the cell's line and column", () => {
    const code =
      "const a = 1;\n\nfunction f(n: number): number {\n  return n + a;\n}\ninterface Gone { x: number }\nconst b: number = f(2);\nthrow new Error(`b=${b}`);";
    const cell = transformCell(code, "/nb/c.mts");
    const map = new SourceMap(cell.map as ConstructorParameters<typeof SourceMap>[0]);
    for (const needle of ["return n + a", "const b", "f(2)", "throw new Error", "function f"]) {
      const generated = positionOf(cell.js, needle);
      const original = positionOf(code, needle);
      const entry = map.findEntry(generated.line, generated.column) as { originalLine: number; originalColumn: number };
      expect({ line: entry.originalLine, column: entry.originalColumn }, needle).toEqual(original);
    }
  });

  it("turns top-level awaits into yields of [value, offset], except where TypeScript's emit awaits itself", () => {
    const generator = transformCell("const a = await Promise.resolve(1);\nasync function f() { return await a; }", "/nb/c.mts");
    expect(generator.mode).toBe("generator");
    expect(generator.js).toContain("function* ()");
    expect(generator.js).toContain("(yield [Promise.resolve(1), 10])");
    expect(generator.js).toContain("return await a;");
    expect(transformCell("for await (const x of [1]) x;", "/nb/c.mts").mode).toBe("async");
    expect(transformCell("await using r = { async [Symbol.asyncDispose]() {} };", "/nb/c.mts").mode).toBe("async");
    expect(transformCell("async function g() { for await (const x of [1]) x; }", "/nb/c.mts").mode).toBe("generator");
  });

  it("downlevels using for Node 20 and keeps top-level for await", async () => {
    const { result } = await run(
      "const log: string[] = [];\n{ using r = { [Symbol.dispose]() { log.push('disposed'); } }; log.push('in'); }\nfor await (const x of [Promise.resolve(1)]) log.push(String(x));\nlog",
    );
    expect(result).toEqual({ value: ["in", "disposed", "1"] });
  });
});
