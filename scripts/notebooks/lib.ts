/**
 * Notebook CI: the pieces `scripts/notebooks/run.ts` and `test/notebooks/notebooks.test.ts` share.
 *
 * 1. `installKernelspec()` writes the tslab kernelspec into the project-local JUPYTER_PATH
 *    (`.jupyter/kernels/rbp-tslab/kernel.json`, gitignored) with `rbp kernel install`, the command
 *    users run, so CI exercises it.
 * 2. `executeNotebook(name)` runs `jupyter nbconvert --to notebook --execute` on
 *    `notebooks/<name>.ipynb` into `test-output/notebooks/` (the source notebooks are never
 *    rewritten). It passes `--allow-errors` so that every cell runs and every error is reported at
 *    once; `checkExecuted` then fails the notebook on any error output.
 * 3. `checkExecuted(nb, expectation)`: no `error` output, no stderr stream (tslab reports a
 *    TypeScript compile error as a stderr stream, not an error output; a walkthrough should write
 *    nothing there, and the few stderr lines a notebook means to show are listed in its
 *    expectation), every code cell executed, and the expected tables (text/html), charts
 *    (application/vnd.plotly.v1+json) and strings present.
 * 4. `exportHtml(name)`: `jupyter nbconvert --to html` of the executed notebook.
 * 5. `browserCheck(...)`: opens the HTML in Chromium (playwright-core, Debian's chromium),
 *    waits for every chart, checks each drew (SVG `.main-svg` or canvas), no page error, and saves
 *    screenshots to `test-output/screenshots/notebooks/`.
 *
 * 6. Deno: `installDenoKernelspec()` writes a kernelspec for Deno's own Jupyter kernel (the `deno`
 *    binary of the npm package `deno`, which scripts/install-deno.sh puts in .tools/deno) into the same JUPYTER_PATH
 *    (`.jupyter/kernels/rbp-deno`; `deno jupyter --install` ignores JUPYTER_PATH and writes into
 *    the user's folder), and `executeNotebook(name, source, "deno")` runs a walkthrough under it
 *    into `test-output/notebooks/deno/` with plain `jupyter nbconvert --execute`, as a Deno user's
 *    front end would: every table and chart must arrive before the cell's idle status.
 * 7. Exercises: each walkthrough's cells tagged `exercise` are followed by a cell tagged `check`
 *    that shows a verdict (`rbp.checkAnswer`). The committed notebook has the exercises blank:
 *    every verdict must say "not yet" and the notebook run to its end. `variant: "solved"` executes
 *    it with the solutions of notebooks/solutions/<name>.json substituted (a copy written beside
 *    the notebook, `<name>.solved.ipynb`, so that it runs in the same folder): every verdict must
 *    say "right" (`checkExercises`).
 *
 * 8. The rbp kernel: `installRbpKernelspec()` writes `rbp kernel install --kind rbp` into the same
 *    JUPYTER_PATH (`.jupyter/kernels/rbp`), and `executeNotebook(name, source, "rbp")` runs a
 *    walkthrough under it into `test-output/notebooks/rbp/`, with the same checks as under tslab.
 *
 * The notebooks' environment: the runner removes the variables that would point `connect()` at a
 * hosted service (RBP_BASE_URL, CSA_API_KEY, ...), so CI always uses the embedded local service and
 * never a developer's account.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { arch, cpus } from "node:os";
import { delimiter, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { CHROMIUM, openBrowser as launch, type Browser } from "../chromium.js";
import { EXPECTATIONS, type Expectation } from "./manifest.js";

export { CHROMIUM, type Browser };

/** Chromium for the notebooks' HTML exports. */
export const openBrowser = (): Promise<Browser> => launch("rbp-nb-chromium-");

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const NOTEBOOK_DIR = join(ROOT, "notebooks");
export const OUT_DIR = join(ROOT, "test-output", "notebooks");
export const HTML_DIR = join(OUT_DIR, "html");
export const SHOT_DIR = join(ROOT, "test-output", "screenshots", "notebooks");
export const JUPYTER_DIR = join(ROOT, ".jupyter");
export const KERNEL_NAME = "rbp-tslab";
/** The kernelspec of Deno's Jupyter kernel that the Deno runs use. */
export const DENO_KERNEL_NAME = "rbp-deno";
/** Where the Deno runs write their executed notebooks (and `html/` their exports). */
export const DENO_OUT_DIR = join(OUT_DIR, "deno");
/** The kernelspec of the rbp kernel that the rbp runs use (`rbp kernel install --kind rbp`). */
export const RBP_KERNEL_NAME = "rbp";
/** Where the rbp kernel's runs write their executed notebooks (and `html/` their exports). */
export const RBP_OUT_DIR = join(OUT_DIR, "rbp");
/** The kernels a walkthrough runs under: tslab (the notebooks' own kernelspec), Deno's, and the rbp kernel. */
export type NotebookKernel = "tslab" | "deno" | "rbp";
/** A walkthrough as committed (its exercises blank) or with the solutions substituted. */
export type Variant = "blank" | "solved";
/** The solutions of the exercises, one JSON file per walkthrough: exercise cell id to source. */
export const SOLUTIONS_DIR = join(NOTEBOOK_DIR, "solutions");
/** Seconds one cell may run (nbconvert's ExecutePreprocessor.timeout). */
export const CELL_TIMEOUT_S = 300;
export const PLOTLY_MIME = "application/vnd.plotly.v1+json";

/** Environment variables that would send a notebook to a hosted service or another account. */
const HOSTED_ENV = ["RBP_BASE_URL", "CSA_BASE_URL", "CSA_API_KEY", "CSA_ACCESS_ID", "RBP_API_VERSION"];

// ---------------------------------------------------------------------------------------------
// Notebooks and tools

/** A walkthrough notebook's file name: two digits, a dash, a name (other notebooks in the folder belong to other suites). */
export const WALKTHROUGH = /^\d{2}-[a-z0-9-]+\.ipynb$/;

/** The walkthrough notebooks in notebooks/, by name without .ipynb, in file order. */
export function notebookNames(): string[] {
  return readdirSync(NOTEBOOK_DIR)
    .filter((f) => WALKTHROUGH.test(f))
    .map((f) => f.slice(0, -".ipynb".length))
    .sort();
}

/**
 * Makes `import ... from "rbp-notebook"` resolve inside notebooks/ for tslab, whose TypeScript
 * compiler resolves modules the Node 10 way (node_modules folders, no package self-reference): a
 * link notebooks/node_modules/rbp-notebook to the package root (ignored by git, like every
 * node_modules). Node itself would find the package by self-reference; the type checker would not.
 * Returns what was done.
 */
export function linkPackage(): string {
  const dir = join(NOTEBOOK_DIR, "node_modules");
  const link = join(dir, "rbp-notebook");
  let current: string | undefined;
  try {
    current = realpathSync(link);
  } catch {
    current = undefined;
  }
  if (current === realpathSync(ROOT)) return `${link} -> ${ROOT} (already there)`;
  if (isDanglingLink(link)) rmSync(link, { force: true });
  else if (existsSync(link)) throw new Error(`${link} exists and is not a link to ${ROOT}; remove it, then run again`);
  mkdirSync(dir, { recursive: true });
  try {
    // A junction on Windows needs no privilege; elsewhere a relative symlink survives moving the clone.
    if (process.platform === "win32") symlinkSync(ROOT, link, "junction");
    else symlinkSync(relative(dir, ROOT), link, "dir");
  } catch (error) {
    // Test files run in parallel and each links the package first: another one may have made the same link since the check.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST" || realpathSync(link) !== realpathSync(ROOT)) throw error;
    return `${link} -> ${ROOT} (linked by another process)`;
  }
  return `${link} -> ${ROOT} (linked)`;
}

function isDanglingLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

export function expectationOf(name: string): Expectation {
  const e = EXPECTATIONS[name];
  if (e === undefined) throw new Error(`notebooks/${name}.ipynb has no entry in scripts/notebooks/manifest.ts`);
  return e;
}

export interface Tools {
  jupyter: boolean;
  chromium: boolean;
  /** Why a tool is missing, in words (empty when both are there). */
  missing: string[];
}

export function findTools(): Tools {
  const missing: string[] = [];
  const nb = spawnSync("jupyter", ["nbconvert", "--version"], { encoding: "utf8", timeout: 60_000 });
  const jupyter = nb.status === 0;
  if (!jupyter) missing.push(`jupyter nbconvert is not available (${nb.error?.message ?? nb.stderr?.trim().split("\n").pop() ?? "exit " + nb.status}); install it with scripts/install-notebook-deps.sh`);
  const chromium = existsSync(CHROMIUM);
  if (!chromium) missing.push(`no Chromium at ${CHROMIUM}; install it with scripts/install-browser.sh`);
  return { jupyter, chromium, missing };
}

/** The environment nbconvert and the kernels run in. */
export function notebookEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of HOSTED_ENV) delete env[k];
  env.JUPYTER_PATH = [JUPYTER_DIR, ...(process.env.JUPYTER_PATH ? [process.env.JUPYTER_PATH] : [])].join(delimiter);
  // Python's own warnings (e.g. jupyter_core's path deprecation notice) are not the notebooks' business.
  env.PYTHONWARNINGS = "ignore";
  // The Jupyter runtime files (connection files) away from the user's.
  env.JUPYTER_RUNTIME_DIR = join(OUT_DIR, ".runtime");
  return env;
}

/**
 * The `deno` binary of the npm package `deno`: installed by scripts/install-deno.sh into
 * .tools/deno (not a dependency of this package: the registry this project is built against lacks
 * most of deno's platform packages, so a lockfile naming it could not serve `npm ci` on every
 * platform), or in the project's own node_modules. Its binary comes in the platform package
 * `@deno/<os>-<arch>[-glibc]`, linked as node_modules/deno/deno by its install script, or found in
 * the platform package directly. `RBP_DENO` names another binary. Undefined when none runs.
 */
export function denoBinary(): string | undefined {
  const exe = process.platform === "win32" ? "deno.exe" : "deno";
  const candidates: string[] = process.env.RBP_DENO ? [process.env.RBP_DENO] : [];
  for (const root of [join(ROOT, ".tools", "deno"), ROOT]) candidates.push(...denoCandidates(createRequire(join(root, "package.json")), exe));
  return candidates.find((c) => existsSync(c) && spawnSync(c, ["--version"], { encoding: "utf8" }).status === 0);
}

function denoCandidates(req: NodeJS.Require, exe: string): string[] {
  const candidates: string[] = [];
  try {
    candidates.push(join(dirname(req.resolve("deno/package.json")), exe));
  } catch {
    // not installed
  }
  const os = process.platform === "win32" ? "win32" : process.platform === "darwin" ? "darwin" : "linux";
  for (const suffix of os === "linux" ? ["-glibc", "-musl", ""] : [""]) {
    try {
      candidates.push(join(dirname(req.resolve(`@deno/${os}-${arch()}${suffix}/package.json`)), exe));
    } catch {
      // not this platform package
    }
  }
  return candidates;
}

/**
 * Writes the kernelspec of Deno's Jupyter kernel into the project-local JUPYTER_PATH (what
 * `deno jupyter --install` writes, but there: it ignores JUPYTER_PATH); returns the kernel.json path.
 */
export function installDenoKernelspec(deno = denoBinary()): string {
  if (deno === undefined) throw new Error("no deno binary: bash scripts/install-deno.sh (or RBP_DENO=/path/to/deno)");
  const dir = join(JUPYTER_DIR, "kernels", DENO_KERNEL_NAME);
  mkdirSync(dir, { recursive: true });
  const spec = { argv: [deno, "jupyter", "--kernel", "--conn", "{connection_file}"], display_name: "Deno", language: "typescript" };
  writeFileSync(join(dir, "kernel.json"), JSON.stringify(spec, null, 2) + "\n");
  return join(dir, "kernel.json");
}

/** Writes the kernelspec with the built `rbp kernel install` (tslab, or `--kind rbp`); returns the kernel.json path. */
export function installKernelspec(kind: "tslab" | "rbp" = "tslab"): string {
  const rbp = join(ROOT, "dist", "cli", "rbp.js");
  if (!existsSync(rbp) || !existsSync(join(ROOT, "dist", "index.js"))) {
    throw new Error("dist/ is not built (the notebooks import the package by name): run npm run build");
  }
  const name = kind === "rbp" ? RBP_KERNEL_NAME : KERNEL_NAME;
  const r = spawnSync(process.execPath, [rbp, "kernel", "install", "--kind", kind, "--jupyter-path", JUPYTER_DIR, "--name", name], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`rbp kernel install failed (exit ${r.status}): ${r.stderr}`);
  return join(JUPYTER_DIR, "kernels", name, "kernel.json");
}

/** The rbp kernel's kernelspec (`rbp kernel install --kind rbp`); returns the kernel.json path. */
export const installRbpKernelspec = (): string => installKernelspec("rbp");

// ---------------------------------------------------------------------------------------------
// Executing

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function runCommand(cmd: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Run> {
  const started = Date.now();
  return new Promise((resolvePromise) => {
    const child = spawn(cmd, args, { cwd: options.cwd ?? ROOT, env: options.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    const timer = setTimeout(() => {
      stderr += `\n[runner] timed out after ${options.timeoutMs} ms; killed`;
      child.kill("SIGKILL");
    }, options.timeoutMs);
    child.on("error", (e) => {
      clearTimeout(timer);
      resolvePromise({ code: null, stdout, stderr: stderr + String(e), ms: Date.now() - started });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

function outDir(kernel: NotebookKernel, variant: Variant = "blank"): string {
  const dir = kernel === "deno" ? DENO_OUT_DIR : kernel === "rbp" ? RBP_OUT_DIR : OUT_DIR;
  return variant === "solved" ? join(dir, "solved") : dir;
}

export function executedPath(name: string, kernel: NotebookKernel = "tslab", variant: Variant = "blank"): string {
  return join(outDir(kernel, variant), `${name}.ipynb`);
}

/** The solutions of a walkthrough's exercises (cell id to source); undefined when it has no file. */
export function solutionsOf(name: string): Record<string, string> | undefined {
  const path = join(SOLUTIONS_DIR, `${name}.json`);
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, "utf8")) as Record<string, string>;
}

export function tagsOf(cell: { metadata?: Record<string, unknown> }): string[] {
  const tags = cell.metadata?.tags;
  return Array.isArray(tags) ? tags.filter((t): t is string => typeof t === "string") : [];
}

/**
 * The notebook with every exercise cell's source replaced by its solution. Throws when an exercise
 * has no solution or a solution names no exercise cell.
 */
export function solvedNotebook(nb: Notebook, solutions: Record<string, string>): Notebook {
  const exercises = nb.cells.filter((c) => tagsOf(c).includes("exercise"));
  const missing = exercises.filter((c) => c.id === undefined || solutions[c.id] === undefined).map((c) => c.id ?? "(no id)");
  const unknown = Object.keys(solutions).filter((id) => !exercises.some((c) => c.id === id));
  if (missing.length > 0 || unknown.length > 0) {
    throw new Error(`solutions do not match the exercises: ${[...missing.map((id) => `no solution for ${id}`), ...unknown.map((id) => `${id} is no exercise cell`)].join("; ")}`);
  }
  return { ...nb, cells: nb.cells.map((c) => (c.id !== undefined && solutions[c.id] !== undefined ? { ...c, source: solutions[c.id] } : c)) };
}

/** Writes notebooks/<name>.solved.ipynb (beside the notebook, so that it runs in the same folder); returns its path. */
export function writeSolved(name: string): string {
  const solutions = solutionsOf(name);
  if (solutions === undefined) throw new Error(`no solutions for ${name}: notebooks/solutions/${name}.json`);
  const path = join(NOTEBOOK_DIR, `${name}.solved.ipynb`);
  writeFileSync(path, JSON.stringify(solvedNotebook(readNotebook(join(NOTEBOOK_DIR, `${name}.ipynb`)), solutions), null, 1) + "\n");
  return path;
}

/**
 * `jupyter nbconvert --to notebook --execute` of notebooks/<name>.ipynb (or of `source`) into
 * test-output/notebooks/<name>.ipynb (under tslab, the notebooks' kernelspec),
 * test-output/notebooks/deno/<name>.ipynb (under Deno's kernel, see the module comment) or
 * test-output/notebooks/rbp/<name>.ipynb (under the rbp kernel). The
 * kernel runs in the source notebook's folder.
 */
export async function executeNotebook(name: string, source?: string, kernel: NotebookKernel = "tslab", variant: Variant = "blank"): Promise<Run> {
  const dir = outDir(kernel, variant);
  mkdirSync(dir, { recursive: true });
  rmSync(executedPath(name, kernel, variant), { force: true });
  const timeout = process.env.RBP_NOTEBOOK_CELL_TIMEOUT ?? CELL_TIMEOUT_S;
  const solved = source === undefined && variant === "solved" ? writeSolved(name) : undefined;
  const input = source ?? solved ?? join(NOTEBOOK_DIR, `${name}.ipynb`);
  // Plain nbconvert under every kernel: what a user's front end receives is what is checked.
  const execute = ["--execute", "--allow-errors", `--ExecutePreprocessor.timeout=${timeout}`, `--ExecutePreprocessor.startup_timeout=120`];
  if (kernel === "deno") execute.push(`--ExecutePreprocessor.kernel_name=${DENO_KERNEL_NAME}`);
  if (kernel === "rbp") execute.push(`--ExecutePreprocessor.kernel_name=${RBP_KERNEL_NAME}`);
  const args = ["nbconvert", "--to", "notebook", ...execute, "--output-dir", dir, "--output", name, input];
  try {
    let run = await runCommand("jupyter", args, { env: notebookEnv(), timeoutMs: 15 * 60_000 });
    // Jupyter's port race, and only it, is forgiven: jupyter_client picks five free ports and closes
    // them before the kernel binds them, so a process starting meanwhile (another kernel, a local
    // service on port 0) can take one, and the kernel dies before kernel_info saying so. Nothing of
    // the notebook ran; it runs again on new ports, and the first attempt's stderr is kept.
    for (let attempt = 1; attempt < 3 && lostPortRace(run); attempt++) {
      const again = await runCommand("jupyter", args, { env: notebookEnv(), timeoutMs: 15 * 60_000 });
      run = { ...again, stderr: `${run.stderr}\n[attempt ${attempt + 1}: the kernel lost Jupyter's port race above]\n${again.stderr}` };
    }
    return run;
  } finally {
    if (solved !== undefined) rmSync(solved, { force: true });
  }
}

/** A run whose kernel died at start-up because a port jupyter_client chose was taken (EADDRINUSE). */
function lostPortRace(run: Run): boolean {
  return run.code !== 0 && run.stderr.includes("Kernel died before replying to kernel_info") && /Address already in use|EADDRINUSE/.test(run.stderr);
}

/** `jupyter nbconvert --to html` of the executed notebook; returns the HTML path. */
export async function exportHtml(name: string, kernel: NotebookKernel = "tslab", variant: Variant = "blank"): Promise<{ run: Run; path: string }> {
  const htmlDir = join(outDir(kernel, variant), "html");
  mkdirSync(htmlDir, { recursive: true });
  const path = join(htmlDir, `${name}.html`);
  rmSync(path, { force: true });
  const run = await runCommand("jupyter", ["nbconvert", "--to", "html", "--output-dir", htmlDir, "--output", name, executedPath(name, kernel, variant)], {
    env: notebookEnv(),
    timeoutMs: 5 * 60_000,
  });
  return { run, path };
}

/** Runs tasks at most `limit` at a time; each task's promise is returned at once. */
export function pool<T>(limit: number, tasks: Array<() => Promise<T>>): Promise<T>[] {
  let active = 0;
  const queue: Array<() => void> = [];
  const next = () => {
    active--;
    queue.shift()?.();
  };
  return tasks.map(
    (task) =>
      new Promise<T>((resolveTask, rejectTask) => {
        const start = () => {
          active++;
          task().then(resolveTask, rejectTask).finally(next);
        };
        if (active < limit) start();
        else queue.push(start);
      }),
  );
}

/** How many notebooks run at once: RBP_NOTEBOOK_CONCURRENCY, else 2 (each kernel also uses the cores for its service). */
export function defaultConcurrency(): number {
  const n = Number(process.env.RBP_NOTEBOOK_CONCURRENCY);
  return Number.isInteger(n) && n > 0 ? n : Math.max(1, Math.min(2, cpus().length));
}

// ---------------------------------------------------------------------------------------------
// Checking an executed notebook

interface Output {
  output_type: string;
  name?: string;
  text?: string | string[];
  data?: Record<string, unknown>;
  ename?: string;
  evalue?: string;
  traceback?: string[];
}
interface Cell {
  id?: string;
  cell_type: string;
  source: string | string[];
  execution_count?: number | null;
  outputs?: Output[];
  metadata?: Record<string, unknown>;
}
export interface Notebook {
  nbformat: number;
  nbformat_minor: number;
  metadata: Record<string, unknown> & { kernelspec?: { name?: string; display_name?: string; language?: string } };
  cells: Cell[];
}

export function readNotebook(path: string): Notebook {
  return JSON.parse(readFileSync(path, "utf8")) as Notebook;
}

const joinText = (t: string | string[] | undefined): string => (Array.isArray(t) ? t.join("") : (t ?? ""));

export interface CheckReport {
  problems: string[];
  codeCells: number;
  /** Outputs carrying each mime type (display_data and execute_result). */
  mimeCounts: Record<string, number>;
  /** Plotly charts: outputs with the plotly mime type. */
  charts: number;
  /** Charts drawn in the HTML outputs (`class="rbp-figure"` containers): a chart output's, and those in a prediction's own bundle (Deno shows a prediction that way). */
  figures: number;
  /** HTML tables: text/html outputs holding a <table> and no chart. */
  tables: number;
  /** Outputs of type error. */
  errors: number;
  /** The verdicts the cells tagged `check` showed: "right" and "not yet". */
  verdicts: { right: number; notYet: number };
}

function cellLabel(cell: Cell, index: number): string {
  const first = joinText(cell.source).split("\n")[0].slice(0, 70);
  return `cell ${index + 1}${cell.id ? ` (${cell.id})` : ""} "${first}"`;
}

/** Checks an executed notebook against its expectation; `problems` empty means it passed. */
export function checkExecuted(nb: Notebook, e: Expectation): CheckReport {
  const problems: string[] = [];
  const mimeCounts: Record<string, number> = {};
  let charts = 0;
  let figures = 0;
  let tables = 0;
  let errors = 0;
  let codeCells = 0;
  const verdicts = { right: 0, notYet: 0 };
  const texts: string[] = [];
  const allowed = (e.stderr ?? []).map((s) => (typeof s === "string" ? new RegExp(s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")) : s));
  nb.cells.forEach((cell, i) => {
    if (cell.cell_type !== "code") return;
    codeCells++;
    let previous: Output | undefined;
    for (const out of cell.outputs ?? []) {
      // Consecutive writes to one stream are one text, as a front end shows them (Deno sends each console.log apart).
      const continues = out.output_type === "stream" && previous?.output_type === "stream" && previous.name === out.name;
      previous = out;
      if (out.output_type === "error") {
        errors++;
        problems.push(`${cellLabel(cell, i)} has an error output: ${out.ename}: ${out.evalue}`);
      } else if (out.output_type === "stream") {
        const text = joinText(out.text);
        if (continues) texts[texts.length - 1] += text;
        else texts.push(text);
        if (out.name === "stderr") {
          const lines = text.split("\n").filter((l) => l.trim() !== "" && !allowed.some((re) => re.test(l)));
          if (lines.length > 0) problems.push(`${cellLabel(cell, i)} wrote to stderr: ${lines.slice(0, 5).join(" | ").slice(0, 600)}`);
        }
      } else if (out.output_type === "display_data" || out.output_type === "execute_result") {
        const data = out.data ?? {};
        for (const mime of Object.keys(data)) mimeCounts[mime] = (mimeCounts[mime] ?? 0) + 1;
        if (data[PLOTLY_MIME] !== undefined) charts++;
        const html = typeof data["text/html"] === "string" ? data["text/html"] : joinText(data["text/html"] as string[] | undefined);
        if (data[PLOTLY_MIME] === undefined && /<table[\s>]/i.test(html)) tables++;
        // A failed call shows its error box once (tslab's stderr echo is dropped): that box is the failure.
        if (/class="rbp-error"/.test(html)) problems.push(`${cellLabel(cell, i)} shows an error box: ${joinText(data["text/plain"] as string | string[] | undefined).split("\n")[0].slice(0, 300)}`);
        figures += (html.match(/<div class="rbp-figure"/g) ?? []).length;
        if (tagsOf(cell).includes("check")) {
          verdicts.right += (html.match(/data-rbp-check="right"/g) ?? []).length;
          verdicts.notYet += (html.match(/data-rbp-check="not-yet"/g) ?? []).length;
        }
        // The inlined plotly.js is megabytes of code that says nothing about the notebook.
        if (data[PLOTLY_MIME] === undefined) texts.push(html);
        texts.push(joinText(data["text/plain"] as string | string[] | undefined));
      }
    }
  });
  if (charts < e.charts) problems.push(`expected at least ${e.charts} plotly charts, found ${charts}`);
  if (tables < e.tables) problems.push(`expected at least ${e.tables} HTML tables, found ${tables}`);
  const all = texts.join("\n");
  for (const s of e.strings ?? []) {
    const found = typeof s === "string" ? all.includes(s) : s.test(all);
    if (!found) problems.push(`expected the outputs to contain ${typeof s === "string" ? JSON.stringify(s) : String(s)}`);
  }
  const prose = nb.cells.filter((c) => c.cell_type === "markdown").map((c) => joinText(c.source)).join("\n");
  for (const q of e.quotes ?? []) {
    if (!prose.includes(q)) problems.push(`the manifest lists the quote ${JSON.stringify(q)}, which no markdown cell has`);
    else if (!all.includes(q)) problems.push(`the prose quotes ${JSON.stringify(q)}, which no output shows`);
  }
  return { problems, codeCells, mimeCounts, charts, figures, tables, errors, verdicts };
}

/**
 * The exercises of an executed walkthrough: at least `minimum` cells tagged `exercise`, each
 * followed by a cell tagged `check` (before the next exercise) that showed verdicts; as committed
 * (`blank`) every verdict says "not yet", with the solutions (`solved`) every verdict says "right".
 */
export function checkExercises(nb: Notebook, variant: Variant, minimum = 2): string[] {
  const problems: string[] = [];
  const exercises = nb.cells.flatMap((c, i) => (tagsOf(c).includes("exercise") ? [i] : []));
  if (exercises.length < minimum) problems.push(`expected at least ${minimum} cells tagged exercise, found ${exercises.length}`);
  exercises.forEach((at, k) => {
    const end = k + 1 < exercises.length ? exercises[k + 1] : nb.cells.length;
    const checks = nb.cells.slice(at + 1, end).filter((c) => tagsOf(c).includes("check"));
    if (checks.length === 0) problems.push(`${cellLabel(nb.cells[at], at)} (exercise) has no cell tagged check after it`);
    for (const c of checks) {
      const html = (c.outputs ?? []).map((o) => (typeof o.data?.["text/html"] === "string" ? o.data["text/html"] : joinText(o.data?.["text/html"] as string[] | undefined))).join("");
      const right = (html.match(/data-rbp-check="right"/g) ?? []).length;
      const notYet = (html.match(/data-rbp-check="not-yet"/g) ?? []).length;
      const label = cellLabel(c, nb.cells.indexOf(c));
      if (right + notYet === 0) problems.push(`${label} (check) showed no verdict`);
      else if (variant === "blank" && right > 0) problems.push(`${label} (check) says "right" to a blank exercise`);
      else if (variant === "solved" && notYet > 0) problems.push(`${label} (check) says "not yet" to the solution: ${html.replace(/<[^>]+>/g, "").slice(0, 300)}`);
    }
  });
  return problems;
}

/** Checks a source notebook: nbformat 4.5 with cell ids, the rbp-tslab kernel, no outputs. */
export function checkSource(nb: Notebook): string[] {
  const problems: string[] = [];
  if (nb.nbformat !== 4 || nb.nbformat_minor < 5) problems.push(`nbformat ${nb.nbformat}.${nb.nbformat_minor}, expected 4.5 (cell ids)`);
  const ks = nb.metadata.kernelspec;
  if (ks?.name !== KERNEL_NAME || ks.language !== "typescript") problems.push(`kernelspec ${JSON.stringify(ks)}, expected name ${KERNEL_NAME}, language typescript`);
  const ids = new Set<string>();
  nb.cells.forEach((cell, i) => {
    if (typeof cell.id !== "string" || !/^[a-zA-Z0-9-_]{1,64}$/.test(cell.id)) problems.push(`cell ${i + 1} has no valid id`);
    else if (ids.has(cell.id)) problems.push(`cell ${i + 1} repeats the id ${cell.id}`);
    else ids.add(cell.id);
    if (cell.cell_type === "code") {
      if ((cell.outputs ?? []).length > 0) problems.push(`${cellLabel(cell, i)} has outputs (commit notebooks without outputs)`);
      if (cell.execution_count !== null) problems.push(`${cellLabel(cell, i)} has an execution count`);
    }
  });
  if (!nb.cells.some((c) => c.cell_type === "markdown")) problems.push("no prose (markdown cell)");
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Chromium

/** Debian's require.js, served for the CDN URL nbconvert's template loads, so the page has the loader it has online. */
const LOCAL_REQUIREJS = "/usr/share/javascript/requirejs/require.min.js";

export interface FigureState {
  title: string;
  drawn: boolean;
  svg: number;
  canvas: number;
  text: string;
}

export interface BrowserReport {
  problems: string[];
  figures: FigureState[];
  /** Requests to the network, which the page does not get (nbconvert's template may ask for require.js and MathJax from a CDN; require.js is served from Debian's copy when there is one). */
  blocked: string[];
  /** Optional resources of the template that are not installed (MathJax). */
  unavailable: string[];
  screenshots: string[];
  ms: number;
}

/**
 * Opens an exported notebook, waits until every chart drew, checks them and saves a full-page
 * screenshot and one per chart.
 */
export async function browserCheck(browser: Browser, htmlPath: string, name: string, expectedCharts: number): Promise<BrowserReport> {
  const started = Date.now();
  mkdirSync(SHOT_DIR, { recursive: true });
  for (const f of readdirSync(SHOT_DIR)) if (f === `${name}.png` || f.startsWith(`${name}-chart-`)) rmSync(join(SHOT_DIR, f));
  const page = await browser.context.newPage();
  const problems: string[] = [];
  const blocked: string[] = [];
  const unavailable: string[] = [];
  const screenshots: string[] = [];
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith("file:") || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    if (/\/require(\.min)?\.js(\?|$)/.test(url) && existsSync(LOCAL_REQUIREJS)) {
      return route.fulfill({ status: 200, contentType: "application/javascript", body: readFileSync(LOCAL_REQUIREJS, "utf8") });
    }
    blocked.push(url);
    return route.abort();
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    // A resource that did not load shows up as a console error too; "requestfailed" judges it.
    if (/^Failed to load resource/.test(m.text())) return;
    problems.push(`console error: ${m.text()}`);
  });
  page.on("requestfailed", (r) => {
    const url = r.url();
    if (blocked.includes(url)) return;
    // nbconvert's template loads MathJax for LaTeX in markdown (the notebooks have none); Debian's
    // nbconvert points it at /usr/share/javascript/mathjax, which only the libjs-mathjax package has.
    if (/mathjax/i.test(url)) {
      unavailable.push(url);
      return;
    }
    problems.push(`request failed: ${url} (${r.failure()?.errorText ?? "?"})`);
  });
  try {
    await page.goto(pathToFileURL(htmlPath).href, { waitUntil: "load", timeout: 120_000 });
    // Browser-side code as strings: the project compiles without the DOM library.
    await page
      .waitForFunction(
        `(() => {
          const figs = Array.from(document.querySelectorAll(".rbp-figure"));
          return figs.length >= ${expectedCharts} && figs.every((f) => f.getAttribute("data-rbp-drawn") === "1" || (f.textContent || "").startsWith("The chart could not"));
        })()`,
        undefined,
        { timeout: 90_000, polling: 250 },
      )
      .catch((e: Error) => problems.push(`charts did not all draw: ${e.message.split("\n")[0]}`));
    const figures = (await page.evaluate(`Array.from(document.querySelectorAll(".rbp-figure")).map((el) => ({
      title: el.getAttribute("data-rbp-figure") || "",
      drawn: el.getAttribute("data-rbp-drawn") === "1",
      svg: el.querySelectorAll(".main-svg").length,
      canvas: el.querySelectorAll("canvas").length,
      text: (el.textContent || "").slice(0, 160),
    }))`)) as FigureState[];
    if (figures.length !== expectedCharts) problems.push(`the page has ${figures.length} charts, the notebook ${expectedCharts}`);
    figures.forEach((f, i) => {
      if (!f.drawn) problems.push(`chart ${i + 1} "${f.title}" did not draw: ${f.text}`);
      else if (f.svg + f.canvas === 0) problems.push(`chart ${i + 1} "${f.title}" has no SVG or canvas`);
    });
    // Let plotly finish its transitions before the pictures.
    await page.waitForTimeout(300);
    const full = join(SHOT_DIR, `${name}.png`);
    await page.screenshot({ path: full, fullPage: true });
    screenshots.push(full);
    const handles = await page.$$(".rbp-figure");
    for (let i = 0; i < handles.length; i++) {
      const p = join(SHOT_DIR, `${name}-chart-${String(i + 1).padStart(2, "0")}.png`);
      await handles[i].scrollIntoViewIfNeeded();
      await handles[i].screenshot({ path: p });
      screenshots.push(p);
    }
    return { problems, figures, blocked, unavailable, screenshots, ms: Date.now() - started };
  } finally {
    await page.close().catch(() => {});
  }
}
