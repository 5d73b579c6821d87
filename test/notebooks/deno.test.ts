/**
 * The walkthrough notebooks under Deno's own Jupyter kernel (Deno 2.9.6, the npm package `deno`,
 * installed by scripts/install-deno.sh into .tools/deno): its kernelspec written into the
 * project-local JUPYTER_PATH, each notebook executed by plain `jupyter nbconvert --execute` (what
 * a Deno user's front end receives: nothing read past a cell's idle status), then the same checks
 * as under tslab: no error and no stderr output, every table, chart, string and quote of the
 * manifest present, every check saying "not yet" to the blank exercises, and the HTML export in
 * Chromium with every chart drawn.
 *
 * Without jupyter, Chromium or deno the tests are skipped with the reason printed; when CI is set
 * a missing tool fails instead. `npx tsx scripts/notebooks/run.ts --kernel deno` runs the same.
 */
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  browserCheck,
  denoBinary,
  executedPath,
  findTools,
  installDenoKernelspec,
  linkPackage,
  notebookNames,
  readNotebook,
} from "../../scripts/notebooks/lib.js";
import { IN_CI } from "../ci.js";
import { executeWalkthroughs, type Walkthroughs, stderrDigest } from "./walkthroughs.js";

const names = notebookNames();
const tools = findTools();
const deno = denoBinary();
const missing = [...tools.missing, ...(deno === undefined ? ["no deno binary (bash scripts/install-deno.sh, or RBP_DENO)"] : [])];
const ready = missing.length === 0;
/** The TypeScript version Deno reports (`deno --version`), which its kernel_info names. */
const denoTypeScript = deno === undefined ? undefined : /typescript (\S+)/.exec(spawnSync(deno, ["--version"], { encoding: "utf8" }).stdout)?.[1];

if (!ready && !IN_CI) console.warn(`[test/notebooks/deno] SKIPPED the notebooks under Deno: ${missing.join("; ")}.`);

// In CI a missing tool is a failure, not a skip.
if (!ready && IN_CI) {
  describe("walkthrough notebooks under Deno in CI", () => {
    it("have jupyter nbconvert, Chromium and deno to run with", () => {
      expect.fail(`CI is set, so the notebooks must run under Deno: ${missing.join("; ")}`);
    });
  });
}


describe.runIf(ready)("walkthrough notebooks under Deno's kernel", () => {
  let runs: Walkthroughs | undefined;

  beforeAll(() => {
    linkPackage();
    installDenoKernelspec(deno);
    runs = executeWalkthroughs(names, "deno");
  }, 120_000);

  afterAll(() => runs?.stop(), 60_000);

  it.each(names)(
    "%s: every table, chart and check present under plain nbconvert, every chart drawn",
    async (name) => {
      const { run, check, exercises, html } = await runs!.executed(name);
      expect(run.code, `jupyter nbconvert (Deno): ${stderrDigest(run.stderr)}`).toBe(0);
      const nb = readNotebook(executedPath(name, "deno"));
      // Deno's kernel ran it: the notebook records the kernel's language_info (Deno's TypeScript), not tslab's.
      expect((nb.metadata.language_info as { version?: string } | undefined)?.version).toBe(denoTypeScript);
      expect(check!.problems, `test-output/notebooks/deno/${name}.ipynb`).toEqual([]);
      expect(check!.errors).toBe(0);
      expect(exercises, `the exercises of ${name} under Deno`).toEqual([]);
      expect(html!.run.code, `jupyter nbconvert --to html: ${html!.run.stderr}`).toBe(0);
      const page = await browserCheck(await runs!.browser(), html!.path, `deno-${name}`, check!.figures);
      expect(page.problems, `${name}.html (Deno) in Chromium`).toEqual([]);
      expect(page.figures).toHaveLength(check!.figures);
      for (const f of page.figures) expect(f.svg + f.canvas, `${f.title} drew`).toBeGreaterThan(0);
    },
    15 * 60_000,
  );
});
