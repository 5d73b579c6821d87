/**
 * The idiom corpus: TypeScript as written across cells must behave as it would in one TypeScript
 * module. Every case runs its cells in a fresh executor (real TypeScript 5.9, real vm, the corpus'
 * folder as the notebook folder) and asserts each cell's outcome, value and output.
 */
import { afterAll, describe, expect, it } from "vitest";
import { Session } from "./lang-session.js";
import type { ExecuteOutcome } from "../../src/kernel/contract.js";

interface Expect {
  /** The cell's last value (toEqual). */
  value?: unknown;
  /** The cell ends in no expression statement. */
  none?: boolean;
  /** An error outcome with this ename. */
  error?: string;
  evalue?: string | RegExp;
  /** Lines (exact) or patterns the traceback must contain. */
  traceback?: Array<string | RegExp>;
  stdout?: string;
  stderr?: string;
}

type Cell = [code: string, expect: Expect];

const ok: Expect = {};
const none: Expect = { none: true };
const v = (value: unknown, more: Expect = {}): Expect => ({ value, ...more });
const err = (error: string, evalue?: string | RegExp, traceback?: Array<string | RegExp>): Expect => ({ error, evalue, traceback });

const CASES: Array<[name: string, cells: Cell[]]> = [
  [
    "object shorthand of earlier names, in calls and template literals",
    [
      ["const X = [[1, 2], [3, 4]];\nconst y = [5, 6];", none],
      [
        "({ y, X })",
        v({
          y: [5, 6],
          X: [
            [1, 2],
            [3, 4],
          ],
        }),
      ],
      ["JSON.stringify({ y, X })", v('{"y":[5,6],"X":[[1,2],[3,4]]}')],
      ["`${X.length} rows, y = ${y}, ${JSON.stringify({ y })}`", v('2 rows, y = 5,6, {"y":[5,6]}')],
      ["const key = 'k';\n({ [key]: 1, key, X: X.length })", v({ k: 1, key: "k", X: 2 })],
    ],
  ],
  [
    "destructuring declarations, then their names in later cells",
    [
      ["const { a, b: [c, d = 4], ...rest } = { a: 1, b: [2], e: 5, f: 6 };\nconst [first, , third = 'z'] = ['x', 'y'];", none],
      ["[a, c, d, rest, first, third]", v([1, 2, 4, { e: 5, f: 6 }, "x", "z"])],
      ["let m1 = 0, m2 = 0;", none],
      ["({ m1, m2 } = { m1: 5, m2: 6 });\n[m1, m2] = [m2, m1];\n[m1, m2]", v([6, 5])],
    ],
  ],
  [
    "let reassigned in later cells, closures see the new value",
    [
      ["let n = 1;\nconst get = () => n;\nfunction bump() { n += 10; }", none],
      ["n = 5;\nget()", v(5)],
      ["n++;\nbump();\n[n, get()]", v([16, 16])],
      ["var vv = 1;", none],
      ["vv += 1; vv", v(2)],
    ],
  ],
  [
    "re-running a cell that declares a const, class or function: the new definition wins",
    [
      ["const k = 1;\nclass P { f() { return 1; } }\nfunction f() { return 'one'; }", none],
      ["const k = 'two';\nk.length", v(3)],
      ["k.toUpperCase()", v("TWO")],
      ["class P { f() { return 2; } }\nfunction f() { return 'two'; }", none],
      ["[new P().f(), f()]", v([2, "two"])],
      ["const r = 1;", none],
      ["const r = 1;", none],
      ["r", v(1)],
    ],
  ],
  [
    "re-declaring a let in a later cell: old closures keep the old binding",
    [
      ["let q = 1;\nconst readQ = () => q;", none],
      ["let q = 'new';\n[q, readQ()]", v(["new", 1])],
    ],
  ],
  [
    "classes: fields, private members, statics, getters, inheritance across cells",
    [
      [
        "class Counter {\n  #n = 0;\n  static made = 0;\n  static { Counter.made = 100; }\n  constructor() { Counter.made++; }\n  get value() { return this.#n; }\n  inc() { this.#n++; return this; }\n}",
        none,
      ],
      ["[new Counter().inc().inc().value, Counter.made]", v([2, 101])],
      ["abstract class A { abstract name(): string; hi() { return 'A:' + this.name(); } }", none],
      ["class B extends A { name() { return 'B'; } override hi() { return super.hi() + '!'; } }", none],
      ["const b = new B();\n[b.hi(), b instanceof A, b instanceof B]", v(["A:B!", true, true])],
    ],
  ],
  [
    "enums (numeric, string, const, merged) and namespaces",
    [
      ["enum Color { Red, Green = 5, Blue }\nenum Dir { Up = 'UP' }\nconst enum Size { S = 1, M = 2 }\nenum E { A = 1 }\nenum E { B = 2 }", none],
      ["[Color.Green, Color[6], Dir.Up, Size.M, E.A + E.B]", v([5, "Blue", "UP", 2, 3])],
      ["namespace Geo {\n  export const pi = 3;\n  export function area(r: number) { return pi * r * r; }\n}", none],
      ["Geo.area(2)", v(12)],
      ["namespace Types { export interface T { a: number } }\nconst t: Types.T = { a: 1 };\nt.a", v(1)],
    ],
  ],
  [
    "generics, satisfies, as const",
    [
      [
        "function firstOf<T>(xs: readonly T[]): T | undefined { return xs[0]; }\nclass Box<T> { constructor(readonly value: T) {} map<U>(f: (t: T) => U) { return new Box(f(this.value)); } }",
        none,
      ],
      ["firstOf(['a', 'b'])?.toUpperCase()", v("A")],
      ["new Box(2).map((n) => `${n * 2}`).value", v("4")],
      ["const cfg = { mode: 'fast', n: 3 } as const satisfies { mode: string; n: number };", none],
      ["const m: 'fast' = cfg.mode;\nm", v("fast")],
      ["function pick<T, K extends keyof T>(o: T, key: K): T[K] { return o[key]; }", none],
      ["pick({ a: 1, b: 'x' }, 'b')", v("x")],
      ["const bad = { mode: 1 } satisfies { mode: string };", err("CompileError", /TS2322/)],
    ],
  ],
  [
    "type aliases and interfaces used in later cells",
    [
      ["interface Pt { x: number; y: number }\ntype Pair = [Pt, Pt];\ninterface Pt { label?: string }", none],
      ["const pp: Pair = [{ x: 1, y: 2 }, { x: 3, y: 4, label: 'b' }];\npp[1].label", v("b")],
      ["const badPt: Pt = { x: 1 };", err("CompileError", /^cell 3, line 1:7 - error TS2741: Property 'y' is missing/)],
    ],
  ],
  [
    "imports: type-only, relative (resolved from the notebook folder), default, namespace, node:, JSON, used in later cells",
    [
      ["import type { Shape } from './util.js';\nimport greet, { double, label as name } from './util.js';\nimport * as u from './util.js';", none],
      ["const s: Shape = { kind: 'circle', size: 2 };\n[double(s.size), name, greet('x'), u.double(5)]", v([4, "util", "hello x", 10])],
      ["import { basename } from 'node:path';\nimport data from './data.json' with { type: 'json' };", none],
      ["[basename('/a/b.txt'), data.rows.length]", v(["b.txt", 3])],
      ["const dyn = await import('./util.js');\ndyn.double(21)", v(42)],
      ["require('node:path').sep", v("/")],
      ["const wrong: Shape = { kind: 'triangle', size: 1 };", err("CompileError", /TS2322/)],
    ],
  ],
  [
    "top-level await, for await, async generators across cells",
    [
      ["const seven = await Promise.resolve(7);", none],
      ["seven * 2", v(14)],
      ["async function* gen(n: number) { for (let i = 1; i <= n; i++) { await null; yield i; } }", none],
      ["let total = 0;\nfor await (const x of gen(3)) total += x;\ntotal", v(6)],
      ["async function later() { await null; return 'later'; }", none],
      ["await later()", v("later")],
    ],
  ],
  [
    "using and await using (downlevelled, disposed at the end of their block or cell)",
    [
      [
        "const log: string[] = [];\nfunction res(name: string) { return { [Symbol.dispose]() { log.push('disposed ' + name); } }; }\nfunction ares(name: string) { return { async [Symbol.asyncDispose]() { await null; log.push('async disposed ' + name); } }; }",
        none,
      ],
      ["{\n  using a = res('a');\n  log.push('body');\n}\nlog.slice()", v(["body", "disposed a"])],
      ["using top = res('top');\nawait using at = ares('at');\nlog.push('in');", ok],
      ["log", v(["body", "disposed a", "in", "async disposed at", "disposed top"])],
    ],
  ],
  [
    "labelled loops, regular expressions that look like division",
    [
      [
        "const hits: string[] = [];\nouter: for (let i = 0; i < 3; i++) {\n  for (let j = 0; j < 3; j++) {\n    if (j === 1) continue outer;\n    if (i === 2) break outer;\n    hits.push(`${i}${j}`);\n  }\n}\nhits",
        v(["00", "10"]),
      ],
      ["const a1 = 10, b1 = 2, g = 1;\na1 / b1 / g", v(5)],
      ["'x/y/z'.replace(/\\//g, '-') + (a1 / 2) + /[/]/.test('a/b')", v("x-y-z5true")],
    ],
  ],
  [
    "template literals and tagged templates naming earlier names",
    [
      ["const who = 'world';\nconst tag = (s: TemplateStringsArray, ...v: unknown[]) => s.raw.join('|') + v.length;", none],
      ["`hello ${who.toUpperCase()} ${`nested ${who}`}`", v("hello WORLD nested world")],
      ["tag`a${who}b${who}c`", v("a|b|c2")],
    ],
  ],
  [
    "export keywords in a cell",
    [
      [
        "export const ex = 1;\nexport function exf() { return ex + 1; }\nexport class ExC { v = 3; }\nexport interface ExI { a: number }\nexport enum ExE { Q = 4 }\nexport { ex as exAlias };",
        none,
      ],
      ["const ei: ExI = { a: exf() };\n[ei.a, new ExC().v, ExE.Q]", v([2, 3, 4])],
      ["export default 42;", none],
    ],
  ],
  [
    "default parameters referring to earlier cells; shadowing inside blocks",
    [
      ["const base = 10;\nconst s = 'outer';", none],
      ["function add(x: number, y = base) { return x + y; }", none],
      ["add(1)", v(11)],
      ["{\n  const s = 'inner';\n  console.log(s);\n}\nconst shadow = ((s: number) => s + 1)(1);\n[s, shadow]", v(["outer", 2], { stdout: "inner\n" })],
      ["function param(base: number) { return base * 2; }\nconst mapped = [1, 2].map((base) => base + 1);\n[param(4), mapped, base]", v([8, [2, 3], 10])],
      ["let z9 = 1;\n({ z9 = 3 } = {} as { z9?: number });\nfor (z9 of [7]) {}\nz9", v(7)],
      ["const name = 'mine';", none],
      ["name", v("mine")],
    ],
  ],
  [
    "getters and setters, function hoisting, recursion, bigint",
    [
      ["const o = { _v: 1, get v() { return this._v; }, set v(x: number) { this._v = x * 2; } };", none],
      ["o.v = 5;\no.v", v(10)],
      ["const hv = hoisted();\nfunction hoisted() { return 'h'; }", none],
      ["hv", v("h")],
      ["function fib(n: number): number { return n < 2 ? n : fib(n - 1) + fib(n - 2); }", none],
      ["fib(15)", v(610)],
      ["2n ** 70n", v(2n ** 70n)],
    ],
  ],
  [
    "the last value: expressions only, awaited only when the user awaits",
    [
      ["1 + 2", v(3)],
      ["5;;", v(5)],
      ["const nv = 1;", none],
      ["undefined", v(undefined)],
      ["({ a: 1 })", v({ a: 1 })],
      ["if (true) { 1; }", none],
      ["await Promise.resolve('awaited')", v("awaited")],
      ["typeof this", v("undefined")],
    ],
  ],
  [
    "strict mode, like a module",
    [
      ["const frozen: { a: number } = Object.freeze({ a: 1 });", none],
      ["frozen.a = 2;", err("TypeError", /read only property 'a'/)],
      [
        "function who(this: unknown) { return this === undefined; }\nconst tag2 = function (this: unknown, ..._parts: unknown[]) { return this === undefined; };",
        none,
      ],
      ["[who(), tag2`x`]", v([true, true])],
      ["(function (this: unknown) { return this; })()", v(undefined)],
    ],
  ],
  [
    "console, stdout and stderr go to the cell's streams",
    [
      [
        "console.log('a', 1, { b: [2] });\nconsole.error('e');\nprocess.stdout.write('w');\nconsole.info('i');",
        { stdout: "a 1 { b: [ 2 ] }\nwi\n", stderr: "e\n" },
      ],
      ["console.table([{ x: 1 }]);", { stdout: "┌─────────┬───┐\n│ (index) │ x │\n├─────────┼───┤\n│ 0       │ 1 │\n└─────────┴───┘\n" }],
    ],
  ],
  [
    "type errors: tsc's format, the cell's line and column, nothing runs, nothing is declared",
    [
      ["let num: number = 1;\nnum = 'str';", err("CompileError", "cell 1, line 2:1 - error TS2322: Type 'string' is not assignable to type 'number'.")],
      ["console.log('ran');\nconst t1 = 1;\nconst t2: string = 2;", { ...err("CompileError", /^cell 2, line 3:7 - error TS2322/), stdout: "" }],
      ["t1", err("CompileError", "cell 3, line 1:1 - error TS2304: Cannot find name 't1'.")],
      ["const c1 = 1;", none],
      ["c1 = 2;", err("CompileError", "cell 5, line 1:1 - error TS2588: Cannot assign to 'c1' because it is a constant.")],
      ["const = 1", err("SyntaxError", /^cell 6, line 1:7 - error TS1134/)],
      ["function fn(a) { return a; }", err("CompileError", /TS7006: Parameter 'a' implicitly has an 'any' type/)],
    ],
  ],
  [
    "runtime errors point at the cell and line the user wrote",
    [
      ["function check(n: number) {\n  if (n < 0) {\n    throw new RangeError('negative: ' + n);\n  }\n  return n;\n}", none],
      [
        "const ok1 = check(1);\ncheck(-1);",
        err("RangeError", "negative: -1", [
          "RangeError: negative: -1",
          "    at check (cell 1, line 3:11)",
          "    at cell 2, line 2:1",
          "cell 1, line 3:11:",
          "        throw new RangeError('negative: ' + n);",
        ]),
      ],
      ["const u1: any = undefined;\n\nconst z1 = u1.x;", err("TypeError", /reading 'x'/, ["    at cell 3, line 3:15"])],
      ["async function failLater() {\n  await null;\n  throw new Error('late');\n}", none],
      ["await failLater();", err("Error", "late", ["    at failLater (cell 4, line 3:9)", /^ {4}at cell 5, line 1:/])],
      ["throw 'a string';", err("Uncaught", "a string")],
      ["ok1", v(1)],
    ],
  ],
  [
    "classes re-declared: instances of the old class stay instances of the old one",
    [
      ["class V { a = 1; }\nconst v1 = new V();", none],
      ["class V { a = 2; }", none],
      ["[v1 instanceof V, new V().a, v1.a]", v([false, 2, 1])],
    ],
  ],
  [
    "earlier names in extends with type arguments, optional calls, new, computed keys, getters, decorators",
    [
      ["class Box<T> { constructor(public v: T) {} }\nlet fn: (() => number) | undefined = () => 1;\nconst key = 'k';", none],
      [
        "class NB extends Box<number> { double() { return this.v * 2; } }\n[new NB(2).double(), fn?.(), new Box('s').v, { [key]: 1 }]",
        v([4, 1, "s", { k: 1 }]),
      ],
      ["const withGetter = { get k2() { return key + '2'; } };\nwithGetter.k2", v("k2")],
      ["function dec<T>(value: T, _context: ClassDecoratorContext) { return value; }\n@dec class Decorated {}\nnew Decorated() instanceof Decorated", v(true)],
    ],
  ],
  [
    "declare global in one cell, used by later cells; an untyped let read in a later cell",
    [
      ["declare global { var shared: number }\nglobalThis.shared = 4;\nshared", v(4)],
      ["shared + 1", v(5)],
      ["let untyped;\nuntyped = 3;", v(3)],
      ["untyped", v(3)],
    ],
  ],
  ["kernel globals: input and require", [["[typeof input, typeof require]", v(["function", "function"])]]],
];

/** The strings a traceback must never show: generated names and vm's file names. */
const GENERATED = /evalmachine|\$rbp\$|__rbp_|tsLastExpr|exports\./;

function check(outcome: ExecuteOutcome, expectation: Expect, code: string): void {
  const where = `cell ${JSON.stringify(code)} gave ${JSON.stringify(outcome, (_, x: unknown) => (typeof x === "bigint" ? `${x}n` : x))}`;
  if (expectation.error) {
    expect(outcome.status, where).toBe("error");
    if (outcome.status !== "error") return;
    expect(outcome.ename, where).toBe(expectation.error);
    if (typeof expectation.evalue === "string") expect(outcome.evalue, where).toBe(expectation.evalue);
    else if (expectation.evalue) expect(outcome.evalue, where).toMatch(expectation.evalue);
    for (const line of expectation.traceback ?? []) {
      if (typeof line === "string") expect(outcome.traceback, where).toContain(line);
      else
        expect(
          outcome.traceback.some((l) => line.test(l)),
          where,
        ).toBe(true);
    }
    expect(outcome.traceback.join("\n"), where).not.toMatch(GENERATED);
    return;
  }
  expect(outcome.status, where).toBe("ok");
  if (outcome.status !== "ok") return;
  if (expectation.none) expect(outcome.value, where).toBeUndefined();
  if ("value" in expectation) {
    expect(outcome.value, where).toBeDefined();
    expect(outcome.value?.value, where).toEqual(expectation.value);
  }
}

describe("TypeScript as written, across cells", () => {
  const sessions: Session[] = [];
  afterAll(async () => {
    for (const s of sessions) await s.dispose();
  });

  for (const [name, cells] of CASES) {
    it(
      name,
      async () => {
        const session = new Session();
        sessions.push(session);
        try {
          for (const [code, expectation] of cells) {
            const run = await session.run(code);
            check(run.outcome, expectation, code);
            if (expectation.stdout !== undefined) expect(run.stdout, code).toBe(expectation.stdout);
            if (expectation.stderr !== undefined) expect(run.stderr, code).toBe(expectation.stderr);
          }
        } finally {
          await session.dispose();
        }
      },
      60_000,
    );
  }
});
