/**
 * The walkthroughs executed under one kernel, as notebooks.test.ts (tslab) and deno.test.ts (Deno)
 * both need them: each notebook executed by nbconvert, a few at a time from the start, then
 * checked against its manifest and exported to HTML; and one Chromium for the pages' checks.
 */
import { existsSync } from "node:fs";
import {
  checkExecuted,
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
  type Run,
} from "../../scripts/notebooks/lib.js";

/** One notebook's execution: nbconvert's run, and when it wrote the notebook, the check and the HTML export. */
export interface Executed {
  run: Run;
  check?: CheckReport;
  html?: { run: Run; path: string };
}

export interface Walkthroughs {
  /** The execution of `name` (started at once; awaited by its test). */
  executed(name: string): Promise<Executed>;
  browser(): Promise<Browser>;
  /** Waits for every execution, then closes the browser. */
  stop(): Promise<void>;
}

/**
 * Starts executing `names` under `kernel` (its kernelspec already written) and opens a browser.
 *
 * @example
 * const runs = executeWalkthroughs(notebookNames(), "deno");
 * const { run, check, html } = await runs.executed("01-quickstart-grid");
 */
export function executeWalkthroughs(names: string[], kernel: NotebookKernel = "tslab"): Walkthroughs {
  const tasks = pool(
    defaultConcurrency(),
    names.map((name) => async (): Promise<Executed> => {
      const run = await executeNotebook(name, undefined, kernel);
      if (run.code !== 0 || !existsSync(executedPath(name, kernel))) return { run };
      const check = checkExecuted(readNotebook(executedPath(name, kernel)), expectationOf(name));
      const html = await exportHtml(name, kernel);
      return { run, check, html };
    }),
  );
  const executions = new Map(names.map((name, i) => [name, tasks[i]]));
  for (const task of tasks) task.catch(() => {}); // awaited by its test
  const browser = openBrowser();
  browser.catch(() => {});
  return {
    executed: (name) => executions.get(name)!,
    browser: () => browser,
    async stop() {
      await Promise.allSettled(tasks);
      await (await browser.catch(() => undefined))?.close();
    },
  };
}
