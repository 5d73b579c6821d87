/**
 * Runs the walkthrough notebooks as CI does, outside vitest:
 *
 *   npx tsx scripts/notebooks/run.ts [NAME ...] [--kernel tslab|deno|rbp] [--solved] [--no-browser] [--concurrency N] [--verbose]
 *   npx tsx scripts/notebooks/run.ts --link     (only make "rbp-notebook" importable in notebooks/)
 *
 * (`npm run test:notebooks` runs the same steps as the vitest suite test/notebooks.) Builds
 * nothing: run `npm run build` first. Writes executed notebooks to test-output/notebooks/, their
 * HTML to test-output/notebooks/html/, screenshots to test-output/screenshots/notebooks/ and a
 * summary to test-output/notebooks/summary.json. As committed, every exercise is blank and every
 * check must say "not yet"; `--solved` runs the notebooks with notebooks/solutions/ substituted
 * (into test-output/notebooks/solved/), where every check must say "right". Exit code 0 when every notebook passed, 1 when
 * one failed, 2 when jupyter or Chromium is missing.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  browserCheck,
  checkExecuted,
  checkExercises,
  defaultConcurrency,
  executedPath,
  executeNotebook,
  expectationOf,
  exportHtml,
  findTools,
  installDenoKernelspec,
  installKernelspec,
  type NotebookKernel,
  type Variant,
  linkPackage,
  notebookNames,
  openBrowser,
  OUT_DIR,
  pool,
  readNotebook,
  type Browser,
} from "./lib.js";

interface Outcome {
  name: string;
  ok: boolean;
  problems: string[];
  executeMs: number;
  htmlMs?: number;
  browserMs?: number;
  charts?: number;
  tables?: number;
  screenshots?: string[];
}

async function main(argv: string[]): Promise<number> {
  const names: string[] = [];
  let browserWanted = true;
  let concurrency = defaultConcurrency();
  let verbose = false;
  let kernelName: NotebookKernel = "tslab";
  let variant: Variant = "blank";
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--link") {
      console.log(`package: ${linkPackage()}`);
      return 0;
    } else if (a === "--no-browser") browserWanted = false;
    else if (a === "--solved") variant = "solved";
    else if (a === "--kernel") {
      const k = argv[++i];
      if (k !== "tslab" && k !== "deno" && k !== "rbp") {
        console.error(`--kernel is tslab, deno or rbp, not ${k}`);
        return 2;
      }
      kernelName = k;
    }
    else if (a === "--verbose") verbose = true;
    else if (a === "--concurrency") concurrency = Math.max(1, Number(argv[++i]) || 1);
    else if (a.startsWith("-")) {
      console.error(`unknown option ${a}`);
      return 2;
    } else names.push(a.replace(/\.ipynb$/, "").replace(/^notebooks\//, ""));
  }
  const all = notebookNames();
  const chosen = names.length > 0 ? names : all;
  for (const n of chosen) if (!all.includes(n)) {
    console.error(`no notebook notebooks/${n}.ipynb; the notebooks are ${all.join(", ")}`);
    return 2;
  }
  const tools = findTools();
  if (!tools.jupyter || (browserWanted && !tools.chromium)) {
    for (const m of tools.missing) console.error(`notebooks: ${m}`);
    return 2;
  }
  console.log(`package: ${linkPackage()}`);
  const kernel = kernelName === "deno" ? installDenoKernelspec() : installKernelspec(kernelName);
  console.log(`kernelspec: ${kernel}`);
  const started = Date.now();
  let browser: Browser | undefined;
  const browserReady = browserWanted ? openBrowser().then((b) => (browser = b)) : undefined;
  // The browser checks run one at a time; the executions `concurrency` at a time.
  let browserQueue: Promise<unknown> = Promise.resolve();

  const outcomes = await Promise.all(
    pool(
      concurrency,
      chosen.map((name) => async (): Promise<Outcome> => {
        const e = expectationOf(name);
        const run = await executeNotebook(name, undefined, kernelName, variant);
        const outcome: Outcome = { name, ok: false, problems: [], executeMs: run.ms };
        if (run.code !== 0) {
          outcome.problems.push(`nbconvert --execute exited ${run.code}: ${run.stderr.trim().split("\n").slice(-12).join("\n")}`);
          console.log(`FAIL ${name}  execute ${(run.ms / 1000).toFixed(1)} s`);
          for (const p of outcome.problems) console.log(`     ${p}`);
          return outcome;
        }
        const executed = readNotebook(executedPath(name, kernelName, variant));
        const check = checkExecuted(executed, e);
        outcome.problems.push(...check.problems, ...checkExercises(executed, variant));
        outcome.charts = check.charts;
        outcome.tables = check.tables;
        if (verbose) console.log(`${name}: ${JSON.stringify(check.mimeCounts)}`);
        const html = await exportHtml(name, kernelName, variant);
        outcome.htmlMs = html.run.ms;
        if (html.run.code !== 0) outcome.problems.push(`nbconvert --to html exited ${html.run.code}: ${html.run.stderr.trim().split("\n").slice(-5).join("\n")}`);
        else if (browserReady !== undefined) {
          const job = browserQueue.then(async () => {
            await browserReady;
            return browserCheck(browser!, html.path, `${kernelName === "tslab" ? "" : `${kernelName}-`}${variant === "solved" ? "solved-" : ""}${name}`, check.figures);
          });
          browserQueue = job.catch(() => undefined);
          const b = await job;
          outcome.problems.push(...b.problems);
          outcome.browserMs = b.ms;
          outcome.screenshots = b.screenshots;
          if (verbose && b.blocked.length > 0) console.log(`${name}: blocked ${b.blocked.join(", ")}`);
        }
        outcome.ok = outcome.problems.length === 0;
        const line = `${outcome.ok ? "ok  " : "FAIL"} ${name}  execute ${(run.ms / 1000).toFixed(1)} s, ${check.charts} charts, ${check.tables} tables, checks ${check.verdicts.right} right / ${check.verdicts.notYet} not yet${outcome.browserMs !== undefined ? `, browser ${(outcome.browserMs / 1000).toFixed(1)} s` : ""}`;
        console.log(line);
        for (const p of outcome.problems) console.log(`     ${p}`);
        return outcome;
      }),
    ),
  );
  await browser?.close();
  const ms = Date.now() - started;
  writeFileSync(join(OUT_DIR, `summary${kernelName === "tslab" ? "" : `-${kernelName}`}${variant === "solved" ? "-solved" : ""}.json`), JSON.stringify({ ms, concurrency, kernel: kernelName, variant, outcomes }, null, 2) + "\n");
  const failed = outcomes.filter((o) => !o.ok);
  console.log(`notebooks: ${outcomes.length - failed.length} passed, ${failed.length} failed in ${(ms / 1000).toFixed(1)} s (${concurrency} at a time)`);
  return failed.length === 0 ? 0 : 1;
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exitCode = 1;
  },
);
