/** Type checking of cells against the earlier ones, and tsc's format for diagnostics. */
import os from "node:os";
import { afterAll, describe, expect, it } from "vitest";
import { CellChecker, formatDiagnostic, type CheckedCell } from "../../src/kernel/check.js";
import { LANG_FIXTURES } from "./lang-session.js";

const checker = new CellChecker(LANG_FIXTURES);
afterAll(() => checker.dispose());

/** Checks a cell, commits it when it has no error, and gives its diagnostics as tsc prints them. */
function cell(code: string, label = "cell 1"): string[] {
  const checked: CheckedCell = checker.check(code);
  if (!checked.diagnostics.some((d) => d.category === "error")) checker.commit(checked);
  return checked.diagnostics.map((d) => formatDiagnostic(d, label));
}

describe("CellChecker", { timeout: 60_000 }, () => {
  it("prints diagnostics as tsc does, with the cell for the file", () => {
    expect(cell("let n: number = 1;\nn = 'x';", "cell 3")).toEqual(["cell 3, line 2:1 - error TS2322: Type 'string' is not assignable to type 'number'."]);
    expect(cell("const = 1", "cell 4")[0]).toBe("cell 4, line 1:7 - error TS1134: Variable declaration expected.");
    const syntax = checker.check("const = 1");
    expect(syntax.diagnostics[0].syntactic).toBe(true);
  });

  it("sees the declarations of committed cells, not of cells with errors", () => {
    expect(cell("const seen = 1;\ninterface Seen { a: number }\ntype Alias = Seen[];")).toEqual([]);
    expect(cell("const list: Alias = [{ a: seen }];")).toEqual([]);
    expect(cell("const unseen = 1;\nconst broken: string = 1;")).toHaveLength(1);
    expect(cell("unseen")).toEqual(["cell 1, line 1:1 - error TS2552: Cannot find name 'unseen'. Did you mean 'seen'?"]);
    expect(cell("notDeclaredAnywhere")).toEqual(["cell 1, line 1:1 - error TS2304: Cannot find name 'notDeclaredAnywhere'."]);
  });

  it("lets a later cell declare a name again (no redeclaration error), with its new type", () => {
    expect(cell("const again = 1;")).toEqual([]);
    expect(cell("const again = 'text';")).toEqual([]);
    expect(cell("const len: number = again.length;")).toEqual([]);
    expect(cell("const wrong: number = again;")).toEqual(["cell 1, line 1:7 - error TS2322: Type 'string' is not assignable to type 'number'."]);
  });

  it("lets a later cell assign a let or var of an earlier one, not a const", () => {
    expect(cell("let mutable = 1;\nvar old = 'a';\nconst fixed = 1;")).toEqual([]);
    expect(cell("mutable = 2;\nmutable++;\nold += 'b';\n[mutable] = [3];")).toEqual([]);
    expect(cell("fixed = 2;")).toEqual(["cell 1, line 1:1 - error TS2588: Cannot assign to 'fixed' because it is a constant."]);
    expect(cell("let narrowed: number | undefined;")).toEqual([]);
    expect(cell("narrowed = 1;\nconst sure: number = narrowed;")).toEqual([]);
    expect(cell("mutable = 'text';")).toEqual(["cell 1, line 1:1 - error TS2322: Type 'string' is not assignable to type 'number'."]);
  });

  it("resolves imports from the kernel's folder", () => {
    expect(cell("import { double } from './util.js';\nconst d: number = double(2);")).toEqual([]);
    const elsewhere = new CellChecker(os.tmpdir());
    try {
      const checked = elsewhere.check("import { double } from './util.js';");
      expect(checked.diagnostics.map((d) => d.code)).toEqual([2307]);
    } finally {
      elsewhere.dispose();
    }
  });

  it("allows top-level await, for await and using in every cell", () => {
    expect(cell("await Promise.resolve(1);\nfor await (const x of [1]) x;\n{ using r = { [Symbol.dispose]() {} }; }")).toEqual([]);
  });
});

describe("CellChecker's results of cells run again", { timeout: 60_000 }, () => {
  it("gives the same result for the same cell and earlier names, and a new one when a name changes", () => {
    const again = new CellChecker(LANG_FIXTURES);
    try {
      again.commit(again.check("const v = 1;"));
      const first = again.check("const w: number = v;");
      const second = again.check("const w: number = v;");
      expect(second.diagnostics).toEqual(first.diagnostics);
      expect(second.references).toEqual(first.references);
      expect(second.fileName).not.toBe(first.fileName);
      again.commit(again.check("const v = 'now text';"));
      expect(again.check("const w: number = v;").diagnostics.map((d) => d.code)).toEqual([2322]);
    } finally {
      again.dispose();
    }
  });
});
