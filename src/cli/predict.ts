/**
 * `rbp predict grid|maxfit|psr|grid-singularity --input body.json`: runs one analysis on a v3 POST
 * body without a service and prints the v3 `results` object (or a list of them, one per theta row)
 * on stdout. `grid-singularity` is the Grid reported through its single best cell (engine/singularity.ts,
 * the service's v2 `/grid-singularity`); its body is a Grid's.
 */
import { readFile } from "node:fs/promises";
import type { Analysis } from "../api/options.js";
import { brand, RbpBaseError } from "../errors/index.js";

/** What `rbp predict` runs: the three analyses, and the Grid through its best cell. */
export const PREDICT_ANALYSES = ["psr", "maxfit", "grid", "grid-singularity"] as const;
export type PredictAnalysis = Analysis | "grid-singularity";

export const PREDICT_USAGE = `Usage: rbp predict <grid|maxfit|psr|grid-singularity> --input <body.json | -> [--pretty]

Reads a v3 POST body {"y": [...], "X": [[...], ...], "theta": [...], "options": {...}}
(theta optional for grid: the last row of X; several theta rows give one result per row)
and prints the v3 "results" object as JSON on stdout. Notes on ignored options go to stderr.`;

export interface PredictArgs {
  analysis: PredictAnalysis;
  input: string;
  pretty: boolean;
}

export async function predict(args: PredictArgs, io: { stdout: (s: string) => void; stderr: (s: string) => void }): Promise<void> {
  // The parser and the engine load while the input is read; the Grid's threads, singularity and
  // the other analyses only when they run (the command line is settled before this module loads them).
  const parser = import("../api/request.js");
  const text = args.input === "-" ? await readStdin() : await readFile(args.input, "utf8");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${args.input === "-" ? "standard input" : args.input} is not valid JSON: ${(error as Error).message}`);
  }
  const singularity = args.analysis === "grid-singularity";
  const { parseRequest } = await parser;
  const request = parseRequest(singularity ? "grid" : (args.analysis as Analysis), body, "v3", { requireAccessId: false });
  for (const warning of request.warnings) io.stderr(`rbp: note: ${warning}\n`);
  // A large Grid spreads its cells over the cores (unless options.inner_parallel is "off"); a small
  // one runs on this thread alone (helperThreads). The result is the same either way, bit for bit.
  const threads = "max_iter" in request.resolved ? helperThreads(request.data.rows, request.data.cols, request.resolved) : 1;
  const results = [];
  for (const theta of request.thetas) {
    if (singularity) {
      const { gridSingularity } = await import("../engine/singularity.js");
      results.push(gridSingularity(request.data, theta, request.options as never));
    } else if (request.analysis === "grid") {
      const { gridParallel } = await import("../threads/grid-parallel.js");
      results.push(await gridParallel(request.data, theta, request.options, { threads }));
    } else {
      const { runAnalysis } = await import("../engine/run.js");
      results.push(runAnalysis(request.analysis, request.data, theta, request.options));
    }
  }
  // One theta row gives one object, as the service gives one job; several give a list, as an experiment.
  // (JSON.stringify writes NaN and the infinities as null, as api/json.ts toJson does.)
  io.stdout(JSON.stringify(results.length === 1 ? results[0] : results, undefined, args.pretty ? 2 : undefined) + "\n");
}

/**
 * Rows x combinations from which `rbp predict grid` starts helper threads. A helper in a fresh
 * process loads the engine's modules and compiles its code before it draws a chunk (about 150 ms of
 * CPU, measured by bench/cli.ts's profile notes), while this thread, already loaded, computes the
 * whole N = 1,000, K = 10 Grid (10^6) in about 60 ms cold: below ~5 x 10^6 a helper delivers no
 * chunk and only takes a core from the compiler and the collector. (The service's workers are warm:
 * its threshold, service/core.ts SPREAD_GRID_MIN_WORK, is lower.)
 */
export const CLI_SPREAD_MIN_WORK = 5_000_000;

/**
 * 1 (this thread alone) for a Grid below CLI_SPREAD_MIN_WORK, else undefined (gridParallel's default:
 * every core). Combinations as the planner counts them at most: the given list, else max_iter
 * capped at 2^K - 1.
 *
 * @example
 * helperThreads(1000, 10, { max_iter: 2000 }); // 1: 1,000 x 1,023 is below the threshold
 */
export function helperThreads(rows: number, cols: number, options: { max_iter: number; attribute_combi?: readonly unknown[] }): 1 | undefined {
  const combinations = options.attribute_combi?.length ?? Math.min(options.max_iter, 2 ** cols - 1);
  return rows * combinations < CLI_SPREAD_MIN_WORK ? 1 : undefined;
}

/** A command line the CLI cannot act on; exit code 2. */
export class UsageError extends RbpBaseError {
  static {
    brand(this, "UsageError");
  }
  override readonly name = "UsageError";
  constructor(message: string) {
    super(message, "usage");
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
