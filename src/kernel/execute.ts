/**
 * The language side of the rbp kernel: checks, compiles and runs cells (see contract.ts).
 *
 * - A cell is type-checked against the earlier cells (check.ts); a cell with a syntax or type error
 *   runs nothing and fails with `SyntaxError` / `CompileError` and tsc's lines
 *   (`cell 3, line 2:7 - error TS2322: ...`).
 * - It is compiled (transform.ts) and run as a script of the main realm (`vm.Script`,
 *   `runInThisContext`), so its values and the helper's modules share one set of built-ins
 *   (`instanceof` holds). Top-level declarations live on the kernel's scope (the new definition of a
 *   name wins). Imports resolve from the kernel's folder (`cwd`) with Node's own ESM loader.
 * - console and process.stdout/stderr go to the cell's output while it runs; console writes that come
 *   later (timers) go to the output of the last cell, and so do errors nobody caught (a throw in a
 *   timer, an unhandled rejection: `uncaughtException` / `unhandledRejection` listeners while the
 *   executor lives), which would otherwise end the kernel.
 * - Interrupt: the cell's own top-level code runs with vm's `breakOnSigint`, every step between its
 *   `await`s (transform.ts, mode "generator"), so SIGINT stops a busy loop there; while the cell
 *   awaits, `context.signal` ends it at once. Both give `{ status: "error", ename: "KeyboardInterrupt" }`.
 *   Not covered: a busy loop inside an async function after one of its own awaits, and the
 *   code of a cell with a top-level `for await` / `await using` after its first await.
 *
 * Creating an executor loads nothing heavy: the TypeScript compiler and the language service are
 * loaded by the first call that needs them, or by `warm()` in the background (which then parses
 * the declarations of rbp-notebook too, unless a request came first).
 *
 * @example
 * const executor = createExecutor({ cwd: process.cwd() });
 * const outcome = await executor.execute("const x = 1;\nx + 1", { executionCount: 1, output, signal });
 * // { status: "ok", value: { value: 2 } }
 */
import { readFileSync } from "node:fs";
import { Console } from "node:console";
import { createRequire, SourceMap } from "node:module";
import path from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import vm from "node:vm";
import type typescript from "typescript";
import type { CellChecker, CellDiagnostic } from "./check.js";
import type { CellOutput, CompletionResult, ExecuteContext, ExecuteOutcome, Executor, InspectResult, IsCompleteResult } from "./contract.js";
import type { transformCell } from "./transform.js";
import { RbpBaseError, brand } from "../errors/index.js";
import { completionResult, inspectResult, isCompleteWith } from "./complete.js";
import { CellFiles, errorOutcome, positionText, type CellFile, type ErrorOutcome } from "./traceback.js";

export interface ExecutorOptions {
  /** The notebook's folder: relative and bare imports of cells resolve from here. */
  cwd: string;
}

/** The executor with its warm-up. */
export interface KernelExecutor extends Executor {
  /**
   * Loads the compiler and the language service now (a first check of an empty cell), a step at a
   * time on the event loop. Resolves when warm; failures are left for the first cell to report.
   */
  warm(): Promise<void>;
}

interface Language {
  ts: typeof typescript;
  checker: CellChecker;
  transformCell: typeof transformCell;
  formatDiagnostic: (d: CellDiagnostic, label: string) => string;
}

const require = createRequire(import.meta.url);
const KERNEL_DIR = path.dirname(fileURLToPath(import.meta.url));
const ARGS = Symbol.for("rbp.kernel.cellArguments");
const INTERRUPTED = "ERR_SCRIPT_EXECUTION_INTERRUPTED";
/** What `warm` checks after the libraries: a notebook's usual first line, as a type-only import (nothing runs). */
const PACKAGE_WARM_CELL = `import type * as $rbp$package from "rbp-notebook";`;
/** How many compilations the executor keeps (cells run again). */
const COMPILED_KEPT = 256;

/** The TypeScript version the kernel checks and compiles with (read without loading the compiler). */
export function typescriptVersion(): string {
  const pkg = JSON.parse(readFileSync(require.resolve("typescript/package.json"), "utf8")) as { version: string };
  return pkg.version;
}

/** Files of the kernel itself: their frames are not shown in a cell's traceback. */
function isKernelFile(file: string): boolean {
  const name = file.startsWith("file://") ? fileURLToPath(file) : file;
  return path.dirname(name) === KERNEL_DIR || name.includes(`${path.sep}node_modules${path.sep}vitest${path.sep}`);
}

/** Runs `f` with Node's experimental warning for the main-context loader silenced. */
function quietly<T>(f: () => T): T {
  const emit = process.emitWarning;
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    const text = typeof warning === "string" ? warning : warning.message;
    if (text.includes("USE_MAIN_CONTEXT_DEFAULT_LOADER")) return;
    (emit as (...args: unknown[]) => void).call(process, warning, ...rest);
  }) as typeof process.emitWarning;
  try {
    return f();
  } finally {
    process.emitWarning = emit;
  }
}

/** The cell's signal fired (interrupt_request): caught by `run` and answered as an interrupted cell. */
class InterruptedError extends RbpBaseError {
  static {
    brand(this, "KernelInterruptedError");
  }

  override name = "KeyboardInterrupt";

  constructor(message: string) {
    super(message, "interrupted");
  }
}

type StreamName = "stdout" | "stderr";
type Write = typeof process.stdout.write;

function chunkText(chunk: unknown, encoding: unknown): string {
  if (typeof chunk === "string") return chunk;
  return Buffer.from(chunk as Uint8Array).toString(typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8");
}

/** A `write(chunk, encoding?, callback?)` that hands the text to `send`. */
function writer(send: (text: string) => void): Write {
  return ((chunk: unknown, encoding?: unknown, callback?: unknown) => {
    send(chunkText(chunk, encoding));
    if (typeof callback === "function") (callback as () => void)();
    else if (typeof encoding === "function") (encoding as () => void)();
    return true;
  }) as Write;
}

/**
 * Sends console and stdout/stderr writes to the output of the running (or last) cell, and errors
 * nobody caught (a throw in a timer, a rejected promise nobody handled) to its stderr, as
 * ipykernel does, instead of ending the kernel.
 */
class OutputRoute {
  current: CellOutput | undefined;
  private original: Console | undefined;
  private writes: Record<StreamName, Write> | undefined;

  constructor(private readonly describe: (error: unknown) => string[]) {}

  private readonly onUncaught = (error: unknown): void => {
    this.send("stderr", `${this.describe(error).join("\n")}\n`);
  };

  private send(name: StreamName, text: string): void {
    if (this.current) this.current.stream(name, text);
    else (this.writes?.[name] ?? process[name].write).call(process[name], text);
  }

  /** Replaces the global console for the life of the executor. */
  install(): void {
    if (this.original) return;
    this.original = globalThis.console;
    const stream = (name: StreamName) =>
      new Writable({
        decodeStrings: false,
        write: (chunk: unknown, encoding: BufferEncoding, callback: () => void) => {
          this.send(name, chunkText(chunk, encoding));
          callback();
        },
      });
    globalThis.console = new Console({ stdout: stream("stdout"), stderr: stream("stderr"), colorMode: false });
    process.on("uncaughtException", this.onUncaught);
    process.on("unhandledRejection", this.onUncaught);
  }

  /** Sends process.stdout/stderr.write to the cell, while it runs. */
  capture(): void {
    if (this.writes) return;
    this.writes = { stdout: process.stdout.write, stderr: process.stderr.write };
    process.stdout.write = writer((text) => this.send("stdout", text));
    process.stderr.write = writer((text) => this.send("stderr", text));
  }

  release(): void {
    if (!this.writes) return;
    process.stdout.write = this.writes.stdout;
    process.stderr.write = this.writes.stderr;
    this.writes = undefined;
  }

  dispose(): void {
    this.release();
    if (this.original) {
      globalThis.console = this.original;
      process.off("uncaughtException", this.onUncaught);
      process.off("unhandledRejection", this.onUncaught);
    }
    this.original = undefined;
    this.current = undefined;
  }
}

class CellExecutor implements KernelExecutor {
  readonly languageVersion: string;
  private readonly cwd: string;
  private language: Language | undefined;
  private loading: Promise<Language> | undefined;
  private readonly scope: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  private readonly cells = new CellFiles();
  private readonly route = new OutputRoute((error) => errorOutcome(error, this.cells, isKernelFile).traceback);
  private importer: ((specifier: string, options?: unknown) => Promise<unknown>) | undefined;
  private readonly cellRequire: NodeJS.Require;
  private counter = 0;
  /** Whether a request (a cell, a completion, an inspection) has used the language service. */
  private used = false;
  /** Compilations by references and code (least recently used first): a cell run again is not compiled again. */
  private readonly compiled = new Map<string, ReturnType<typeof transformCell>>();
  /** `input(prompt, { password })` of cells: an input_request through the running (or last) cell's output. */
  private readonly input = (prompt?: string, options?: { password?: boolean }): Promise<string> => {
    const output = this.route.current;
    if (!output) return Promise.reject(new Error("input() needs a running cell"));
    return output.input(String(prompt ?? ""), options?.password === true);
  };

  constructor(options: ExecutorOptions) {
    this.cwd = path.resolve(options.cwd);
    this.languageVersion = typescriptVersion();
    this.cellRequire = createRequire(path.join(this.cwd, "__rbp_kernel.js"));
  }

  /** The compiler and the language service, loaded once. */
  private load(): Promise<Language> {
    this.loading ??= (async () => {
      const ts = require("typescript") as typeof typescript;
      await new Promise((resolve) => setImmediate(resolve));
      const [check, transform] = await Promise.all([import("./check.js"), import("./transform.js")]);
      const checker = new check.CellChecker(this.cwd);
      await new Promise((resolve) => setImmediate(resolve));
      checker.warm();
      this.language = { ts, checker, transformCell: transform.transformCell, formatDiagnostic: check.formatDiagnostic };
      return this.language;
    })();
    return this.loading;
  }

  async warm(): Promise<void> {
    let language: Language;
    try {
      language = await this.load();
    } catch {
      return; // the first cell reports it
    }
    // The package's declarations too, while the kernel waits for its first cell (which, in a
    // notebook of this package, imports it): its check then finds them parsed. Skipped once a
    // request has used the language service (its own check comes first).
    await new Promise((resolve) => setImmediate(resolve));
    if (this.used) return;
    try {
      language.checker.warm(PACKAGE_WARM_CELL);
    } catch {
      // a warm-up that fails costs nothing but its time
    }
  }

  /** The dynamic import of cells: Node's ESM loader, resolving from the kernel's folder. */
  private importModule(specifier: string, options?: unknown): Promise<unknown> {
    const importer = (this.importer ??= quietly(
      () =>
        new vm.Script("(specifier, options) => import(specifier, options)", {
          filename: path.join(this.cwd, "__rbp_import.js"),
          importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
        }),
    ).runInThisContext() as (specifier: string, options?: unknown) => Promise<unknown>);
    return quietly(() => importer(specifier, options));
  }

  async execute(code: string, context: ExecuteContext): Promise<ExecuteOutcome> {
    this.used = true;
    const language = await this.load();
    const label = `cell ${context.executionCount}`;
    const checked = language.checker.check(code);
    const errors = checked.diagnostics.filter((d) => d.category === "error");
    if (errors.length > 0) return compileError(errors, label, code, context, language);
    const id = ++this.counter;
    const fileName = path.join(this.cwd, `__rbp_cell_${id}.js`);
    let script: vm.Script;
    let transformed: ReturnType<typeof transformCell>;
    try {
      transformed = this.transform(language, code, checked.fileName, checked.references);
      script = quietly(
        () =>
          new vm.Script(`${transformed.js}.apply(undefined, globalThis[Symbol.for("rbp.kernel.cellArguments")])`, {
            filename: fileName,
            importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
          }),
      );
    } catch (error) {
      return errorOutcome(error, this.cells, isKernelFile);
    }
    language.checker.commit(checked);
    this.cells.add(
      fileName,
      {
        label,
        code,
        map: new SourceMap(transformed.map as unknown as ConstructorParameters<typeof SourceMap>[0]),
        sourcePosition: context.sourcePosition,
      },
      transformed.map.mappings,
    );
    return this.run(script, fileName, transformed, context);
  }

  /** The cell compiled, or the same compilation as last time this code named the same earlier names. */
  private transform(language: Language, code: string, fileName: string, references: number[]): ReturnType<typeof transformCell> {
    const key = `${references.join(",")}\n${code}`;
    let transformed = this.compiled.get(key);
    if (transformed) this.compiled.delete(key);
    else transformed = language.transformCell(code, fileName, new Set(references));
    this.compiled.set(key, transformed);
    if (this.compiled.size > COMPILED_KEPT) this.compiled.delete(this.compiled.keys().next().value as string);
    return transformed;
  }

  private async run(
    script: vm.Script,
    fileName: string,
    cell: { hasValue: boolean; mode: "generator" | "async" },
    context: ExecuteContext,
  ): Promise<ExecuteOutcome> {
    if (context.signal.aborted) return interrupted();
    this.route.install();
    this.route.current = context.output;
    this.route.capture();
    const args = [
      this.scope,
      (specifier: string, options?: unknown) => this.importModule(specifier, options),
      this.cellRequire,
      this.input,
      Object.defineProperty,
    ];
    const holder = globalThis as unknown as Record<symbol, unknown>;
    let onAbort: (() => void) | undefined;
    try {
      holder[ARGS] = args;
      let promise: Promise<CellResult>;
      try {
        const started = quietly(() => script.runInThisContext({ breakOnSigint: true, displayErrors: false })) as unknown;
        promise = cell.mode === "generator" ? drive(started as CellGenerator) : (started as Promise<CellResult>);
      } finally {
        delete holder[ARGS];
      }
      // The cell may have aborted the signal itself, in its synchronous part.
      const aborted = new Promise<never>((_, reject) => {
        onAbort = () => reject(new InterruptedError("the cell was interrupted"));
        if (context.signal.aborted) onAbort();
        else context.signal.addEventListener("abort", onAbort, { once: true });
      });
      promise.catch(() => undefined); // an interrupted cell may fail later, unseen
      const result = await Promise.race([promise, aborted]);
      return cell.hasValue && result ? { status: "ok", value: { value: result.value } } : { status: "ok" };
    } catch (error) {
      if (error instanceof InterruptedError || (error as { code?: string } | null)?.code === INTERRUPTED) return interrupted();
      return errorOutcome(error, this.cells, isKernelFile, awaitFrame(error, this.cells.get(fileName)));
    } finally {
      if (onAbort) context.signal.removeEventListener("abort", onAbort);
      this.route.release();
    }
  }

  async complete(code: string, cursorPos: number): Promise<CompletionResult> {
    this.used = true;
    const language = await this.load();
    return completionResult(language.checker, code, cursorPos);
  }

  async inspect(code: string, cursorPos: number, detailLevel: 0 | 1): Promise<InspectResult> {
    this.used = true;
    const language = await this.load();
    return inspectResult(language.checker, code, cursorPos, detailLevel);
  }

  isComplete(code: string): IsCompleteResult {
    const ts = this.language?.ts ?? (require("typescript") as typeof typescript);
    return isCompleteWith(ts, code);
  }

  async dispose(): Promise<void> {
    this.route.dispose();
    if (this.loading) {
      const language = await this.loading.catch(() => undefined);
      language?.checker.dispose();
    }
  }
}

type CellResult = { value: unknown } | undefined;
type CellGenerator = Generator<unknown, CellResult, unknown>;

const STEP = Symbol.for("rbp.kernel.step");
let stepScript: vm.Script | undefined;

/** Runs `f` under vm's SIGINT watchdog (a SIGINT throws ERR_SCRIPT_EXECUTION_INTERRUPTED out of it). */
function guarded<T>(f: () => T): T {
  stepScript ??= new vm.Script(`globalThis[Symbol.for("rbp.kernel.step")]()`, { filename: "rbp-kernel-step.js" });
  const holder = globalThis as unknown as Record<symbol, unknown>;
  holder[STEP] = f;
  try {
    return stepScript.runInThisContext({ breakOnSigint: true, displayErrors: false }) as T;
  } finally {
    delete holder[STEP];
  }
}

/** Errors that came out of an `await` of a cell's top level, with the offset of that await in the cell. */
const awaitedAt = new WeakMap<object, number>();

/**
 * Runs a cell's generator to its end: each `yield [e, offset]` (the user's `await e`) waits for `e`,
 * and every step of the cell's own code runs under the SIGINT watchdog. An error that an await
 * threw into the cell and the cell did not catch is marked with the await's offset (`awaitedAt`).
 */
function drive(generator: CellGenerator): Promise<CellResult> {
  return new Promise<CellResult>((resolve, reject) => {
    let offset = -1;
    const step = (resume: () => IteratorResult<unknown, CellResult>, thrown?: unknown): void => {
      let result: IteratorResult<unknown, CellResult>;
      try {
        result = guarded(resume);
      } catch (error) {
        if (error === thrown && typeof error === "object" && error !== null && offset >= 0) awaitedAt.set(error, offset);
        reject(error);
        return;
      }
      if (result.done) {
        resolve(result.value);
        return;
      }
      const [value, at] = result.value as [unknown, number];
      offset = at;
      Promise.resolve(value).then(
        (v) => step(() => generator.next(v)),
        (error: unknown) => step(() => generator.throw(error), error),
      );
    };
    step(() => generator.next());
  });
}

/** The stack frame of the await where an error reached the cell's top level (`at cell 5, line 1:1`). */
function awaitFrame(error: unknown, file: CellFile | undefined): string[] {
  const offset = typeof error === "object" && error !== null ? awaitedAt.get(error) : undefined;
  if (offset === undefined || !file) return [];
  const before = file.code.slice(0, offset).split("\n");
  const line = before.length - 1;
  const column = before[line].length;
  const p = file.sourcePosition ? file.sourcePosition(line, column) : { line, column };
  return [`    at ${positionText({ file, line: p.line, column: p.column })}`];
}

function interrupted(): ErrorOutcome {
  return { status: "error", ename: "KeyboardInterrupt", evalue: "the cell was interrupted", traceback: ["KeyboardInterrupt: the cell was interrupted"] };
}

/** Syntax and type errors of a cell: nothing ran. */
function compileError(errors: CellDiagnostic[], label: string, code: string, context: ExecuteContext, language: Language): ErrorOutcome {
  const mapped = errors.map((d) => {
    const p = context.sourcePosition ? context.sourcePosition(d.line, d.column) : { line: d.line, column: d.column };
    return { ...d, line: p.line, column: p.column };
  });
  const lines = mapped.map((d) => language.formatDiagnostic(d, label));
  const ename = mapped.some((d) => d.syntactic) ? "SyntaxError" : "CompileError";
  const first = mapped[0];
  const source = context.sourcePosition ? undefined : code.split("\n")[first.line];
  const caret = source === undefined ? [] : ["", `    ${source}`, `    ${" ".repeat(first.column)}^`];
  return { status: "error", ename, evalue: lines[0], traceback: [...lines, ...caret] };
}

/** The kernel's executor for cells run in the notebook folder `cwd`. */
export function createExecutor(options: ExecutorOptions): KernelExecutor {
  return new CellExecutor(options);
}
