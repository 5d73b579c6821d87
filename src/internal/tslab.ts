/**
 * The one adapter for tslab's internals (private: see internal/README.md). Both the rbp kernel
 * (kernel/kernel.ts) and the display helper (display/jupyter.ts) reach tslab only through here.
 * tslab is a dependency of this package, pinned (package.json: exactly 1.0.22) because these are its
 * internal modules, not its public API; `loadTslab` refuses any other version rather than misbehave.
 *
 * What is used, from `tslab/dist/`:
 * - `converter.js` `createConverter({ isJS, isBrowser })`: the TypeScript compiler service of a
 *   kernel (tslab's `startKernel` builds the same pair, one for Node and one for the browser).
 * - `executor.js` `createExecutor(rootDir, converters, console)`: compiles and runs a cell. It
 *   calls `console.log(value)` for the cell's last expression value (only there) and
 *   `console.error(...)` for compile diagnostics (`"%s%d:%d - %s", file, line, column, text`) and
 *   for a thrown error; the rbp kernel passes its own console to see both.
 * - `jupyter.js` `JupyterHandlerImpl` (execute queue, execution count, stdout/stderr to the cell,
 *   kernel info, completion, inspection) and `ZmqServer` (the Jupyter wire protocol over ZeroMQ),
 *   extended by subclassing: `handleExecute` and `handleExecuteImpl` of the handler, and
 *   `handleExecute(sock, msg)` of the server with `msg.createReply()`, `reply.signAndSend(key,
 *   socket)`, `server.connInfo.key` and `server.iopub`, to send `execute_result` and `error`
 *   messages that tslab itself never sends.
 * - `jupyter.js` `lastWriteDisplayData`: the display sender of the running cell. `display()` finds
 *   it with `tslabWriter()` in the CommonJS module cache (where the kernel, tslab's or rbp's, loaded
 *   it), not by loading tslab itself: code that merely displays must not start a second tslab.
 * - `globalThis.__tslab__`: set by tslab's executor while a cell runs (it passes the cell's
 *   `require` that way); `tslabGlobal()` reads it, and `tslabPublic()` is the public
 *   `require("tslab")` seen from the cell.
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

export const TSLAB_VERSION = "1.0.22";

export interface Converter {
  close(): void;
}

export interface ConverterSet {
  readonly node: Converter;
  readonly browser: Converter;
  close(): void;
}

export interface CompletionInfo {
  start: number;
  end: number;
  candidates: string[];
  original?: unknown;
}

export interface Executor {
  execute(src: string): Promise<boolean>;
  inspect(src: string, position: number): unknown;
  complete(src: string, position: number): CompletionInfo;
  locals: Record<string, unknown>;
  reset(): void;
  interrupt(): void;
  close(): void;
}

export interface ExecutorConsole {
  log(...args: unknown[]): void;
  error(...args: unknown[]): void;
}

export interface ExecuteRequest {
  code: string;
  silent?: boolean;
  store_history?: boolean;
  [key: string]: unknown;
}

export interface ExecuteReply {
  status: "ok" | "error" | "abort";
  execution_count?: number;
  ename?: string;
  evalue?: string;
  traceback?: string[];
}

export interface DisplayMessage {
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
  transient: Record<string, unknown>;
}

export type WriteStream = (name: "stdout" | "stderr", text: string) => void;
export type WriteDisplayData = (message: DisplayMessage, update: boolean) => void;

export interface KernelInfoReply {
  protocol_version: string;
  implementation: string;
  implementation_version: string;
  language_info: Record<string, unknown>;
  banner: string;
  help_links?: Array<{ text: string; url: string }>;
}

export interface IsCompleteReply {
  status: "complete" | "incomplete" | "invalid" | "unknown";
  indent?: string;
}

/** tslab's JupyterHandlerImpl, as far as the rbp kernel uses and overrides it. */
export interface JupyterHandler {
  execCount: number;
  handleKernel(): KernelInfoReply;
  handleExecute(req: ExecuteRequest, writeStream: WriteStream, writeDisplayData: WriteDisplayData): Promise<ExecuteReply>;
  handleExecuteImpl(req: ExecuteRequest, writeStream: WriteStream, writeDisplayData: WriteDisplayData): Promise<unknown>;
  handleIsComplete(req: { code: string }): IsCompleteReply;
  handleInspect(req: { code: string; cursor_pos: number; detail_level?: number }): unknown;
  handleComplete(req: { code: string; cursor_pos: number }): unknown;
  close(): void;
}

/** A wire message of tslab's ZmqServer. */
export interface ZmqMessage {
  header: { msg_type: string; [key: string]: unknown };
  content: Record<string, unknown>;
  createReply(): ZmqMessage;
  signAndSend(key: string, socket: unknown): void;
}

/** tslab's ZmqServer, as far as the rbp kernel uses and overrides it. */
export interface ZmqServer {
  handler: JupyterHandler;
  connInfo: { key: string; [key: string]: unknown };
  iopub: unknown;
  handleExecute(sock: unknown, msg: ZmqMessage): Promise<void>;
  init(): Promise<void>;
  close(): void;
}

export interface Tslab {
  version: string;
  /** tslab's package directory. */
  root: string;
  createConverter(options: { isJS: boolean; isBrowser: boolean }): Converter;
  createExecutor(rootDir: string, converters: ConverterSet, console: ExecutorConsole): Executor;
  JupyterHandlerImpl: new (executor: Executor, isJs: boolean) => JupyterHandler;
  ZmqServer: new (handler: JupyterHandler, configPath: string) => ZmqServer;
  /** The module whose `lastWriteDisplayData` is the running cell's display sender. */
  jupyter: { lastWriteDisplayData: WriteDisplayData | null };
}

/** Loads tslab's internals from the tslab this package depends on; throws on any other version. */
export function loadTslab(): Tslab {
  const require = createRequire(import.meta.url);
  const root = dirname(require.resolve("tslab/package.json"));
  const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
  if (version !== TSLAB_VERSION) {
    throw new Error(
      `the rbp kernel is built on tslab ${TSLAB_VERSION} (its internal modules), but tslab ${version} is installed at ${root}; install tslab@${TSLAB_VERSION}`,
    );
  }
  const dist = (name: string) => require(join(root, "dist", name)) as Record<string, unknown>;
  const converter = dist("converter.js");
  const executor = dist("executor.js");
  const jupyter = dist("jupyter.js");
  return {
    version,
    root,
    createConverter: converter.createConverter as Tslab["createConverter"],
    createExecutor: executor.createExecutor as Tslab["createExecutor"],
    JupyterHandlerImpl: jupyter.JupyterHandlerImpl as Tslab["JupyterHandlerImpl"],
    ZmqServer: jupyter.ZmqServer as Tslab["ZmqServer"],
    jupyter: jupyter as Tslab["jupyter"],
  };
}

/** The converters of a kernel, made when first needed (what tslab's startKernel does). */
export function converterSet(tslab: Tslab): ConverterSet {
  let node: Converter | undefined;
  let browser: Converter | undefined;
  return {
    get node() {
      return (node ??= tslab.createConverter({ isJS: false, isBrowser: false }));
    },
    get browser() {
      return (browser ??= tslab.createConverter({ isJS: false, isBrowser: true }));
    },
    close() {
      node?.close();
      browser?.close();
    },
  };
}

/** tslab's `__tslab__` global, set while a tslab cell runs; undefined elsewhere. */
export function tslabGlobal(): { require?: (id: string) => unknown } | undefined {
  const g = (globalThis as Record<string, unknown>).__tslab__;
  return typeof g === "object" && g !== null ? (g as { require?: (id: string) => unknown }) : undefined;
}

const TSLAB_JUPYTER = /[\\/]tslab[\\/]dist[\\/]jupyter\.js$/;

/** The exports of tslab's `dist/jupyter.js` as the kernel loaded them (CommonJS module cache), each in turn. */
function* tslabJupyterModules(): Generator<Record<string, unknown>> {
  const cache = createRequire(import.meta.url).cache;
  for (const [file, mod] of Object.entries(cache)) {
    if (TSLAB_JUPYTER.test(file) && typeof mod?.exports === "object" && mod.exports !== null) yield mod.exports as Record<string, unknown>;
  }
}

/** tslab's display sender for the running cell, from the CommonJS module cache (see the module comment). */
export function tslabWriter(): WriteDisplayData | undefined {
  for (const exports of tslabJupyterModules()) {
    if (typeof exports.lastWriteDisplayData === "function") return exports.lastWriteDisplayData as WriteDisplayData;
  }
  return undefined;
}

/** The prototype of the running kernel's `ZmqServer` (its `handleKernelInfo` answers a front end that connects). */
export function tslabServerPrototype(): Record<string | symbol, unknown> | undefined {
  for (const exports of tslabJupyterModules()) {
    const proto = (exports.ZmqServer as { prototype?: Record<string | symbol, unknown> } | undefined)?.prototype;
    if (proto !== undefined && typeof proto.handleKernelInfo === "function") return proto;
  }
  return undefined;
}

/** tslab's public API as the running cell sees it (`require("tslab")`), when there is one. */
export interface TslabPublic {
  display?: { html?: (s: string) => void; text?: (s: string) => void };
}

export function tslabPublic(): TslabPublic | undefined {
  try {
    return tslabGlobal()?.require?.("tslab") as TslabPublic | undefined;
  } catch {
    return undefined;
  }
}
