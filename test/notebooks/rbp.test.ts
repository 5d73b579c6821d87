/**
 * The walkthrough notebooks under the rbp kernel (`rbp kernel install --kind rbp`, the project's
 * own TypeScript kernel): its kernelspec written into the project-local JUPYTER_PATH, each
 * notebook executed by nbconvert, then the same checks as under tslab: no error and no stderr
 * output, the manifest's tables, charts and strings, and the HTML export in Chromium with every
 * chart drawn. The executed notebook records the rbp kernel's language_info (the project's
 * TypeScript).
 *
 * Without jupyter or Chromium the tests are skipped with the reason printed; when CI is set a
 * missing tool fails instead. `npx tsx scripts/notebooks/run.ts --kernel rbp` runs the same.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { executedPath, findTools, installRbpKernelspec, linkPackage, notebookNames, readNotebook, browserCheck, ROOT } from "../../scripts/notebooks/lib.js";
import { IN_CI } from "../ci.js";
import { executeWalkthroughs, type Walkthroughs, stderrDigest } from "./walkthroughs.js";

const names = notebookNames();
const tools = findTools();
const ready = tools.missing.length === 0;
const TYPESCRIPT = (JSON.parse(readFileSync(join(ROOT, "node_modules", "typescript", "package.json"), "utf8")) as { version: string }).version;

if (!ready && !IN_CI) console.warn(`[test/notebooks/rbp] SKIPPED the notebooks under the rbp kernel: ${tools.missing.join("; ")}.`);

// In CI a missing tool is a failure, not a skip.
if (!ready && IN_CI) {
  describe("walkthrough notebooks under the rbp kernel in CI", () => {
    it("have jupyter nbconvert and Chromium to run with", () => {
      expect.fail(`CI is set, so the notebooks must run under the rbp kernel: ${tools.missing.join("; ")}`);
    });
  });
}

describe.runIf(ready)("walkthrough notebooks under the rbp kernel", () => {
  let runs: Walkthroughs | undefined;

  beforeAll(() => {
    linkPackage();
    installRbpKernelspec();
    runs = executeWalkthroughs(names, "rbp");
  }, 120_000);

  afterAll(() => runs?.stop(), 60_000);

  it.each(names)(
    "%s: every output present, every chart drawn",
    async (name) => {
      const { run, check, exercises, html } = await runs!.executed(name);
      expect(run.code, `jupyter nbconvert (rbp): ${stderrDigest(run.stderr)}`).toBe(0);
      const nb = readNotebook(executedPath(name, "rbp"));
      // The rbp kernel ran it: the notebook records its language_info (the project's TypeScript).
      expect((nb.metadata.language_info as { version?: string } | undefined)?.version).toBe(TYPESCRIPT);
      expect(check!.problems, `test-output/notebooks/rbp/${name}.ipynb`).toEqual([]);
      expect(check!.errors).toBe(0);
      expect(exercises, `the exercises of ${name} under the rbp kernel`).toEqual([]);
      expect(html!.run.code, `jupyter nbconvert --to html: ${html!.run.stderr}`).toBe(0);
      const page = await browserCheck(await runs!.browser(), html!.path, `rbp-${name}`, check!.figures);
      expect(page.problems, `${name}.html (rbp) in Chromium`).toEqual([]);
      expect(page.figures).toHaveLength(check!.figures);
      for (const f of page.figures) expect(f.svg + f.canvas, `${f.title} drew`).toBeGreaterThan(0);
    },
    15 * 60_000,
  );
});
