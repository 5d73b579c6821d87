#!/usr/bin/env node
/**
 * The `rbp` command. Each command's module is imported when that command runs (the service, the
 * kernelspec writer and the report verifier are not loaded for `rbp predict`; predict.ts loads the
 * parser and the engine itself): a command pays only for its own code at start-up.
 */
import { readFileSync } from "node:fs";
import { InvalidInputError, ComputationError } from "../engine/errors.js";
import { predict, PREDICT_ANALYSES, PREDICT_USAGE, UsageError, type PredictAnalysis } from "./predict.js";
import { tuneShortRun } from "./tiering.js";

const USAGE = `Usage: rbp <command> [options]

Commands:
  predict <grid|maxfit|psr|grid-singularity> --input <file|->
                                               run one analysis locally and print its results as JSON
  serve [--port N] [--data-dir DIR] ...        run the local prediction service (API versions 3 and 2)
  worker --database postgres://...             run jobs of a team service kept in PostgreSQL
  kernel install [--user | --prefix DIR]       register the TypeScript (tslab) kernel with Jupyter
  verify <report.html> [--data F] [--json]     recompute a saved report's predictions with the local engine

Run "rbp <command> --help" for a command's options; "rbp --version" (-v) prints the version.`;

/** This package's version, from its package.json (two levels up from dist/cli/ and from src/cli/). */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;
}

const io = { stdout: (s: string) => void process.stdout.write(s), stderr: (s: string) => void process.stderr.write(s) };

// A reader that stops early (`rbp predict ... | head`) closes the pipe: stop quietly, as shell tools do.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error;
  process.exit();
});

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help") {
    io.stdout(USAGE + "\n");
    return command === undefined ? 2 : 0;
  }
  if (command === "--version" || command === "-v" || command === "version") {
    io.stdout(`${packageVersion()}\n`);
    return 0;
  }
  if (command === "predict") {
    if (rest.includes("--help") || rest.includes("-h")) {
      io.stdout(PREDICT_USAGE + "\n");
      return 0;
    }
    const args = parsePredictArgs(rest);
    // Before the engine loads: a short process on a busy machine optimises less (tiering.ts).
    tuneShortRun();
    await predict(args, io);
    return 0;
  }
  if (command === "serve") {
    const { parseServeArgs, serve, SERVE_USAGE } = await import("./serve.js");
    if (rest.includes("--help") || rest.includes("-h")) {
      io.stdout(SERVE_USAGE + "\n");
      return 0;
    }
    await serve(parseServeArgs(rest), io);
    return 0;
  }
  if (command === "worker") {
    const { parseWorkerArgs, worker, WORKER_USAGE } = await import("./worker.js");
    if (rest.includes("--help") || rest.includes("-h")) {
      io.stdout(WORKER_USAGE + "\n");
      return 0;
    }
    await worker(parseWorkerArgs(rest), io);
    return 0;
  }
  if (command === "kernel") {
    const { kernelCommand, KERNEL_USAGE, parseKernelArgs } = await import("./kernel.js");
    if (rest.includes("--help") || rest.includes("-h")) {
      io.stdout(KERNEL_USAGE + "\n");
      return 0;
    }
    kernelCommand(parseKernelArgs(rest), io);
    return 0;
  }
  if (command === "verify") {
    const { parseVerifyArgs, verify, VERIFY_USAGE } = await import("./verify.js");
    if (rest.includes("--help") || rest.includes("-h")) {
      io.stdout(VERIFY_USAGE + "\n");
      return 0;
    }
    // 0 only when every prediction and the page agree; 1 otherwise.
    return verify(parseVerifyArgs(rest), io);
  }
  throw new UsageError(`unknown command "${command}"\n\n${USAGE}`);
}

function parsePredictArgs(args: string[]): { analysis: PredictAnalysis; input: string; pretty: boolean } {
  let analysis: PredictAnalysis | undefined;
  let input: string | undefined;
  let pretty = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--input" || arg === "-i") {
      input = args[++i];
      if (input === undefined) throw new UsageError(`--input needs a file name (or - for standard input)\n\n${PREDICT_USAGE}`);
    } else if (arg.startsWith("--input=")) input = arg.slice("--input=".length);
    else if (arg === "--pretty") pretty = true;
    else if (analysis === undefined && !arg.startsWith("-")) {
      if (!(PREDICT_ANALYSES as readonly string[]).includes(arg))
        throw new UsageError(`unknown analysis "${arg}"; expected one of ${PREDICT_ANALYSES.join(", ")}`);
      analysis = arg as PredictAnalysis;
    } else throw new UsageError(`unexpected argument "${arg}"\n\n${PREDICT_USAGE}`);
  }
  if (analysis === undefined) throw new UsageError(`which analysis? expected one of ${PREDICT_ANALYSES.join(", ")}\n\n${PREDICT_USAGE}`);
  if (input === undefined) throw new UsageError(`--input is required\n\n${PREDICT_USAGE}`);
  return { analysis, input, pretty };
}

main(process.argv.slice(2)).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    if (error instanceof UsageError) {
      io.stderr(`rbp: ${error.message}\n`);
      process.exitCode = 2;
    } else if (error instanceof InvalidInputError) {
      io.stderr(`rbp: invalid input: ${error.message}\n`);
      process.exitCode = 3;
    } else if (error instanceof ComputationError) {
      io.stderr(`rbp: cannot compute: ${error.message}\n`);
      process.exitCode = 4;
    } else if (isNodeError(error) && error.code === "ENOENT") {
      io.stderr(`rbp: no such file: ${error.path}\n`);
      process.exitCode = 2;
    } else {
      io.stderr(`rbp: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exitCode = 1;
    }
  },
);

function isNodeError(error: unknown): error is NodeJS.ErrnoException {
  return error instanceof Error && "code" in error;
}
