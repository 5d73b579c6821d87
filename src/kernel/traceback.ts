/**
 * Runtime errors of cells, as a person reads them: the error's name and message, and the stack
 * frames mapped back to the cell and line the user wrote (`at f (cell 2, line 3:9)`), without the
 * kernel's own frames or Node's internals, then the line of the innermost cell frame with a caret.
 *
 * @example
 * const cells = new CellFiles();
 * cells.add(file, { label: "cell 2", code, map });
 * errorOutcome(error, cells); // { status: "error", ename: "TypeError", evalue: "...", traceback: [...] }
 */
import { SourceMap } from "node:module";
import { inspect } from "node:util";

export interface CellFile {
  /** How messages name the cell: `cell 3`. */
  label: string;
  /** The code the user wrote (after magics, before the transform). */
  code: string;
  /** The source map of the script, back to `code` (0-based lines and columns). */
  map: SourceMap;
  /** Maps a position of `code` back to the cell the user wrote (magics). */
  sourcePosition?: (line: number, column: number) => { line: number; column: number };
  /** The cell the user wrote, for the line shown under the traceback. */
  source?: string;
}

/** A position in a cell the user wrote (0-based). */
export interface CellPosition {
  file: CellFile;
  line: number;
  column: number;
}

/** The scripts of the cells run so far, by file name. */
export class CellFiles {
  private readonly files = new Map<string, CellFile>();
  /** The script lines (0-based) that have mappings: the wrapper's own lines have none. */
  private readonly mapped = new Map<string, Set<number>>();

  add(fileName: string, file: CellFile, mappings: string): void {
    this.files.set(fileName, file);
    const lines = new Set<number>();
    mappings.split(";").forEach((segments, line) => {
      if (segments.length > 0) lines.add(line);
    });
    this.mapped.set(fileName, lines);
  }

  get(fileName: string): CellFile | undefined {
    return this.files.get(fileName);
  }

  /** A script position (1-based line and column, as stack traces give them) in the cell the user wrote. */
  locate(fileName: string, line: number, column: number): CellPosition | undefined {
    const file = this.files.get(fileName);
    if (!file || !this.mapped.get(fileName)?.has(line - 1)) return undefined;
    const entry = file.map.findEntry(line - 1, column - 1) as { originalLine?: number; originalColumn?: number };
    if (entry.originalLine === undefined || entry.originalColumn === undefined) return undefined;
    const original = file.sourcePosition
      ? file.sourcePosition(entry.originalLine, entry.originalColumn)
      : { line: entry.originalLine, column: entry.originalColumn };
    return { file, line: original.line, column: original.column };
  }
}

const FRAME = /^\s*at (?:(.*?) \()?(.*?):(\d+):(\d+)\)?$/;

/** `cell 3, line 2:7` (1-based, as tsc writes positions). */
export function positionText(p: CellPosition): string {
  return `${p.file.label}, line ${p.line + 1}:${p.column + 1}`;
}

/** The frames of a stack that belong to cells (mapped) or to other user code, the kernel's dropped. */
export function mapStack(stack: string, cells: CellFiles, isKernelFile: (file: string) => boolean): { frames: string[]; innermost?: CellPosition } {
  const frames: string[] = [];
  let innermost: CellPosition | undefined;
  for (const line of stack.split("\n")) {
    const m = FRAME.exec(line);
    if (!m) continue;
    const [, name, file, lineText, columnText] = m;
    if (cells.get(file)) {
      const position = cells.locate(file, Number(lineText), Number(columnText));
      if (!position) continue; // the wrapper's own lines
      innermost ??= position;
      const where = positionText(position);
      // A function of an earlier cell is called through the scope object: V8 names it `Object.f`.
      const fn = name?.replace(/^(async )?Object\./, "$1");
      const isTop = !fn || fn === "<anonymous>" || fn === "async <anonymous>";
      frames.push(isTop ? `    at ${where}` : `    at ${fn} (${where})`);
      continue;
    }
    if (file.startsWith("node:") || isKernelFile(file)) {
      if (frames.length > 0 && isKernelFile(file)) break; // the kernel called the cell: nothing above it is the user's
      continue;
    }
    frames.push(line.replace(/^\s*/, "    "));
  }
  return { frames, innermost };
}

/** The cell line at a position, with a caret under the column. */
export function snippet(p: CellPosition): string[] {
  // Code generated from magics: only the cell the user wrote has the right line.
  if (p.file.sourcePosition && p.file.source === undefined) return [];
  const text = p.file.source ?? p.file.code;
  const line = text.split("\n")[p.line];
  if (line === undefined) return [];
  return [`${positionText(p)}:`, `    ${line}`, `    ${" ".repeat(p.column)}^`];
}

export interface ErrorOutcome {
  status: "error";
  ename: string;
  evalue: string;
  traceback: string[];
}

/** A thrown value as the cell's error outcome; `outerFrames` go below the stack's own (the await where the cell got the error). */
export function errorOutcome(error: unknown, cells: CellFiles, isKernelFile: (file: string) => boolean, outerFrames: string[] = []): ErrorOutcome {
  if (!(error instanceof Error)) {
    const evalue = typeof error === "string" ? error : inspect(error);
    return { status: "error", ename: "Uncaught", evalue, traceback: [`Uncaught ${evalue}`] };
  }
  const ename = error.name || error.constructor?.name || "Error";
  const evalue = error.message;
  const { frames, innermost } = mapStack(error.stack ?? "", cells, isKernelFile);
  const traceback = [evalue ? `${ename}: ${evalue}` : ename, ...frames, ...outerFrames.filter((f) => !frames.includes(f))];
  const lines = innermost ? snippet(innermost) : [];
  if (lines.length > 0) traceback.push("", ...lines);
  return { status: "error", ename, evalue, traceback };
}
