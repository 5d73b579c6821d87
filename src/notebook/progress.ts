/**
 * The progress line of a running analysis: job, status and elapsed time (rows done out of the
 * total for an experiment), kept on one line that is updated in place.
 *
 * - In a notebook kernel (tslab, Deno) the line is one display output with a display id, replaced
 *   with `update_display_data` as the job advances (`display(bundle, { displayId, update: true })`),
 *   so a cell shows a single line however long the job runs, and its final state stays there.
 *   A single job's line is first drawn 100 ms into the call (`FIRST_LINE_MS`), or at its final
 *   state if that comes first: a warm call that ends in 20 ms sends one message, not four (each is
 *   signed, sent over ZeroMQ and decoded by the front end while the call's workers want the cores).
 *   An experiment's line (rows, an experiment id) is drawn at once.
 * - In a terminal (stderr is a TTY) one line on stderr is rewritten with `\r`, and ended with a
 *   newline when the job is done.
 * - Elsewhere (a pipe, a log, CI) only the final line is written on stderr.
 *
 * `progress: "none"` shows nothing; a function receives every event instead (for tests and for
 * callers with their own display). Updates are throttled to one per 200 ms except when the status
 * changes (shown at once) or the rows done do (at most one line per 100 ms: a backtest's steps and
 * an experiment's rows can end every millisecond, and each line is a message). While a call runs,
 * a kernel's line and a terminal's line are redrawn twice a second, so the clock keeps moving when
 * nothing else changes (a long job, the results of an experiment being fetched: status
 * "fetching", "fetching results 12 of 31").
 *
 * The mark before the line in a notebook is drawn with CSS (a ring while running, a dot when
 * completed, a square when failed), not a glyph: an emoji such as "⏳" is an empty box with the
 * fonts of a Linux desktop without an emoji font.
 *
 * In Deno, `display` returns the promise of each send; `settled()` waits for the last one, so the
 * final line is out before the cell ends (src/notebook/run.ts awaits it).
 */
import { randomUUID } from "node:crypto";
import { display, escapeHtml, jupyterKernel, type MimeBundle } from "../display/index.js";
import type { Analysis } from "../client/index.js";
import { analysisLabel } from "./errors.js";
import { nextTurn } from "./turns.js";

/** Where the progress line goes: see the module comment. */
export type ProgressMode = "auto" | "display" | "terminal" | "line" | "none";

/** A progress mode, or a function that receives every event. */
export type ProgressSetting = ProgressMode | ((event: ProgressEvent) => void);

export type ProgressStatus = "submitting" | "queued" | "running" | "fetching" | "completed" | "partial_failed" | "failed";

export interface ProgressEvent {
  analysis: Analysis;
  status: ProgressStatus;
  /** The job (one circumstance), once submitted. */
  jobId?: number;
  /** The experiment (several circumstances), once submitted; null for a v2 group. */
  experimentId?: number | null;
  /** An experiment's rows: finished (completed or failed), failed, total. */
  rows?: { done: number; failed: number; total: number };
  /** Results fetched so far while the status is "fetching" (an experiment: of rows.total). */
  fetched?: number;
  /** Since the call started, in milliseconds. */
  elapsedMs: number;
  /** The service the job runs on. */
  service?: "hosted" | "local";
  /** True for the last event of the call. */
  final: boolean;
  /** The line as shown. */
  text: string;
}

const THROTTLE_MS = 200;
/** How far into a single job its first line is drawn in a notebook (unless its final line comes first). */
const FIRST_LINE_MS = 100;
/** How often a running line is redrawn when nothing changes (the clock). */
const TICK_MS = 500;

/** How often a line whose only change is its rows' counts is shown (a backtest's steps, an experiment's rows can end every millisecond). */
const ROWS_THROTTLE_MS = 100;

/** Where terminal lines go (process.stderr by default). */
export interface LineStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

function seconds(ms: number): string {
  return ms < 10_000
    ? `${(ms / 1000).toFixed(2)} s`
    : ms < 120_000
      ? `${(ms / 1000).toFixed(1)} s`
      : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** The text of a progress line. */
export function progressText(e: Omit<ProgressEvent, "text">): string {
  const parts = [analysisLabel(e.analysis)];
  if (e.experimentId !== undefined) parts.push(e.experimentId === null ? "group of jobs" : `experiment ${e.experimentId}`);
  else if (e.jobId !== undefined) parts.push(`job ${e.jobId}`);
  if (e.rows !== undefined) parts.push(`${e.rows.done} of ${e.rows.total} rows done${e.rows.failed > 0 ? ` (${e.rows.failed} failed)` : ""}`);
  const status =
    e.status === "partial_failed"
      ? "finished with failed rows"
      : e.status === "fetching"
        ? `fetching results${e.fetched !== undefined && e.rows !== undefined ? ` ${e.fetched} of ${e.rows.total - e.rows.failed}` : ""}`
        : e.status;
  parts.push(e.final ? `${status} in ${seconds(e.elapsedMs)}` : `${status} · ${seconds(e.elapsedMs)}`);
  if (e.service !== undefined) parts.push(`${e.service} service`);
  return parts.join(" · ");
}

function bundleOf(e: ProgressEvent): MimeBundle {
  const color = e.status === "failed" ? "#c62828" : e.status === "partial_failed" ? "#b26a00" : e.final ? "#2e7d32" : "#555";
  // A CSS mark, not a glyph (see the module comment): ring while running, dot when completed, square when failed.
  const shape = !e.final
    ? `border:2px solid ${color};border-radius:50%`
    : e.status === "completed"
      ? `background:${color};border-radius:50%`
      : `background:${color}`;
  const mark = `<span class="rbp-progress-mark" aria-hidden="true" style="display:inline-block;box-sizing:border-box;width:.7em;height:.7em;margin-right:.45em;vertical-align:-.05em;${shape}"></span>`;
  let bar = "";
  if (e.rows !== undefined && e.rows.total > 0) {
    const pct = Math.round((100 * e.rows.done) / e.rows.total);
    bar = `<span style="display:inline-block;width:120px;height:8px;background:#eee;margin:0 .6em;vertical-align:middle"><span style="display:block;height:8px;width:${pct}%;background:${color}"></span></span>`;
  }
  return {
    "text/plain": e.text,
    "text/html": `<div class="rbp-progress" data-rbp-status="${escapeHtml(e.status)}" style="font:13px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:${color}">${mark}${escapeHtml(e.text)}${bar}</div>`,
  };
}

interface Sink {
  show(event: ProgressEvent): void;
  /** Whether the line is redrawn while nothing changes (the clock); false for sinks that keep only the final line. */
  readonly ticks?: boolean;
  /** The last send, when it is asynchronous (Deno). */
  settled?(): Promise<void>;
  /** True when showing this (not final) event now sends nothing (it is held, or only a final line is shown). */
  holds?(event: Pick<ProgressEvent, "rows" | "experimentId" | "elapsedMs">): boolean;
}

class DisplaySink implements Sink {
  readonly ticks = true;
  readonly #id = `rbp-progress-${randomUUID()}`;
  #shown = false;
  #last: Promise<void> = Promise.resolve();
  /** A single job's first line, held until FIRST_LINE_MS into the call. */
  #held: ProgressEvent | undefined;
  #heldAt = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  holds(event: Pick<ProgressEvent, "rows" | "experimentId" | "elapsedMs">): boolean {
    return !this.#shown && event.rows === undefined && event.experimentId === undefined && event.elapsedMs < FIRST_LINE_MS;
  }
  show(event: ProgressEvent): void {
    if (!event.final && this.holds(event)) {
      this.#held = event;
      this.#heldAt = performance.now();
      if (this.#timer === undefined) {
        this.#timer = setTimeout(() => this.#release(), FIRST_LINE_MS - event.elapsedMs);
        this.#timer.unref?.();
      }
      return;
    }
    this.#send(event);
  }
  #release(): void {
    this.#timer = undefined;
    const held = this.#held;
    if (held !== undefined && !this.#shown) {
      try {
        // Its clock as of now, not of when it was held.
        const elapsedMs = held.elapsedMs + Math.round(performance.now() - this.#heldAt);
        this.#send({ ...held, elapsedMs, text: progressText({ ...held, elapsedMs }) });
      } catch {
        // A progress line must never fail the analysis.
      }
    }
  }
  #send(event: ProgressEvent): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#held = undefined;
    const sent = display(bundleOf(event), { displayId: this.#id, update: this.#shown });
    if (sent instanceof Promise) this.#last = sent;
    this.#shown = true;
  }
  settled(): Promise<void> {
    return this.#last;
  }
}

class TerminalSink implements Sink {
  readonly ticks = true;
  #width = 0;
  constructor(private readonly stream: LineStream) {}
  show(event: ProgressEvent): void {
    const pad = Math.max(0, this.#width - event.text.length);
    this.stream.write(`\r${event.text}${" ".repeat(pad)}${event.final ? "\n" : ""}`);
    this.#width = event.final ? 0 : event.text.length;
  }
}

class FinalLineSink implements Sink {
  constructor(private readonly stream: LineStream) {}
  holds(): boolean {
    return true;
  }
  show(event: ProgressEvent): void {
    if (event.final) this.stream.write(`${event.text}\n`);
  }
}

/** The sink for a mode in this process: a kernel's display, a terminal line, a final line, or nothing. */
function sinkFor(setting: ProgressSetting, stream: LineStream): Sink | undefined {
  if (typeof setting === "function") return { show: setting };
  if (setting === "none") return undefined;
  const inKernel = jupyterKernel() !== "none";
  if (setting === "display" || (setting === "auto" && inKernel)) {
    if (inKernel) return new DisplaySink();
  }
  if (setting === "line") return new FinalLineSink(stream);
  return stream.isTTY === true ? new TerminalSink(stream) : new FinalLineSink(stream);
}

/** One call's progress line. */
export class Progress {
  readonly #sink: Sink | undefined;
  readonly #analysis: Analysis;
  readonly #started = performance.now();
  readonly #everyEvent: boolean;
  #lastShown = -Infinity;
  #lastKey = "";
  #lastStage = "";
  #state: Omit<ProgressEvent, "text" | "final" | "elapsedMs" | "analysis"> = { status: "submitting" };
  #done = false;
  #started_ = false;
  #ticker: ReturnType<typeof setInterval> | undefined;
  #frozenAt: number | undefined;

  constructor(analysis: Analysis, setting: ProgressSetting = "auto", stream: LineStream = process.stderr) {
    this.#analysis = analysis;
    this.#sink = sinkFor(setting, stream);
    this.#everyEvent = typeof setting === "function";
  }

  /** Whether a line was asked for (update was called). */
  get started(): boolean {
    return this.#started_;
  }

  /** Milliseconds since the call started (until `freeze`). */
  elapsed(): number {
    return (this.#frozenAt ?? performance.now()) - this.#started;
  }

  /**
   * Stops the clock and returns the call's time in whole milliseconds: the final line says the same
   * time as the result it ends (its `elapsedMs`), however many turns pass before `finish`.
   */
  freeze(): number {
    this.#frozenAt ??= performance.now();
    return Math.round(this.#frozenAt - this.#started);
  }

  /** Merges new facts (status, job, rows) and shows the line when due. */
  update(change: Partial<Omit<ProgressEvent, "text" | "final" | "elapsedMs" | "analysis">>): void {
    if (this.#done) return;
    this.#started_ = true;
    this.#state = { ...this.#state, ...change };
    this.#emit(false);
    if (this.#ticker === undefined && this.#sink?.ticks === true) {
      this.#ticker = setInterval(() => this.#emit(false, true), TICK_MS);
      this.#ticker.unref?.();
    }
  }

  /** Shows the final line (completed, partial_failed or failed). */
  finish(status: "completed" | "partial_failed" | "failed", change: Partial<Omit<ProgressEvent, "text" | "final" | "elapsedMs" | "analysis">> = {}): void {
    if (this.#done) return;
    if (this.#ticker !== undefined) clearInterval(this.#ticker);
    this.#state = { ...this.#state, ...change, status };
    delete this.#state.fetched;
    this.#emit(true);
    this.#done = true;
  }

  /**
   * The first line, sent first in its turn (turns.ts: plain tslab drops a message that shares a
   * turn with a delayed one). A notebook holds a single job's first line until FIRST_LINE_MS
   * (DisplaySink); it is then sent alone, from its timer. A line that sends nothing now (held, only
   * a final line shown, no line at all) waits for no turn.
   *
   * @example
   * await progress.begin({ service: "local", status: "submitting" });
   */
  async begin(change: Partial<Omit<ProgressEvent, "text" | "final" | "elapsedMs" | "analysis">>): Promise<void> {
    // With a margin: the line is shown (update) microseconds after this check, and must then still be held.
    const next = { ...this.#state, ...change, elapsedMs: this.elapsed() + 10 };
    if (!this.#everyEvent && (this.#sink === undefined || this.#sink.holds?.(next) === true)) {
      this.update(change);
      return;
    }
    await nextTurn();
    this.update(change);
  }

  /**
   * The final line, sent first in its turn; resolves once it is sent and a turn has passed, so that
   * whatever the cell sends next cannot share a turn with it (turns.ts). Without a line ("none"),
   * at once; in the rbp kernel, which queues its sends in order, without waiting for turns.
   *
   * @example
   * await progress.end("completed");
   */
  async end(
    status: "completed" | "partial_failed" | "failed",
    change: Partial<Omit<ProgressEvent, "text" | "final" | "elapsedMs" | "analysis">> = {},
  ): Promise<void> {
    // No line at all ("none"): nothing to keep apart.
    if (this.#sink === undefined) return this.finish(status, change);
    // The rbp kernel sends its messages one after another (kernel/protocol/channels.ts): no turn
    // to keep them apart (two turns were 0.04-0.12 ms of a warm call there).
    const apart = jupyterKernel() !== "rbp";
    if (apart) await nextTurn();
    this.finish(status, change);
    await this.settled().catch(() => undefined);
    if (apart) await nextTurn();
  }

  /** Resolves when the last line shown has been sent (at once except in Deno, where sends are asynchronous). */
  settled(): Promise<void> {
    return this.#sink?.settled?.() ?? Promise.resolve();
  }

  #emit(final: boolean, tick = false): void {
    if (this.#sink === undefined || this.#done) return;
    const now = performance.now();
    const stage = `${this.#state.status}|${this.#state.jobId}|${this.#state.experimentId}|${this.#state.fetched}`;
    const key = `${stage}|${this.#state.rows?.done}|${this.#state.rows?.failed}`;
    if (tick && now - this.#lastShown < TICK_MS - 50) return;
    if (!tick && !final && !this.#everyEvent) {
      // A new stage at once; new counts at most every ROWS_THROTTLE_MS (the ticker and the final
      // line show the last); nothing new every THROTTLE_MS.
      const wait = key === this.#lastKey ? THROTTLE_MS : stage === this.#lastStage ? ROWS_THROTTLE_MS : 0;
      if (now - this.#lastShown < wait) return;
    }
    this.#lastKey = key;
    this.#lastStage = stage;
    this.#lastShown = now;
    // Object.assign, not `{ ...state, key }`: the same keys in the same order, without V8's new
    // shape for each object spread and then extended (docs/architecture.md).
    const event = Object.assign({}, this.#state, { analysis: this.#analysis, elapsedMs: Math.round((this.#frozenAt ?? now) - this.#started), final });
    try {
      this.#sink.show(Object.assign({}, event, { text: progressText(event) }));
    } catch {
      // A progress line must never fail the analysis.
    }
  }
}
