/**
 * The seam between the rbp kernel's two halves:
 *
 * - the **protocol side** (session, shell, history, display hooks, magics, main): it speaks the
 *   Jupyter messaging protocol and knows nothing of TypeScript;
 * - the **language side** (transform, check, execute, complete/inspect): it turns a cell into
 *   running code and knows nothing of ZeroMQ or message headers.
 *
 * The shell owns one `Executor` for the life of the kernel process and calls it one request at a
 * time (Jupyter's shell channel is sequential); `complete`, `inspect` and `isComplete` may be called
 * between executions, never during one. Cursor positions are in Unicode code points, as the
 * protocol (5.2 and later) counts them, not UTF-16 units.
 */

/** A Jupyter mime bundle: mime type to data (text, or JSON for `+json` types). */
export type MimeData = Record<string, unknown>;

/** Where a running cell's outputs go. The shell binds one per execute_request. */
export interface CellOutput {
  /** stdout / stderr text (console.log, console.error, process.stdout.write while the cell runs). */
  stream(name: "stdout" | "stderr", text: string): void;
  /** A display_data message, or update_display_data when `update` is true (needs a display id). */
  display(data: MimeData, options?: { metadata?: Record<string, unknown>; displayId?: string; update?: boolean }): void;
  /** clear_output. */
  clearOutput(wait: boolean): void;
  /**
   * An input_request on the stdin channel. Rejects (with an error the executor reports as the cell's
   * error) when the front end did not allow stdin for this request.
   */
  input(prompt: string, password: boolean): Promise<string>;
}

/** How a cell ended. */
export type ExecuteOutcome =
  | {
      status: "ok";
      /**
       * The cell's last expression value, when the cell ends in an expression statement (even
       * `undefined`, which the shell does not show). Absent when the cell ends in anything else.
       */
      value?: { readonly value: unknown };
    }
  | {
      status: "error";
      /** The error's name (`TypeError`, `ReferenceError`, `CompileError` for type errors, ...). */
      ename: string;
      evalue: string;
      /** Lines for the front end, pointing at the cell and line the user wrote, never at generated code. */
      traceback: string[];
    }
  | { status: "aborted" };

export interface ExecuteContext {
  executionCount: number;
  output: CellOutput;
  /** Aborted when the front end interrupts the kernel (SIGINT or interrupt_request). */
  signal: AbortSignal;
  /**
   * Maps a (0-based) line and column of the code given back to the cell the user wrote, for code
   * generated from magics. Identity when absent.
   */
  sourcePosition?: (line: number, column: number) => { line: number; column: number };
}

export interface CompletionResult {
  matches: string[];
  cursorStart: number;
  cursorEnd: number;
  metadata: Record<string, unknown>;
}

export interface InspectResult {
  found: boolean;
  /** A mime bundle (text/plain at least) when found. */
  data: MimeData;
}

export interface IsCompleteResult {
  status: "complete" | "incomplete" | "invalid" | "unknown";
  /** For incomplete code: the indent the next line should get. */
  indent?: string;
}

/** The language side, as the shell sees it. */
export interface Executor {
  /** The TypeScript version that checks and compiles cells (language_info.version). */
  readonly languageVersion: string;
  execute(code: string, context: ExecuteContext): Promise<ExecuteOutcome>;
  complete(code: string, cursorPos: number): CompletionResult | Promise<CompletionResult>;
  inspect(code: string, cursorPos: number, detailLevel: 0 | 1): InspectResult | Promise<InspectResult>;
  isComplete(code: string): IsCompleteResult;
  /** Stops timers and handles the executor holds, so the process can exit. */
  dispose(): Promise<void>;
}
