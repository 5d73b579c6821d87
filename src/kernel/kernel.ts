/**
 * The rbp kernel's composition root: a Jupyter kernel for TypeScript of the project's own.
 *
 *     connection file -> KernelChannels (protocol/: ZeroMQ, signing) -> Shell (shell.ts: requests,
 *     magics, history, display) -> Executor (contract.ts: the language side)
 *
 * `startKernel` binds the channels, installs the display hook the helper finds
 * (`globalThis[Symbol.for("rbp.kernel")]`, display.ts), routes SIGINT to the running cell, and
 * answers from then on. Shutdown (and restart: the front end starts a new process) disposes of the
 * executor and closes the sockets (what is queued, the reply and the idle status, is delivered
 * first), then exits the process: the embedded prediction service a cell started lives in this
 * process, with its worker threads, and ends with it; the kernel starts no child process.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Executor } from "./contract.js";
import { DisplayHook } from "./display.js";
import { History } from "./history.js";
import { KernelChannels } from "./protocol/channels.js";
import { readConnection } from "./protocol/connection.js";
import { Shell } from "./shell.js";

export interface KernelOptions {
  /** The language side (created once; may still be loading its compiler). */
  executor: Executor;
  /** A JSON-lines file that keeps the history across sessions (absent: in memory). */
  historyFile?: string;
  /** Where the kernel's own messages go (default: stderr). */
  log?: (line: string) => void;
  /**
   * Called once, after the first kernel_info reply is sent: the moment to load the compiler
   * (front ends ask kernel_info first, and a kernel busy loading would answer it late).
   */
  ready?: () => void;
  /** What ends the process after a shutdown (default process.exit). */
  exit?: (code: number) => void;
}

export interface RunningKernel {
  shell: Shell;
  channels: KernelChannels;
  /** Closes everything the kernel holds (what a shutdown_request does before exiting). */
  close(): Promise<void>;
}

/** The package's version (kernel_info's implementation_version). */
export function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(fileURLToPath(new URL("../../package.json", import.meta.url)), "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

/**
 * Starts the kernel on a Jupyter connection file.
 *
 * @example
 * await startKernel("/run/user/1000/jupyter/kernel-1.json", { executor: createExecutor({ ... }) });
 */
export async function startKernel(connectionFile: string, options: KernelOptions): Promise<RunningKernel> {
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  const info = readConnection(connectionFile);
  const channels = await KernelChannels.open(info, log);
  const display = new DisplayHook();
  display.install();
  const history = new History(options.historyFile, (m) => log(`rbp kernel: ${m}`));
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      await options.executor.dispose().catch((e: unknown) => log(`rbp kernel: the executor did not close: ${String(e)}`));
      await channels.close();
      process.removeListener("SIGINT", onSigint);
    })());
  const shell = new Shell({
    transport: channels,
    executor: options.executor,
    history,
    display,
    version: packageVersion(),
    log,
    onKernelInfoSent: () => {
      const ready = options.ready;
      options.ready = undefined;
      ready?.();
    },
    onShutdown: () => {
      void close().finally(() => (options.exit ?? process.exit)(0));
    },
  });
  const onSigint = () => shell.interrupt();
  process.on("SIGINT", onSigint);
  channels.listen("shell", (m) => shell.onShell(m));
  channels.listen("control", (m) => shell.onControl(m));
  channels.listen("stdin", (m) => shell.onStdin(m));
  // ipykernel's "starting" status: a front end that already listens knows the kernel is up.
  void channels.send("iopub", "status", { execution_state: "starting" });
  return { shell, channels, close };
}
