/**
 * The walkthrough notebooks (notebooks/NN-*.ipynb), executed as a user's Jupyter would run them:
 * the tslab kernelspec written by `rbp kernel install` into the project-local JUPYTER_PATH,
 * `jupyter nbconvert --to notebook --execute` into test-output/notebooks/ (the sources are never
 * rewritten), no error and no stderr output, the expected tables, charts and strings of
 * scripts/notebooks/manifest.ts, then `jupyter nbconvert --to html` and Chromium: every chart drew,
 * no page error, screenshots in test-output/screenshots/notebooks/. One test per notebook; the
 * executions run two at a time from the start (RBP_NOTEBOOK_CONCURRENCY), the browser checks one
 * at a time.
 *
 * Without jupyter nbconvert or Chromium the executed tests are skipped with the reason printed;
 * when CI is set, a missing tool fails instead. Run alone with `npm run test:notebooks`, or
 * `npx tsx scripts/notebooks/run.ts [NAME ...]` for a summary without vitest.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  browserCheck,
  checkExecuted,
  checkExercises,
  checkSource,
  executedPath,
  executeNotebook,
  findTools,
  installKernelspec,
  linkPackage,
  NOTEBOOK_DIR,
  notebookNames,
  readNotebook,
  solutionsOf,
  solvedNotebook,
  tagsOf,
  type Notebook,
} from "../../scripts/notebooks/lib.js";
import { EXPECTATIONS } from "../../scripts/notebooks/manifest.js";
import { IN_CI } from "../ci.js";
import { executeWalkthroughs, type Walkthroughs, stderrDigest } from "./walkthroughs.js";

const names = notebookNames();

describe("walkthrough notebooks, as committed", () => {
  it("are listed in the manifest, and every manifest entry is a notebook", () => {
    expect(names.length).toBeGreaterThanOrEqual(9);
    expect(Object.keys(EXPECTATIONS).sort()).toEqual(names);
  });

  it.each(names)("%s: nbformat 4.5 with cell ids, the rbp-tslab kernel, prose, no outputs", (name) => {
    const nb = readNotebook(join(NOTEBOOK_DIR, `${name}.ipynb`));
    expect(checkSource(nb)).toEqual([]);
    const code = nb.cells.filter((c) => c.cell_type === "code").map((c) => (Array.isArray(c.source) ? c.source.join("") : c.source));
    expect(code.join("\n")).toContain('from "rbp-notebook"');
  });

  it.each(names)("%s: at least two exercises, each with a check, solved in notebooks/solutions/; no console.log", (name) => {
    const nb = readNotebook(join(NOTEBOOK_DIR, `${name}.ipynb`));
    const exercises = nb.cells.filter((c) => tagsOf(c).includes("exercise"));
    expect(exercises.length).toBeGreaterThanOrEqual(2);
    const solutions = solutionsOf(name);
    expect(solutions, `notebooks/solutions/${name}.json`).toBeDefined();
    expect(() => solvedNotebook(nb, solutions!)).not.toThrow();
    // Deno's kernel loses plain stdout at random: the lesson goes through display, never console.log.
    const code = nb.cells.filter((c) => c.cell_type === "code").map((c) => (Array.isArray(c.source) ? c.source.join("") : c.source));
    expect(code.filter((c) => /console\.(log|info|table)\(/.test(c)).map((c) => c.split("\n")[0])).toEqual([]);
    // Every notebook links the glossary.
    const prose = nb.cells.filter((c) => c.cell_type === "markdown").map((c) => (Array.isArray(c.source) ? c.source.join("") : c.source));
    expect(prose.join("\n")).toContain("../docs/glossary.md");
  });
});

/** A notebook of code cells with the given outputs (what nbconvert writes), for the checks. */
function executed(cells: Array<{ source: string; outputs: unknown[] }>): Notebook {
  return {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: { kernelspec: { name: "rbp-tslab", display_name: "TypeScript (tslab)", language: "typescript" } },
    cells: cells.map((c, i) => ({ id: `c${i}`, cell_type: "code", source: c.source, execution_count: null, metadata: {}, outputs: c.outputs as never })),
  };
}

const chart = { output_type: "display_data", data: { "application/vnd.plotly.v1+json": { data: [], layout: {} }, "text/html": "<div></div>", "text/plain": "<Figure: f (bar)>" }, metadata: {} };
const table = { output_type: "display_data", data: { "text/html": "<table><tr><td>1</td></tr></table>", "text/plain": "t" }, metadata: {} };

describe("the checks of an executed notebook", () => {
  const expectation = { about: "", charts: 1, tables: 1, strings: ["yhat 3.2", /fit 0\.\d+/] };

  it("pass a notebook with its charts, tables and strings", () => {
    const nb = executed([{ source: "p.show()", outputs: [table, chart, { output_type: "stream", name: "stdout", text: ["yhat 3.25, ", "fit 0.08\n"] }] }]);
    const r = checkExecuted(nb, expectation);
    expect(r.problems).toEqual([]);
    expect(r).toMatchObject({ charts: 1, tables: 1, errors: 0, codeCells: 1 });
  });

  it("fail on an error output, on stderr, and on missing charts, tables or strings", () => {
    const nb = executed([
      { source: "boom()", outputs: [{ output_type: "error", ename: "ReferenceError", evalue: "boom is not defined", traceback: [] }] },
      { source: 'const x: number = "s";', outputs: [{ output_type: "stream", name: "stderr", text: "1:7 - Type 'string' is not assignable to type 'number'.\n" }] },
    ]);
    const r = checkExecuted(nb, expectation);
    expect(r.errors).toBe(1);
    expect(r.problems.join("\n")).toMatch(/cell 1 \(c0\) "boom\(\)" has an error output: ReferenceError: boom is not defined/);
    expect(r.problems.join("\n")).toMatch(/cell 2 .* wrote to stderr: 1:7 - Type 'string'/);
    expect(r.problems).toContain("expected at least 1 plotly charts, found 0");
    expect(r.problems).toContain("expected at least 1 HTML tables, found 0");
    expect(r.problems).toContain('expected the outputs to contain "yhat 3.2"');
  });

  it("check the prose's quotes: in a markdown cell and in an output", () => {
    const nb = executed([{ source: "await show()", outputs: [table, chart, { output_type: "display_data", data: { "text/html": "<p>17 of 34 kept</p>", "text/plain": "17 of 34 kept" } }] }]);
    nb.cells.push({ id: "md", cell_type: "markdown", metadata: {}, source: "The PSR keeps 17 of 34 cars, ŷ 20.48." });
    const r = checkExecuted(nb, { ...expectation, strings: [], quotes: ["17 of 34", "20.48", "ŷ 3.1"] });
    expect(r.problems).toEqual(['the prose quotes "20.48", which no output shows', 'the manifest lists the quote "ŷ 3.1", which no markdown cell has']);
  });

  it("check exercises: each followed by a check; blank says not yet, solved says right", () => {
    const verdict = (state: string) => ({ output_type: "display_data", data: { "text/html": `<div class="rbp-check" data-rbp-check="${state}">…</div>`, "text/plain": state }, metadata: {} });
    const nb = executed([
      { source: "const a = undefined;", outputs: [] },
      { source: "check(a)", outputs: [verdict("not-yet")] },
      { source: "const b = undefined;", outputs: [] },
      { source: "check(b)", outputs: [verdict("not-yet"), verdict("not-yet")] },
    ]);
    nb.cells.forEach((c, i) => (c.metadata = { tags: [i % 2 === 0 ? "exercise" : "check"] }));
    expect(checkExercises(nb, "blank")).toEqual([]);
    expect(checkExercises(nb, "solved").join("\n")).toMatch(/cell 2 \(c1\) "check\(a\)" \(check\) says "not yet" to the solution/);
    expect(checkExecuted(nb, { about: "", charts: 0, tables: 0 }).verdicts).toEqual({ right: 0, notYet: 3 });
    nb.cells[3].outputs = [verdict("right"), verdict("right")];
    expect(checkExercises(nb, "blank")).toEqual([`cell 4 (c3) "check(b)" (check) says "right" to a blank exercise`]);
    nb.cells[1].outputs = [];
    nb.cells[3].metadata = {};
    expect(checkExercises(nb, "solved", 3)).toEqual([
      "expected at least 3 cells tagged exercise, found 2",
      `cell 2 (c1) "check(a)" (check) showed no verdict`,
      `cell 3 (c2) "const b = undefined;" (exercise) has no cell tagged check after it`,
    ]);
  });

  it("substitute the solutions for the exercise cells, and refuse solutions that do not match", () => {
    const nb = executed([{ source: "const a = undefined;", outputs: [] }, { source: "check(a)", outputs: [] }]);
    nb.cells[0].metadata = { tags: ["exercise"] };
    expect(solvedNotebook(nb, { c0: "const a = 1;" }).cells.map((c) => c.source)).toEqual(["const a = 1;", "check(a)"]);
    expect(nb.cells[0].source).toBe("const a = undefined;");
    expect(() => solvedNotebook(nb, {})).toThrow("no solution for c0");
    expect(() => solvedNotebook(nb, { c0: "", c1: "x" })).toThrow("c1 is no exercise cell");
  });

  it("read consecutive writes to one stream as one text (Deno sends each console.log apart)", () => {
    const nb = executed([
      { source: "log()", outputs: [table, chart, { output_type: "stream", name: "stdout", text: "yhat 3.2\n" }, { output_type: "stream", name: "stdout", text: "fit 0.1\n" }] },
    ]);
    expect(checkExecuted(nb, { ...expectation, strings: [/yhat 3\.2\nfit 0\.1\n/] }).problems).toEqual([]);
  });

  it("accept the stderr lines a notebook declares", () => {
    const nb = executed([{ source: "warn()", outputs: [table, chart, { output_type: "stream", name: "stderr", text: "note: expected\n" }, { output_type: "stream", name: "stdout", text: "yhat 3.2 fit 0.1" }] }]);
    expect(checkExecuted(nb, { ...expectation, stderr: ["note: expected"] }).problems).toEqual([]);
  });

  it("fail a committed notebook with outputs, without ids or with another kernel", () => {
    const nb = executed([{ source: "1", outputs: [table] }]);
    nb.cells.push({ cell_type: "code", source: "2", execution_count: 3, outputs: [] });
    nb.metadata.kernelspec = { name: "python3", language: "python" };
    const problems = checkSource(nb).join("\n");
    expect(problems).toMatch(/has outputs/);
    expect(problems).toMatch(/cell 2 has no valid id/);
    expect(problems).toMatch(/execution count/);
    expect(problems).toMatch(/expected name rbp-tslab/);
    expect(problems).toMatch(/no prose/);
  });
});

const tools = findTools();
const ready = tools.jupyter && tools.chromium;
if (!ready && !IN_CI) {
  console.warn(`[test/notebooks] SKIPPED executing the notebooks: ${tools.missing.join("; ")}. Then run npm run test:notebooks.`);
}

// In CI a missing tool is a failure, not a skip (registered only then, so a normal run has no skipped test).
if (!ready && IN_CI) {
  describe("walkthrough notebooks in CI", () => {
    it("have jupyter nbconvert and Chromium to run with", () => {
      expect.fail(`CI is set, so the notebooks must run: ${tools.missing.join("; ")}`);
    });
  });
}


describe.runIf(ready)("walkthrough notebooks, executed", () => {
  let runs: Walkthroughs | undefined;

  beforeAll(() => {
    linkPackage();
    installKernelspec();
    runs = executeWalkthroughs(names, "tslab", ["blank", "solved"]);
  }, 120_000);

  afterAll(() => runs?.stop(), 60_000);

  it("fail a notebook whose cell does not compile or throws (tslab writes both to stderr)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rbp-nb-broken-"));
    try {
      const nb = executed([{ source: "const ok = 1 + 1;\nok", outputs: [] }, { source: 'const n: number = "text";', outputs: [] }]);
      nb.cells.unshift({ id: "md", cell_type: "markdown", metadata: {}, source: "# broken" });
      writeFileSync(join(dir, "broken.ipynb"), JSON.stringify(nb));
      const run = await executeNotebook("zz-broken-fixture", join(dir, "broken.ipynb"));
      expect(run.code, run.stderr).toBe(0); // --allow-errors: the notebook is written, the check judges it
      const r = checkExecuted(readNotebook(executedPath("zz-broken-fixture")), { about: "", charts: 0, tables: 0, strings: ["2"] });
      expect(r.problems.join("\n")).toMatch(/wrote to stderr: 1:7 - Type 'string' is not assignable to type 'number'/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(executedPath("zz-broken-fixture"), { force: true });
    }
  }, 120_000);

  it.each(names.flatMap((name) => [[name, "blank"], [name, "solved"]] as Array<[string, "blank" | "solved"]>))(
    "%s (%s) executes without an error, shows its tables and charts, and its checks say what they should",
    async (name, variant) => {
      const { run, check, exercises, html } = await runs!.executed(name, variant);
      expect(run.code, `jupyter nbconvert --execute: ${stderrDigest(run.stderr)}`).toBe(0);
      expect(check!.problems, `notebooks/${name}.ipynb (${variant})`).toEqual([]);
      expect(exercises, `the exercises of ${name} (${variant})`).toEqual([]);
      expect(variant === "blank" ? check!.verdicts.right : check!.verdicts.notYet).toBe(0);
      expect(variant === "blank" ? check!.verdicts.notYet : check!.verdicts.right).toBeGreaterThanOrEqual(2);
      expect(check!.errors).toBe(0);
      expect(html!.run.code, `jupyter nbconvert --to html: ${html!.run.stderr}`).toBe(0);
      const page = await browserCheck(await runs!.browser(), html!.path, variant === "solved" ? `solved-${name}` : name, check!.figures);
      expect(page.problems, `${name}.html in Chromium`).toEqual([]);
      expect(page.figures).toHaveLength(check!.figures);
      for (const f of page.figures) expect(f.svg + f.canvas, `${f.title} drew`).toBeGreaterThan(0);
      expect(page.screenshots.length).toBe(check!.figures + 1);
    },
    15 * 60_000,
  );
});
