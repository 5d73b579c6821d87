/**
 * The shell: what the kernel does with each request of the Jupyter messaging protocol 5.3, on the
 * shell and control channels (the kernel side of ipykernel's `Kernel`). It knows nothing of
 * TypeScript: cells are translated (magics) and handed to the `Executor` (contract.ts).
 *
 * - Every request is wrapped in `status: busy` / `status: idle` on iopub, with the request as parent.
 * - Shell requests run one at a time, in order (a queue); control requests (interrupt, shutdown,
 *   kernel_info) are answered at once, even while a cell runs.
 * - execute_request: `execute_input` (with the execution count), the cell's outputs, its
 *   `execute_result` (the last value, display.ts) or its `error`, then the reply, which always
 *   carries `execution_count`. The count grows for each request with `store_history` and not
 *   `silent`; `silent` sends no execute_input and no execute_result. With `stop_on_error` (the
 *   default), a failed cell aborts the execute requests queued behind it (`status: aborted`), and
 *   those sent before the failure that arrive just after it.
 * - interrupt (control's interrupt_request, or SIGINT through `interrupt()`) aborts the running
 *   cell's `signal` and a pending input_request.
 * - A cell `name?` is IPython's help: the name's inspection as a `page` payload of the reply.
 * - history_request: tail, range and search (history.ts). comm_info_request: no comms. comm_open,
 *   comm_msg, comm_close: there are no comm targets, so a comm_open is closed at once (as ipykernel
 *   does for an unknown target) and front ends never wait.
 * - shutdown_request (control, or shell for old clients): the reply, idle, then `onShutdown`.
 *
 * Cursor positions on the wire are Unicode code points (protocol 5.2); the executor gets them as
 * such, and the magics' completion works in UTF-16 units (converted here).
 */
import type { CellOutput, ExecuteOutcome, Executor, MimeData } from "./contract.js";
import { DisplayHook, resultBundle } from "./display.js";
import type { History } from "./history.js";
import { completeMagic, prepareCell, RUNTIME_IMPORT, type PreparedCell } from "./magic-cells.js";
import { blankMagics, locateMagics } from "./magics.js";
import type { Message } from "./protocol/wire.js";
import { PROTOCOL_VERSION } from "./protocol/wire.js";
import type { SendChannel } from "./protocol/channels.js";

/** How the shell sends: a KernelChannels, or anything with its `send`. */
export interface Transport {
  send(channel: SendChannel, msgType: string, content: unknown, parent?: Message, metadata?: Record<string, unknown>): Promise<void>;
}

export interface ShellOptions {
  transport: Transport;
  executor: Executor;
  history: History;
  display: DisplayHook;
  /** The package's version (implementation_version). */
  version: string;
  /** Called after each kernel_info reply and its idle are sent (the kernel warms up after the first). */
  onKernelInfoSent?: () => void;
  /** Called after the shutdown reply and idle are sent. */
  onShutdown: (restart: boolean) => void;
  /** Kernel messages (dropped requests, failures of the kernel itself). */
  log?: (line: string) => void;
}

type Content = Record<string, unknown>;

/** Code points to UTF-16 units and back (the protocol counts code points). */
export function utf16Offset(text: string, codePoints: number): number {
  let units = 0;
  let cps = 0;
  for (const ch of text) {
    if (cps >= codePoints) break;
    units += ch.length;
    cps++;
  }
  return units;
}

export function codePointOffset(text: string, units: number): number {
  return [...text.slice(0, units)].length;
}

/** How long after a failure a late execute request sent before it is still aborted (see Shell.#abortQueued). */
export const STOP_ON_ERROR_WINDOW_MS = 2000;

/** A cell that asks for help on a name: `Math.max?` (not TypeScript, so never a cell's own code). */
const HELP_CELL = /^\s*([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)\?\s*$/;

const HELP_LINKS = [
  { text: "rbp-notebook kernels", url: "https://github.com/rbp-notebook/rbp-notebook/blob/main/docs/kernels.md" },
  { text: "TypeScript handbook", url: "https://www.typescriptlang.org/docs/handbook/intro.html" },
  { text: "Jupyter messaging protocol", url: "https://jupyter-client.readthedocs.io/en/stable/messaging.html" },
];

export class Shell {
  executionCount = 0;
  readonly #o: ShellOptions;
  readonly #queue: Message[] = [];
  #draining = false;
  #runtimeLoaded = false;
  /** The running cell's interrupt. */
  #interrupt: AbortController | undefined;
  /** The pending input_request's answer. */
  #input: { resolve: (value: string) => void; reject: (error: Error) => void } | undefined;
  #shuttingDown = false;
  /** The last failure with stop_on_error: its wall-clock time, and until when late requests are checked against it. */
  #failedAt: { wall: number; until: number } | undefined;

  constructor(options: ShellOptions) {
    this.#o = options;
  }

  /** A message from the shell channel: queued, handled in order. */
  onShell(message: Message): void {
    this.#queue.push(message);
    void this.#drain();
  }

  /** A message from the control channel: handled at once. */
  onControl(message: Message): void {
    void this.#handle(message, "control");
  }

  /** A message from the stdin channel: the answer to the pending input_request. */
  onStdin(message: Message): void {
    if (message.header.msg_type !== "input_reply") return;
    const pending = this.#input;
    this.#input = undefined;
    pending?.resolve(typeof message.content.value === "string" ? message.content.value : "");
  }

  /** Interrupts the running cell (SIGINT, interrupt_request); nothing when none runs. */
  interrupt(): void {
    this.#interrupt?.abort(new Error("KeyboardInterrupt"));
    const pending = this.#input;
    this.#input = undefined;
    pending?.reject(interruptedError());
  }

  async #drain(): Promise<void> {
    if (this.#draining) return;
    this.#draining = true;
    try {
      for (let m = this.#queue.shift(); m !== undefined; m = this.#queue.shift()) {
        if (m.header.msg_type === "execute_request" && this.#sentBeforeFailure(m)) await this.#abort(m);
        else await this.#handle(m, "shell");
      }
    } finally {
      this.#draining = false;
    }
  }

  async #handle(request: Message, channel: "shell" | "control"): Promise<void> {
    const send = this.#o.transport.send.bind(this.#o.transport);
    const type = request.header.msg_type;
    await send("iopub", "status", { execution_state: "busy" }, request);
    try {
      const reply = await this.#dispatch(request, channel);
      if (reply !== undefined) await send(channel, type.replace(/_request$/, "_reply"), reply, request);
    } catch (error) {
      // A failure of the kernel itself, not of a cell: the front end still gets a reply.
      this.#o.log?.(`rbp kernel: ${type} failed: ${(error as Error).stack ?? String(error)}`);
      if (type.endsWith("_request")) {
        await send(
          channel,
          type.replace(/_request$/, "_reply"),
          { status: "error", ename: "KernelError", evalue: (error as Error).message, traceback: [] },
          request,
        );
      }
    }
    await send("iopub", "status", { execution_state: "idle" }, request);
    if (type === "shutdown_request") this.#o.onShutdown(request.content.restart === true);
    if (type === "kernel_info_request") this.#o.onKernelInfoSent?.();
  }

  async #dispatch(request: Message, channel: "shell" | "control"): Promise<Content | undefined> {
    const c = request.content;
    switch (request.header.msg_type) {
      case "kernel_info_request":
        this.#o.display.kernelInfo();
        return this.kernelInfo();
      case "execute_request":
        return this.#execute(request);
      case "complete_request":
        return this.#complete(str(c.code), num(c.cursor_pos, [...str(c.code)].length));
      case "inspect_request": {
        const code = str(c.code);
        const r = await this.#o.executor.inspect(blankMagics(code), num(c.cursor_pos, [...code].length), c.detail_level === 1 ? 1 : 0);
        return { status: "ok", found: r.found, data: r.found ? r.data : {}, metadata: {} };
      }
      case "is_complete_request": {
        const code = str(c.code);
        if (locateMagics(code.split(/\r?\n/)).cell >= 0) return { status: "complete" };
        return { ...this.#o.executor.isComplete(blankMagics(code)) };
      }
      case "history_request":
        return { status: "ok", history: this.#history(c) };
      case "comm_info_request":
        return { status: "ok", comms: {} };
      case "comm_open":
        // No comm targets: closed at once, so the front end does not wait for one.
        await this.#o.transport.send("iopub", "comm_close", { comm_id: str(c.comm_id), data: {} }, request);
        return undefined;
      case "comm_msg":
      case "comm_close":
        return undefined;
      case "interrupt_request":
        this.interrupt();
        return { status: "ok" };
      case "shutdown_request":
        this.#shuttingDown = true;
        this.interrupt();
        return { status: "ok", restart: c.restart === true };
      case "connect_request": {
        return { status: "ok" };
      }
      default:
        this.#o.log?.(`rbp kernel: unknown message type ${request.header.msg_type} on ${channel}, not answered`);
        return undefined;
    }
  }

  /** The kernel_info_reply content. */
  kernelInfo(): Content {
    return {
      status: "ok",
      protocol_version: PROTOCOL_VERSION,
      implementation: "rbp",
      implementation_version: this.#o.version,
      language_info: {
        name: "typescript",
        version: this.#o.executor.languageVersion,
        mimetype: "text/typescript",
        file_extension: ".ts",
        pygments_lexer: "typescript",
        codemirror_mode: { name: "javascript", typescript: true },
      },
      banner: `TypeScript ${this.#o.executor.languageVersion} (rbp kernel ${this.#o.version}): cells are checked and run as one module; %lsmagic lists the magics`,
      help_links: HELP_LINKS,
      debugger: false,
    };
  }

  #history(c: Content): unknown[] {
    const q = { output: c.output === true, raw: c.raw !== false };
    const h = this.#o.history;
    switch (c.hist_access_type) {
      case "tail":
        return h.tail(num(c.n, 10), q);
      case "range":
        return h.range(optNum(c.session), optNum(c.start), optNum(c.stop), q);
      case "search":
        return h.search(str(c.pattern) || "*", { ...q, n: optNum(c.n), unique: c.unique === true });
      default:
        return [];
    }
  }

  async #complete(code: string, cursorCp: number): Promise<Content> {
    const cursor = utf16Offset(code, cursorCp);
    const magic = completeMagic(code, cursor);
    if (magic !== undefined) {
      return {
        status: "ok",
        matches: magic.candidates,
        cursor_start: codePointOffset(code, magic.start),
        cursor_end: codePointOffset(code, magic.end),
        metadata: {},
      };
    }
    const r = await this.#o.executor.complete(blankMagics(code), cursorCp);
    return { status: "ok", matches: r.matches, cursor_start: r.cursorStart, cursor_end: r.cursorEnd, metadata: r.metadata };
  }

  /** The output of one execute request (also the display hook's target until the next). */
  #cellOutput(request: Message, allowStdin: boolean): CellOutput {
    const t = this.#o.transport;
    return {
      stream: (name, text) => void t.send("iopub", "stream", { name, text }, request),
      display: (data, options = {}) => {
        const transient = options.displayId !== undefined ? { display_id: options.displayId } : {};
        const type = options.update === true && options.displayId !== undefined ? "update_display_data" : "display_data";
        void t.send("iopub", type, { data, metadata: options.metadata ?? {}, transient }, request);
      },
      clearOutput: (wait) => void t.send("iopub", "clear_output", { wait }, request),
      input: (prompt, password) => {
        if (!allowStdin)
          return Promise.reject(
            Object.assign(new Error("input was requested, but this front end does not allow stdin (allow_stdin: false)"), { name: "StdinNotImplementedError" }),
          );
        this.#input?.reject(new Error("a new input_request replaced this one"));
        return new Promise<string>((resolve, reject) => {
          this.#input = { resolve, reject };
          void t.send("stdin", "input_request", { prompt, password }, request);
        });
      },
    };
  }

  async #execute(request: Message): Promise<Content> {
    const c = request.content;
    const code = str(c.code);
    const silent = c.silent === true;
    const storeHistory = !silent && c.store_history !== false;
    const stopOnError = c.stop_on_error !== false;
    if (storeHistory) this.executionCount++;
    const count = this.executionCount;
    const t = this.#o.transport;
    if (!silent) await t.send("iopub", "execute_input", { code, execution_count: count }, request);
    if (this.#shuttingDown) return { status: "aborted", execution_count: count };
    const cell = prepareCell(code);
    if (storeHistory) this.#o.history.store(count, code, cell.ok ? cell.code : code);
    const help = HELP_CELL.exec(code);
    if (help !== null) {
      // `name?` (IPython's help): the inspection of the name, as a page payload.
      const r = await this.#o.executor.inspect(help[1], [...help[1]].length, 1);
      const data = r.found ? r.data : { "text/plain": `no information on ${help[1]}` };
      return { status: "ok", execution_count: count, user_expressions: {}, payload: [{ source: "page", data, start: 0 }] };
    }
    const output = this.#cellOutput(request, c.allow_stdin === true);
    this.#o.display.bind(output);
    const controller = new AbortController();
    this.#interrupt = controller;
    let outcome: ExecuteOutcome;
    try {
      outcome = await this.#run(request, cell, { executionCount: count, output, signal: controller.signal }, silent, storeHistory);
    } finally {
      this.#interrupt = undefined;
    }
    if (outcome.status === "ok") return { status: "ok", execution_count: count, user_expressions: {}, payload: [] };
    if (outcome.status === "error") {
      await t.send("iopub", "error", { ename: outcome.ename, evalue: outcome.evalue, traceback: outcome.traceback }, request);
    }
    if (stopOnError) await this.#abortQueued();
    if (outcome.status === "aborted") return { status: "aborted", execution_count: count };
    return { status: "error", execution_count: count, ename: outcome.ename, evalue: outcome.evalue, traceback: outcome.traceback };
  }

  /** Translates, loads the runtime when needed, executes, and shows the last value. */
  async #run(
    request: Message,
    cell: PreparedCell,
    context: { executionCount: number; output: CellOutput; signal: AbortSignal },
    silent: boolean,
    storeHistory: boolean,
  ): Promise<ExecuteOutcome> {
    if (!cell.ok) return cell.outcome;
    const executor = this.#o.executor;
    if (cell.usesRuntime && !this.#runtimeLoaded) {
      const loaded = await executor.execute(RUNTIME_IMPORT, { ...context, output: discard(context.output) });
      if (loaded.status !== "ok") {
        const why = loaded.status === "error" ? `${loaded.ename}: ${loaded.evalue}` : "aborted";
        const evalue = `the rbp runtime could not be loaded (${why}); is the package built (npm run build)?`;
        return { status: "error", ename: "KernelError", evalue, traceback: [`KernelError: ${evalue}`] };
      }
      this.#runtimeLoaded = true;
    }
    const outcome = await executor.execute(cell.code, cell.sourcePosition !== undefined ? { ...context, sourcePosition: cell.sourcePosition } : context);
    if (outcome.status !== "ok" || outcome.value === undefined) return outcome;
    let data: MimeData | undefined;
    try {
      data = await resultBundle(outcome.value.value);
    } catch (error) {
      const e = error instanceof Error ? error : new Error(String(error));
      return {
        status: "error",
        ename: e.name,
        evalue: `the value's Symbol.for("Jupyter.display") failed: ${e.message}`,
        traceback: [`${e.name}: the value's Symbol.for("Jupyter.display") failed: ${e.message}`],
      };
    }
    if (data === undefined) return outcome;
    if (storeHistory && typeof data["text/plain"] === "string") this.#o.history.setOutput(context.executionCount, data["text/plain"]);
    if (!silent) await this.#o.transport.send("iopub", "execute_result", { execution_count: context.executionCount, data, metadata: {} }, request);
    return outcome;
  }

  /**
   * After a failed cell with stop_on_error: the execute requests queued behind it are answered
   * `aborted` without running (ipykernel's abort of the queue). A request can reach the kernel a
   * little after the failure although it was sent before (front ends send "Run All" at once, and
   * messages on different sockets keep no order between them), so for a while after the failure
   * (`STOP_ON_ERROR_WINDOW_MS`, ipykernel's stop_on_error_timeout) a request still aborts when its
   * header's date is earlier than the failure: it was sent before the front end could know.
   */
  async #abortQueued(): Promise<void> {
    this.#failedAt = { wall: Date.now(), until: performance.now() + STOP_ON_ERROR_WINDOW_MS };
    // A turn of the event loop lets the readers take what ZeroMQ already holds.
    await new Promise((r) => setImmediate(r));
    const kept: Message[] = [];
    const aborted: Message[] = [];
    for (const m of this.#queue.splice(0)) (m.header.msg_type === "execute_request" ? aborted : kept).push(m);
    this.#queue.push(...kept);
    for (const m of aborted) await this.#abort(m);
  }

  /** Whether an execute request arriving now was sent before the last failure (see #abortQueued). */
  #sentBeforeFailure(request: Message): boolean {
    const failed = this.#failedAt;
    if (failed === undefined || performance.now() > failed.until) return false;
    const sent = typeof request.header.date === "string" ? Date.parse(request.header.date) : NaN;
    return Number.isFinite(sent) && sent < failed.wall;
  }

  async #abort(m: Message): Promise<void> {
    const t = this.#o.transport;
    await t.send("iopub", "status", { execution_state: "busy" }, m);
    await t.send("shell", "execute_reply", { status: "aborted", execution_count: this.executionCount }, m);
    await t.send("iopub", "status", { execution_state: "idle" }, m);
  }
}

/** An output that drops everything (the runtime's import). */
function discard(output: CellOutput): CellOutput {
  return { stream: () => undefined, display: () => undefined, clearOutput: () => undefined, input: (p, pw) => output.input(p, pw) };
}

function interruptedError(): Error {
  return Object.assign(new Error("interrupted while waiting for input"), { name: "KeyboardInterrupt" });
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");
const num = (v: unknown, fallback: number): number => (typeof v === "number" && Number.isFinite(v) ? v : fallback);
const optNum = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
