/**
 * The rbp kernel: tslab's TypeScript kernel with magics and rich display of a cell's last value.
 *
 * It is tslab's own kernel, assembled the way tslab's `startKernel` does it (converters, executor,
 * JupyterHandlerImpl, ZmqServer; see internal/tslab.ts, the one adapter for tslab's internals) with three additions:
 *
 * 1. Magics. Every cell goes through `translate` (magics.ts) before tslab's executor sees it.
 *    Cells without magics reach tslab unchanged. A malformed magic is reported as an `error`
 *    output and an error reply (`ename` MagicError, the message, the line with a caret under the
 *    word), and nothing is compiled. The first cell that uses a magic first runs
 *    `import * as $rbp from "<dist>/kernel/runtime.js"` through tslab, so the runtime is an
 *    ordinary, typed import of the notebook (tslab keeps it for later cells).
 * 2. Diagnostics. tslab prints a compile error as `line:column - message`; on a line generated from
 *    a magic the column is moved back to the user's word in the cell (`sourcePosition`).
 *    A PredictionError thrown in a cell that uses magics becomes an `error` output with its
 *    readable text (tslab would print it on stderr).
 *    The kernel also publishes `execute_input` (which tslab leaves out), so a notebook executed
 *    headless gets its execution counts.
 * 3. The last value. tslab's executor hands a cell's last expression value to `console.log`; the
 *    kernel's console sends a value that has `Symbol.for("Jupyter.display")` (Deno's protocol:
 *    a method returning a mime bundle, or a promise of one) as an `execute_result` with that
 *    bundle, and gives every other value to the real console.log, which is exactly tslab's output.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { inspect } from "node:util";
import { CELL_MAGICS, LINE_MAGICS } from "./catalog.js";
import { OPTION_KEYS, type Analysis } from "../api/options.js";
import { blankMagics, locateMagics, sourcePosition, translate, RUNTIME_NAME, type MagicError, type Translation } from "./magics.js";
import {
  converterSet,
  loadTslab,
  type CompletionInfo,
  type ExecuteReply,
  type ExecuteRequest,
  type Executor,
  type ExecutorConsole,
  type IsCompleteReply,
  type KernelInfoReply,
  type Tslab,
  type WriteDisplayData,
  type WriteStream,
  type ZmqMessage,
} from "../internal/tslab.js";

/** The module the generated code calls (the built runtime.js beside this file). */
export const RUNTIME_PATH = fileURLToPath(new URL("./runtime.js", import.meta.url));

const DISPLAY = Symbol.for("Jupyter.display");
/** tslab's format of a compile diagnostic (executor.js printDiagnostics). */
const DIAGNOSTIC_FORMAT = "%s%d:%d - %s";

type Send = (msgType: string, content: Record<string, unknown>) => void;

/** What the kernel knows about the cell that is running. */
interface CellRun {
  send: Send | undefined;
  /** The translation, when the cell used magics. */
  translation?: Translation;
  /** The error reported for the cell (magic or runtime), for the execute reply. */
  error?: { ename: string; evalue: string; traceback: string[] };
}

function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(fileURLToPath(new URL("../../package.json", import.meta.url)), "utf8")) as { version: string }).version;
  } catch {
    return "unknown";
  }
}

function hasDisplay(value: unknown): value is { [DISPLAY](): unknown } {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as Record<symbol, unknown>)[DISPLAY] === "function";
}

function isPromiseLike(v: unknown): v is PromiseLike<unknown> {
  return typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";
}

/** A mime bundle as Jupyter wants it: only defined entries, and always text/plain. */
function mimeData(bundle: unknown, value: unknown): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  if (typeof bundle === "object" && bundle !== null) {
    for (const [k, v] of Object.entries(bundle)) if (v !== undefined && k.includes("/")) data[k] = v;
  }
  if (typeof data["text/plain"] !== "string") data["text/plain"] = inspect(value);
  return data;
}

/** The traceback of a malformed magic: the message, then the line with a caret under the word. */
export function magicTraceback(source: string, error: MagicError): string[] {
  const line = source.split(/\r?\n/)[error.line - 1] ?? "";
  const prefix = `line ${error.line}: `;
  const width = Math.max(1, Math.min(error.word.length, line.length - error.column + 1));
  return [`MagicError: ${error.message}`, `${prefix}${line}`, `${" ".repeat(prefix.length + error.column - 1)}${"^".repeat(width)}`];
}

/** Completion on a magic line: magic names after % or %%, option names in a cell magic. */
export function completeMagic(source: string, cursor: number): CompletionInfo | undefined {
  const lines = source.split("\n");
  let offset = 0;
  let index = 0;
  while (index < lines.length - 1 && offset + lines[index].length < cursor) offset += lines[index++].length + 1;
  const where = locateMagics(lines.map((l) => l.replace(/\r$/, "")));
  const inCell = where.cell >= 0 && index >= where.cell;
  if (!inCell && !where.lines.includes(index)) return undefined;
  const before = lines[index].slice(0, cursor - offset);
  const word = /[%\w]*$/.exec(before)![0];
  const start = cursor - word.length;
  if (word.startsWith("%%")) {
    return { start, end: cursor, candidates: CELL_MAGICS.map((n) => `%%${n}`).filter((c) => c.startsWith(word)) };
  }
  if (word.startsWith("%")) {
    return { start, end: cursor, candidates: [...LINE_MAGICS.map((n) => `%${n}`), ...CELL_MAGICS.map((n) => `%%${n}`)].filter((c) => c.startsWith(word)) };
  }
  if (inCell && index > where.cell && before.trim() === word) {
    const analysis = /%%(\w+)/.exec(lines[where.cell])?.[1] as Analysis | undefined;
    const keys = analysis !== undefined && Object.hasOwn(OPTION_KEYS, analysis) ? OPTION_KEYS[analysis] : [];
    return { start, end: cursor, candidates: keys.filter((k) => k.startsWith(word)) };
  }
  return { start: cursor, end: cursor, candidates: [] };
}

/** The mutable state of a running kernel, shared by its console, executor and handler. */
class KernelSession {
  /** The cell that is running. */
  active: CellRun | undefined;
  /** Whether the rbp runtime has been imported into tslab's session. */
  runtimeLoaded = false;
  /** Displays of last values that are promises, awaited before a cell ends. */
  readonly pendingDisplays: Array<Promise<unknown>> = [];
  /** The handler's execution count (set once the handler exists). */
  execCount: () => number = () => 0;

  constructor(
    readonly tslab: Tslab,
    readonly realConsole: ExecutorConsole,
  ) {}

  /** Reports an error of a cell: an `error` output and the execute reply's fields (stderr outside a cell). */
  fail(run: CellRun | undefined, ename: string, evalue: string, traceback: string[]): void {
    if (run === undefined) {
      this.realConsole.error(traceback.join("\n"));
      return;
    }
    run.error = { ename, evalue, traceback };
    if (run.send !== undefined) run.send("error", { ename, evalue, traceback });
    else this.realConsole.error(traceback.join("\n"));
  }

  /** Sends a last value with its mime bundle as the cell's `execute_result`. */
  sendValue(value: unknown, bundle: unknown): void {
    const data = mimeData(bundle, value);
    if (this.active?.send !== undefined) this.active.send("execute_result", { execution_count: this.execCount(), data, metadata: {} });
    else this.tslab.jupyter.lastWriteDisplayData?.({ data, metadata: {}, transient: {} }, false);
  }
}

/** The console tslab's executor writes to: last values with a display symbol, diagnostics moved back to the cell. */
function kernelConsole(session: KernelSession): ExecutorConsole {
  const realConsole = session.realConsole;
  return {
    // tslab calls this for the cell's last value only.
    log(...args: unknown[]) {
      const value = args[0];
      if (args.length !== 1 || !hasDisplay(value)) return realConsole.log(...args);
      let bundle: unknown;
      try {
        bundle = value[DISPLAY]();
      } catch (error) {
        realConsole.error('The value\'s Symbol.for("Jupyter.display") failed:', error);
        return realConsole.log(value);
      }
      if (isPromiseLike(bundle)) {
        const run = session.active;
        session.pendingDisplays.push(
          Promise.resolve(bundle).then(
            (b) => (session.active === run ? session.sendValue(value, b) : undefined),
            (error: unknown) => realConsole.error('The value\'s Symbol.for("Jupyter.display") failed:', error),
          ),
        );
        return;
      }
      session.sendValue(value, bundle);
    },
    error(...args: unknown[]) {
      const t = session.active?.translation;
      if (t !== undefined && args[0] === DIAGNOSTIC_FORMAT && args[1] === "" && typeof args[2] === "number" && typeof args[3] === "number") {
        const at = sourcePosition(t, args[2], args[3]);
        return realConsole.error(DIAGNOSTIC_FORMAT, "", at.line, at.column, args[4]);
      }
      const e = args[0];
      if (t !== undefined && args.length === 1 && e instanceof Error && e.name === "PredictionError") {
        const text = (e as Error & { text?: () => string }).text?.() ?? `${e.name}: ${e.message}`;
        return session.fail(session.active, e.name, e.message, text.split("\n"));
      }
      realConsole.error(...args);
    },
  };
}

/** tslab's executor with the magics translated first and the runtime imported on first use. */
function magicExecutor(session: KernelSession, inner: Executor): Executor {
  const runtimeImport = `import * as ${RUNTIME_NAME} from ${JSON.stringify(RUNTIME_PATH)};`;
  return {
    ...inner,
    async execute(src: string): Promise<boolean> {
      const run = session.active;
      // The protocol's execute_input (tslab sends none; nbclient takes the cell's count from it).
      run?.send?.("execute_input", { code: src, execution_count: session.execCount() });
      const t = translate(src);
      if ("error" in t) {
        session.fail(run, "MagicError", t.error.message, magicTraceback(src, t.error));
        return false;
      }
      if (t.usesRuntime && !session.runtimeLoaded) {
        if (!(await inner.execute(runtimeImport))) {
          session.fail(run, "KernelError", `the rbp runtime could not be loaded from ${RUNTIME_PATH}`, [
            `KernelError: the rbp runtime could not be loaded from ${RUNTIME_PATH} (see the messages above); is the package built (npm run build)?`,
          ]);
          return false;
        }
        session.runtimeLoaded = true;
      }
      if (run !== undefined && t.magics.length > 0) run.translation = t;
      const ok = await inner.execute(t.code);
      await Promise.all(session.pendingDisplays.splice(0));
      return ok && run?.error === undefined;
    },
    inspect: (src, position) => inner.inspect(blankMagics(src), position),
    complete: (src, position) => completeMagic(src, position) ?? inner.complete(blankMagics(src), position),
  };
}

/** The handler's class: tslab's JupyterHandlerImpl with the kernel info, the cell's sender and magic-aware is-complete. */
function handlerClass(session: KernelSession) {
  const tslab = session.tslab;
  return class RbpHandler extends tslab.JupyterHandlerImpl {
    /** The sender of the execute request being handed over by the server (see serverClass). */
    nextSend: Send | undefined;
    readonly #runs = new WeakMap<object, CellRun>();

    override handleKernel(): KernelInfoReply {
      return {
        ...super.handleKernel(),
        implementation: "rbp",
        implementation_version: packageVersion(),
        banner: `TypeScript (rbp): tslab ${tslab.version} with the rbp-notebook magics (%lsmagic lists them)`,
      };
    }

    override async handleExecute(req: ExecuteRequest, writeStream: WriteStream, writeDisplayData: WriteDisplayData): Promise<ExecuteReply> {
      const run: CellRun = { send: this.nextSend };
      this.nextSend = undefined;
      this.#runs.set(req, run);
      const reply = await super.handleExecute(req, writeStream, writeDisplayData);
      if (reply.status === "error" && run.error !== undefined) Object.assign(reply, run.error);
      return reply;
    }

    override async handleExecuteImpl(req: ExecuteRequest, writeStream: WriteStream, writeDisplayData: WriteDisplayData): Promise<unknown> {
      session.active = this.#runs.get(req) ?? { send: undefined };
      return super.handleExecuteImpl(req, writeStream, writeDisplayData);
    }

    override handleIsComplete(req: { code: string }): IsCompleteReply {
      if (locateMagics(req.code.split(/\r?\n/)).cell >= 0) return { status: "complete" };
      return super.handleIsComplete({ ...req, code: blankMagics(req.code) });
    }
  };
}

type RbpHandler = InstanceType<ReturnType<typeof handlerClass>>;

/** The server's class: tslab's ZmqServer handing each execute request's own sender to the handler. */
function serverClass(tslab: Tslab, handler: RbpHandler) {
  return class RbpServer extends tslab.ZmqServer {
    // The handler takes it synchronously (handleExecute of the base class calls the handler before its first await).
    override handleExecute(sock: unknown, msg: ZmqMessage): Promise<void> {
      handler.nextSend = (msgType, content) => {
        const m = msg.createReply();
        m.header.msg_type = msgType;
        m.content = content;
        m.signAndSend(this.connInfo.key, this.iopub);
      };
      return super.handleExecute(sock, msg);
    }
  };
}

/**
 * Starts the kernel on a Jupyter connection file: the composition root, assembled as tslab's own
 * `startKernel` (main.ts) does, with the rbp console, executor, handler and server.
 */
export function startKernel(configPath: string, tslab: Tslab = loadTslab()): void {
  const session = new KernelSession(tslab, { log: (...a) => console.log(...a), error: (...a) => console.error(...a) });
  const converters = converterSet(tslab);
  void converters.node; // warmed before the first cell, as tslab's startKernel does
  const executor = magicExecutor(session, tslab.createExecutor(process.cwd(), converters, kernelConsole(session)));
  const handler = new (handlerClass(session))(executor, false);
  session.execCount = () => handler.execCount;
  const server = new (serverClass(tslab, handler))(handler, configPath);
  process.on("SIGINT", () => executor.interrupt());
  process.on("uncaughtException", (err) => console.error("UncaughtException:", err));
  process.on("unhandledRejection", (reason) => console.error("UnhandledPromiseRejection:", reason));
  void server.init();
}
