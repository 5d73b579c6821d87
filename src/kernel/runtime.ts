/**
 * What the code generated from magics calls (magics.ts), as `$rbp.<name>(...)`. The kernel
 * imports this module into the notebook once, before the first cell that uses a magic, and makes
 * the session's runtime (`const $rbp = magicRuntime()`, magic-cells.ts), so its types check the
 * generated calls and the values they return (a `%%grid ... -> fit1` makes `fit1` a typed
 * `Prediction`). The runtime object holds what a session's magics share: the clocks of `%time`.
 *
 * Every call goes to the notebook helper (src/notebook: `predict`, `connect`, `quota`,
 * `defaults`, `display`); nothing here talks to a service on its own. Line magics show what they
 * get (`display`) and return undefined; a cell magic returns its prediction, which the kernel
 * displays as the cell's value.
 */
import { cpuUsage } from "node:process";
import { performance } from "node:perf_hooks";
import type { Analysis, ExperimentReceipt, JobReceipt, OptionsInputFor } from "../client/index.js";
import { display, escapeHtml, formatCount, optionsTable, tableBundle, type Displayable, type MimeBundle } from "../display/index.js";
import type { FrameInput } from "../frame/index.js";
import {
  connect as helperConnect,
  defaults,
  isExperiment,
  predict,
  quota as helperQuota,
  type AnyPrediction,
  type ConnectOptions,
  type ExperimentPrediction,
  type Prediction,
  type PredictionSpec,
  type SinglePredictionSpec,
} from "../notebook/index.js";
import { analysisLabel } from "../engine/result.js";
import { allHelp, findMagic, lsmagicText, magicHelp, type MagicKind } from "./catalog.js";

// ---------------------------------------------------------------------------------------------
// %%grid, %%maxfit, %%psr

/** A cell magic: submits, shows progress (the helper's progress line), returns the prediction. */
export function run<A extends Analysis>(analysis: A, data: FrameInput, spec: SinglePredictionSpec, options: Record<string, unknown>): Promise<Prediction>;
export function run<A extends Analysis>(analysis: A, data: FrameInput, spec: PredictionSpec, options: Record<string, unknown>): Promise<AnyPrediction>;
export function run<A extends Analysis>(analysis: A, data: FrameInput, spec: PredictionSpec, options: Record<string, unknown>): Promise<AnyPrediction> {
  // The options were checked by the magic parser against the analysis' names and values. A
  // failure is not displayed by the helper: the kernel reports it as the cell's error output.
  return predict(analysis, data, spec, options as OptionsInputFor[A], { showErrors: false });
}

/** A cell magic with several theta rows: an experiment, one prediction per row. */
export async function runExperiment<A extends Analysis>(
  analysis: A,
  data: FrameInput,
  spec: PredictionSpec,
  options: Record<string, unknown>,
): Promise<ExperimentPrediction> {
  const p = await run(analysis, data, spec, options);
  if (!isExperiment(p)) throw new Error(`${analysisLabel(analysis)}: expected a prediction per theta row, got one prediction`);
  return p;
}

// ---------------------------------------------------------------------------------------------
// %time, %timeit

/** Seconds as IPython writes them: 3 significant digits in s, ms, µs or ns; minutes and more as 1min 5s. */
export function formatTime(seconds: number, precision = 3): string {
  if (seconds >= 60) {
    const parts: string[] = [];
    let left = seconds;
    for (const [suffix, length] of [
      ["d", 86_400],
      ["h", 3_600],
      ["min", 60],
      ["s", 1],
    ] as const) {
      const value = Math.floor(left / length);
      if (value > 0) {
        left %= length;
        parts.push(`${value}${suffix}`);
      }
      if (left < 1) break;
    }
    return parts.join(" ");
  }
  const units = ["s", "ms", "µs", "ns"];
  const order = seconds > 0 ? Math.min(-Math.floor(Math.floor(Math.log10(seconds)) / 3), 3) : 3;
  const value = seconds * 1000 ** Math.max(order, 0);
  return `${Number(value.toPrecision(precision))} ${units[Math.max(order, 0)]}`;
}

/** When a `%time` started: wall-clock and CPU time. */
export interface Mark {
  wall: number;
  cpu: NodeJS.CpuUsage;
}

/**
 * The clocks of a session's `%time`s, by line: a statement's start and end are two calls
 * (`$rbp.timeStart(3); <statement>; $rbp.timeEnd(3);`, so that its declarations stay the cell's).
 */
class TimeClocks {
  readonly #marks = new Map<number, Mark>();

  /** Starts the clock of the `%time` on line `key`. */
  start(key: number): Mark {
    const mark = { wall: performance.now(), cpu: cpuUsage() };
    this.#marks.set(key, mark);
    return mark;
  }

  /** Ends `%time` of a statement. */
  end(key: number): void {
    const mark = this.#marks.get(key);
    this.#marks.delete(key);
    if (mark !== undefined) report(mark);
  }

  /** Ends `%time` of an expression, and gives its value back. */
  timed<T>(mark: Mark, value: T): T {
    report(mark);
    for (const [k, m] of this.#marks) if (m === mark) this.#marks.delete(k);
    return value;
  }
}

function report(mark: Mark): void {
  const wall = (performance.now() - mark.wall) / 1000;
  const cpu = cpuUsage(mark.cpu);
  const user = cpu.user / 1e6;
  const sys = cpu.system / 1e6;
  console.log(`CPU times: user ${formatTime(user)}, sys: ${formatTime(sys)}, total: ${formatTime(user + sys)}\nWall time: ${formatTime(wall)}`);
}

export interface TimeitSettings {
  /** Loops per repeat (default: autorange to at least 0.2 s). */
  n?: number;
  /** Repeats (default 7). */
  r?: number;
}

export interface TimeitResult {
  loops: number;
  repeats: number;
  /** Seconds per loop, one per repeat. */
  perLoop: number[];
  mean: number;
  stdev: number;
}

function summary(loops: number, perLoop: number[]): TimeitResult {
  const mean = perLoop.reduce((a, b) => a + b, 0) / perLoop.length;
  const stdev = Math.sqrt(perLoop.reduce((a, b) => a + (b - mean) ** 2, 0) / perLoop.length);
  return { loops, repeats: perLoop.length, perLoop, mean, stdev };
}

/** IPython's line: `1.23 ms ± 45.6 µs per loop (mean ± std. dev. of 7 runs, 100 loops each)`. */
export function timeitText(r: TimeitResult): string {
  const s = (n: number, word: string) => `${formatCount(n)} ${word}${n === 1 ? "" : "s"}`;
  return `${formatTime(r.mean)} ± ${formatTime(r.stdev)} per loop (mean ± std. dev. of ${s(r.repeats, "run")}, ${s(r.loops, "loop")} each)`;
}

const AUTORANGE_S = 0.2;

function* autorangeSizes(): Generator<number> {
  for (let base = 1; ; base *= 10) for (const k of [1, 2, 5]) yield k * base;
}

/** `%timeit` of a statement that does not await. */
export function timeit(fn: () => unknown, settings: TimeitSettings = {}): void {
  const time = (loops: number) => {
    const t0 = performance.now();
    for (let i = 0; i < loops; i++) fn();
    return (performance.now() - t0) / 1000;
  };
  let loops = settings.n;
  if (loops === undefined) {
    for (const size of autorangeSizes()) {
      loops = size;
      if (time(size) >= AUTORANGE_S) break;
    }
  }
  const perLoop = Array.from({ length: settings.r ?? 7 }, () => time(loops!) / loops!);
  console.log(timeitText(summary(loops!, perLoop)));
}

/** `%timeit` of a statement that awaits. */
export async function timeitAsync(fn: () => Promise<unknown>, settings: TimeitSettings = {}): Promise<void> {
  const time = async (loops: number) => {
    const t0 = performance.now();
    for (let i = 0; i < loops; i++) await fn();
    return (performance.now() - t0) / 1000;
  };
  let loops = settings.n;
  if (loops === undefined) {
    for (const size of autorangeSizes()) {
      loops = size;
      if ((await time(size)) >= AUTORANGE_S) break;
    }
  }
  const perLoop: number[] = [];
  for (let i = 0; i < (settings.r ?? 7); i++) perLoop.push((await time(loops!)) / loops!);
  console.log(timeitText(summary(loops!, perLoop)));
}

// ---------------------------------------------------------------------------------------------
// %rbp

function show(value: MimeBundle | Displayable): void {
  const out = display(value);
  // Outside a kernel (a test, a script) display gives the bundle back: print its text.
  if (out !== undefined && !(out instanceof Promise)) console.log(out["text/plain"]);
}

function box(text: string, html: string): MimeBundle {
  return { "text/plain": text, "text/html": `<div style="font:13px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif">${html}</div>` };
}

/** `%rbp connect ...`: connects (or reconnects with other settings) and shows where. */
export async function connect(options: ConnectOptions): Promise<void> {
  const connection = Object.keys(options).length === 0 ? await helperConnect() : await helperConnect(options);
  show(connection);
}

/** `%rbp quota`. */
export async function quota(): Promise<void> {
  const q = await helperQuota();
  const text = `Quota: ${formatCount(q.quota)} units, ${formatCount(q.used)} used, ${formatCount(q.remaining)} remaining${q.period_end !== undefined ? ` (until ${q.period_end})` : ""}`;
  show(box(text, escapeHtml(text)));
}

type StatusTarget = { receipt: JobReceipt | ExperimentReceipt } | JobReceipt | ExperimentReceipt;

/** `%rbp status <receipt>`: a job's or an experiment's state, read from the service (reads cost nothing). */
export async function status(target: StatusTarget): Promise<void> {
  const receipt = "receipt" in target ? target.receipt : target;
  const connection = await helperConnect();
  const text = await connection.stateOf(receipt);
  show(box(text, escapeHtml(text)));
}

/** `%rbp options <analysis>`: the options and the defaults the service uses when they are left out. */
export function options(analysis: Analysis): void {
  const table = optionsTable(defaults(analysis) as Record<string, unknown>, `${analysisLabel(analysis)} options and their defaults`);
  show(tableBundle(table));
}

// ---------------------------------------------------------------------------------------------
// Help

/** `%lsmagic`. */
export function lsmagic(): void {
  console.log(lsmagicText());
}

/** `%magic` (no name), `%name?`, `%%name?`. */
export function help(name?: string, kind?: MagicKind): void {
  const info = name === undefined ? undefined : findMagic(name, kind);
  console.log(info === undefined ? allHelp() : magicHelp(info));
}

// ---------------------------------------------------------------------------------------------
// The session's runtime

/**
 * What the generated code calls as `$rbp`: made once per kernel session, before the first cell
 * that uses a magic (magic-cells.ts `RUNTIME_IMPORT`).
 *
 * @example
 * const $rbp = magicRuntime();
 * $rbp.timed($rbp.timeStart(1), 1 + 1); // prints CPU and wall time, gives 2
 */
export function magicRuntime() {
  const clocks = new TimeClocks();
  return {
    run,
    runExperiment,
    timeStart: (key: number): Mark => clocks.start(key),
    timeEnd: (key: number): void => clocks.end(key),
    timed: <T>(mark: Mark, value: T): T => clocks.timed(mark, value),
    timeit,
    timeitAsync,
    connect,
    quota,
    status,
    options,
    lsmagic,
    help,
  };
}

/** The runtime of a kernel session (`magicRuntime()`). */
export type MagicRuntime = ReturnType<typeof magicRuntime>;
