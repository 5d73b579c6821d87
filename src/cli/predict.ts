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
  // A Grid spreads its cells over the cores (unless options.inner_parallel is "off").
  const results = [];
  for (const theta of request.thetas) {
    if (singularity) {
      const { gridSingularity } = await import("../engine/singularity.js");
      results.push(gridSingularity(request.data, theta, request.options as never));
    } else if (request.analysis === "grid") {
      const { gridParallel } = await import("../threads/grid-parallel.js");
      results.push(await gridParallel(request.data, theta, request.options));
    } else {
      const { runAnalysis } = await import("../engine/run.js");
      results.push(runAnalysis(request.analysis, request.data, theta, request.options));
    }
  }
  // One theta row gives one object, as the service gives one job; several give a list, as an experiment.
  // (JSON.stringify writes NaN and the infinities as null, as api/json.ts toJson does.)
  io.stdout(JSON.stringify(results.length === 1 ? results[0] : results, undefined, args.pretty ? 2 : undefined) + "\n");
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
