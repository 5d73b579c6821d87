/**
 * The walkthroughs executed under one kernel, as notebooks.test.ts (tslab) and deno.test.ts (Deno)
 * both need them: each notebook executed by nbconvert (as committed, and with its solutions when
 * asked), a few at a time from the start, then checked against its manifest and its exercises and
 * exported to HTML; and one Chromium for the pages' checks.
 */
import { existsSync } from "node:fs";
import {
  checkExecuted,
  checkExercises,
  defaultConcurrency,
  executedPath,
  executeNotebook,
  expectationOf,
  exportHtml,
  openBrowser,
  pool,
  readNotebook,
  type Browser,
  type CheckReport,
  type NotebookKernel,
  type Variant,
  type Run,
} from "../../scripts/notebooks/lib.js";

/** One notebook's execution: nbconvert's run, and when it wrote the notebook, the check and the HTML export. */
export interface Executed {
  run: Run;
  check?: CheckReport;
  /** Problems of its exercises and checks (checkExercises). */
  exercises?: string[];
  html?: { run: Run; path: string };
}

export interface Walkthroughs {
  /** The execution of `name` as committed or solved (started at once; awaited by its test). */
  executed(name: string, variant?: Variant): Promise<Executed>;
  browser(): Promise<Browser>;
  /** Waits for every execution, then closes the browser. */
  stop(): Promise<void>;
}

/**
 * Starts executing `names` under `kernel` (its kernelspec already written) and opens a browser.
 *
 * @example
 * const runs = executeWalkthroughs(notebookNames(), "deno");
 * const { run, check, html } = await runs.executed("04-grid");
 */
export function executeWalkthroughs(names: string[], kernel: NotebookKernel = "tslab", variants: Variant[] = ["blank"]): Walkthroughs {
  const jobs = variants.flatMap((variant) => names.map((name) => ({ name, variant })));
  const tasks = pool(
    defaultConcurrency(),
    jobs.map(({ name, variant }) => async (): Promise<Executed> => {
      const run = await executeNotebook(name, undefined, kernel, variant);
      const path = executedPath(name, kernel, variant);
      if (run.code !== 0 || !existsSync(path)) return { run };
      const nb = readNotebook(path);
      const check = checkExecuted(nb, expectationOf(name));
      const html = await exportHtml(name, kernel, variant);
      return { run, check, exercises: checkExercises(nb, variant), html };
    }),
  );
  const executions = new Map(jobs.map(({ name, variant }, i) => [`${variant}:${name}`, tasks[i]]));
  for (const task of tasks) task.catch(() => {}); // awaited by its test
  const browser = openBrowser();
  browser.catch(() => {});
  return {
    executed: (name, variant = "blank") => {
      const task = executions.get(`${variant}:${name}`);
      if (task === undefined) throw new Error(`${name} (${variant}) was not started`);
      return task;
    },
    browser: () => browser,
    async stop() {
      await Promise.allSettled(tasks);
      await (await browser.catch(() => undefined))?.close();
    },
  };
}

/**
 * What a failed nbconvert run said, short enough for an assertion message: its first 10 lines (where
 * a kernel that died at start-up says why, before nbclient's traceback) and its last 15.
 */
export function stderrDigest(stderr: string): string {
  const lines = stderr.split("\n");
  return lines.length <= 25 ? stderr : [...lines.slice(0, 10), "...", ...lines.slice(-15)].join("\n");
}
