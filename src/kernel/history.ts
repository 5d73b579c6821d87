/**
 * The kernel's input history, as IPython keeps it and `history_request` reads it: every executed
 * cell stored with `store_history` is a line `(session, line, input)` of the current session
 * (lines count from 1, as execution counts do), with the cell as written (`raw`) and as run
 * (magics translated), and the text/plain of its result when it had one (`output`).
 *
 * Sessions: a kernel process is one session. Without a file it is session 1 and the history lives
 * as long as the kernel. With a file (`--history <file>`, JSON lines, one entry per line) the
 * earlier sessions are read back at start-up, the new session is numbered after the last, and each
 * entry is appended as it is stored; a file that cannot be read or written is reported once and
 * the history goes on in memory. Reads (`tail`, `range`, `search`) are bounded: at most
 * `MAX_REPLY` entries per reply.
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";

export interface HistoryEntry {
  session: number;
  line: number;
  /** The cell as the user wrote it. */
  raw: string;
  /** The code that ran (magics translated). */
  source: string;
  /** The text/plain of the cell's result, if any. */
  output?: string;
}

/** A row of a history_reply: `[session, line, input]` or `[session, line, [input, output]]`. */
export type HistoryRow = [number, number, string] | [number, number, [string, string | null]];

export interface HistoryQuery {
  output?: boolean;
  raw?: boolean;
}

/** At most this many rows in one history_reply. */
export const MAX_REPLY = 10_000;
/** At most this many entries kept from earlier sessions. */
const MAX_KEPT = 100_000;

export class History {
  readonly #entries: HistoryEntry[] = [];
  /** The current session's number. */
  readonly session: number;
  #file: string | undefined;

  /**
   * @example
   * const h = new History();                   // in memory, session 1
   * const p = new History("/home/me/.rbp-history.jsonl"); // earlier sessions read back
   */
  constructor(
    file?: string,
    readonly warn: (message: string) => void = () => undefined,
  ) {
    this.#file = file;
    let last = 0;
    if (file !== undefined && existsSync(file)) {
      try {
        for (const line of readFileSync(file, "utf8").split("\n")) {
          if (line.trim() === "") continue;
          const e = parseEntry(line);
          if (e === undefined) continue;
          if (e.raw === undefined) {
            const stored = lastOf(this.#entries, e.session, e.line);
            if (stored !== undefined) stored.output = e.output;
            continue;
          }
          this.#entries.push(e as HistoryEntry);
          last = Math.max(last, e.session);
        }
        if (this.#entries.length > MAX_KEPT) this.#entries.splice(0, this.#entries.length - MAX_KEPT);
      } catch (error) {
        this.warn(`the history file ${file} cannot be read (${(error as Error).message}); history is kept in memory only`);
        this.#file = undefined;
      }
    }
    this.session = last + 1;
  }

  /** Stores a cell run by this session at `line` (its execution count). */
  store(line: number, raw: string, source: string): void {
    const entry: HistoryEntry = { session: this.session, line, raw, source };
    this.#entries.push(entry);
    this.#persist(entry);
  }

  /** Records the result text of the cell at `line` of this session. */
  setOutput(line: number, text: string): void {
    const entry = lastOf(this.#entries, this.session, line);
    if (entry === undefined) return;
    entry.output = text;
    this.#persist({ ...entry, raw: "", source: "" }, true);
  }

  #persist(entry: HistoryEntry, outputOnly = false): void {
    if (this.#file === undefined) return;
    try {
      appendFileSync(this.#file, JSON.stringify(outputOnly ? { session: entry.session, line: entry.line, output: entry.output } : entry) + "\n");
    } catch (error) {
      this.warn(`the history file ${this.#file} cannot be written (${(error as Error).message}); history is kept in memory only`);
      this.#file = undefined;
    }
  }

  /**
   * The last `n` entries (of every session).
   *
   * @example
   * history.tail(3, { output: true }); // [[1, 8, ["x + 1", "2"]], ...]
   */
  tail(n: number, q: HistoryQuery = {}): HistoryRow[] {
    const count = Math.max(0, Math.min(clampCount(n), this.#entries.length));
    return this.#entries.slice(this.#entries.length - count).map((e) => row(e, q));
  }

  /**
   * The lines `start` to `stop` (excluded; 0 or absent: to the end) of a session: 0 or absent is
   * the current one, a negative number counts back from it, as IPython's history does.
   */
  range(session: number | undefined, start: number | undefined, stop: number | undefined, q: HistoryQuery = {}): HistoryRow[] {
    const s = session === undefined || session === 0 ? this.session : session < 0 ? this.session + session : session;
    const from = start ?? 0;
    const to = stop === undefined || stop === null || stop <= 0 ? Infinity : stop;
    return this.#entries
      .filter((e) => e.session === s && e.line >= from && e.line < to)
      .slice(0, MAX_REPLY)
      .map((e) => row(e, q));
  }

  /**
   * The entries whose input matches a glob pattern (`*` any text, `?` one character; the whole
   * input must match, as IPython's search does), the last `n` of them (all when n is absent),
   * each input once when `unique`.
   *
   * @example
   * history.search("1 +*", { n: 3, unique: true });
   */
  search(pattern: string, options: HistoryQuery & { n?: number; unique?: boolean } = {}): HistoryRow[] {
    const re = globRegExp(pattern);
    const matches: HistoryEntry[] = [];
    const seen = new Set<string>();
    // Newest first, so `unique` keeps the last run of each input.
    for (let i = this.#entries.length - 1; i >= 0; i--) {
      const e = this.#entries[i];
      const text = options.raw === false ? e.source : e.raw;
      if (!re.test(text)) continue;
      if (options.unique === true) {
        if (seen.has(text)) continue;
        seen.add(text);
      }
      matches.push(e);
      if (matches.length >= (options.n !== undefined && options.n > 0 ? clampCount(options.n) : MAX_REPLY)) break;
    }
    return matches.reverse().map((e) => row(e, options));
  }
}

function lastOf(entries: readonly HistoryEntry[], session: number, line: number): HistoryEntry | undefined {
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i].session === session && entries[i].line === line) return entries[i];
  return undefined;
}

function clampCount(n: number): number {
  return Number.isFinite(n) ? Math.max(0, Math.min(MAX_REPLY, Math.floor(n))) : MAX_REPLY;
}

function row(e: HistoryEntry, q: HistoryQuery): HistoryRow {
  const input = q.raw === false ? e.source : e.raw;
  return q.output === true ? [e.session, e.line, [input, e.output ?? null]] : [e.session, e.line, input];
}

/** A glob (`*`, `?`) as a regular expression over the whole text. */
export function globRegExp(pattern: string): RegExp {
  let re = "";
  for (const ch of pattern) re += ch === "*" ? "[\\s\\S]*" : ch === "?" ? "[\\s\\S]" : ch.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  return new RegExp(`^${re}$`);
}

/** A line of the history file: a full entry, or (no `raw`) the output of an entry stored before. */
function parseEntry(line: string): (Omit<HistoryEntry, "raw"> & { raw?: string }) | undefined {
  try {
    const o = JSON.parse(line) as Partial<HistoryEntry>;
    if (typeof o.session !== "number" || typeof o.line !== "number") return undefined;
    const output = typeof o.output === "string" ? { output: o.output } : {};
    if (typeof o.raw !== "string") return typeof o.output === "string" ? { session: o.session, line: o.line, source: "", ...output } : undefined;
    return { session: o.session, line: o.line, raw: o.raw, source: typeof o.source === "string" ? o.source : o.raw, ...output };
  } catch {
    return undefined;
  }
}
