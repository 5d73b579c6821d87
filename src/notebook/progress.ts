/**
 * The progress line of a running analysis: job, status and elapsed time (rows done out of the
 * total for an experiment), kept on one line that is updated in place.
 *
 * - In a notebook kernel (tslab, Deno) the line is one display output with a display id, replaced
 *   with `update_display_data` as the job advances (`display(bundle, { displayId, update: true })`),
 *   so a cell shows a single line however long the job runs, and its final state stays there.
 * - In a terminal (stderr is a TTY) one line on stderr is rewritten with `\r`, and ended with a
 *   newline when the job is done.
 * - Elsewhere (a pipe, a log, CI) only the final line is written on stderr.
 *
 * `progress: "none"` shows nothing; a function receives every event instead (for tests and for
 * callers with their own display). Updates are throttled to one per 200 ms except when the status
 * or the rows done change.
 */
import { randomUUID } from "node:crypto";
import { display, escapeHtml, jupyterKernel, type MimeBundle } from "../display/index.js";
import type { Analysis } from "../client/index.js";
import { analysisLabel } from "./errors.js";

/** Where the progress line goes: see the module comment. */
export type ProgressMode = "auto" | "display" | "terminal" | "line" | "none";

/** A progress mode, or a function that receives every event. */
export type ProgressSetting = ProgressMode | ((event: ProgressEvent) => void);

export type ProgressStatus = "submitting" | "queued" | "running" | "completed" | "partial_failed" | "failed";

export interface ProgressEvent {
  analysis: Analysis;
  status: ProgressStatus;
  /** The job (one circumstance), once submitted. */
  jobId?: number;
  /** The experiment (several circumstances), once submitted; null for a v2 group. */
  experimentId?: number | null;
  /** An experiment's rows: finished (completed or failed), failed, total. */
  rows?: { done: number; failed: number; total: number };
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

/** Where terminal lines go (process.stderr by default). */
export interface LineStream {
  write(text: string): unknown;
  isTTY?: boolean;
}

function seconds(ms: number): string {
  return ms < 10_000 ? `${(ms / 1000).toFixed(2)} s` : ms < 120_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** The text of a progress line. */
export function progressText(e: Omit<ProgressEvent, "text">): string {
  const parts = [analysisLabel(e.analysis)];
  if (e.experimentId !== undefined) parts.push(e.experimentId === null ? "group of jobs" : `experiment ${e.experimentId}`);
  else if (e.jobId !== undefined) parts.push(`job ${e.jobId}`);
  if (e.rows !== undefined) parts.push(`${e.rows.done} of ${e.rows.total} rows done${e.rows.failed > 0 ? ` (${e.rows.failed} failed)` : ""}`);
  const status = e.status === "partial_failed" ? "finished with failed rows" : e.status;
  parts.push(e.final ? `${status} in ${seconds(e.elapsedMs)}` : `${status} · ${seconds(e.elapsedMs)}`);
  if (e.service !== undefined) parts.push(`${e.service} service`);
  return parts.join(" · ");
}

function bundleOf(e: ProgressEvent): MimeBundle {
  const color = e.status === "failed" ? "#c62828" : e.status === "partial_failed" ? "#b26a00" : e.final ? "#2e7d32" : "#555";
  const mark = e.final ? (e.status === "completed" ? "✓" : "✗") : "⏳";
  let bar = "";
  if (e.rows !== undefined && e.rows.total > 0) {
    const pct = Math.round((100 * e.rows.done) / e.rows.total);
    bar = `<span style="display:inline-block;width:120px;height:8px;background:#eee;margin:0 .6em;vertical-align:middle"><span style="display:block;height:8px;width:${pct}%;background:${color}"></span></span>`;
  }
  return {
    "text/plain": e.text,
    "text/html": `<div class="rbp-progress" data-rbp-status="${escapeHtml(e.status)}" style="font:13px/1.4 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:${color}">${mark} ${escapeHtml(e.text)}${bar}</div>`,
  };
}

interface Sink {
  show(event: ProgressEvent): void;
}

class DisplaySink implements Sink {
  readonly #id = `rbp-progress-${randomUUID()}`;
  #shown = false;
  show(event: ProgressEvent): void {
    display(bundleOf(event), { displayId: this.#id, update: this.#shown });
    this.#shown = true;
  }
}

class TerminalSink implements Sink {
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
  #state: Omit<ProgressEvent, "text" | "final" | "elapsedMs" | "analysis"> = { status: "submitting" };
  #done = false;
  #started_ = false;

  constructor(analysis: Analysis, setting: ProgressSetting = "auto", stream: LineStream = process.stderr) {
    this.#analysis = analysis;
    this.#sink = sinkFor(setting, stream);
    this.#everyEvent = typeof setting === "function";
  }

  /** Whether a line was asked for (update was called). */
  get started(): boolean {
    return this.#started_;
  }

  /** Milliseconds since the call started. */
  elapsed(): number {
    return performance.now() - this.#started;
  }

  /** Merges new facts (status, job, rows) and shows the line when due. */
  update(change: Partial<Omit<ProgressEvent, "text" | "final" | "elapsedMs" | "analysis">>): void {
    if (this.#done) return;
    this.#started_ = true;
    this.#state = { ...this.#state, ...change };
    this.#emit(false);
  }

  /** Shows the final line (completed, partial_failed or failed). */
  finish(status: "completed" | "partial_failed" | "failed", change: Partial<Omit<ProgressEvent, "text" | "final" | "elapsedMs" | "analysis">> = {}): void {
    if (this.#done) return;
    this.#state = { ...this.#state, ...change, status };
    this.#emit(true);
    this.#done = true;
  }

  #emit(final: boolean): void {
    if (this.#sink === undefined) return;
    const now = performance.now();
    const key = `${this.#state.status}|${this.#state.jobId}|${this.#state.experimentId}|${this.#state.rows?.done}|${this.#state.rows?.failed}`;
    if (!final && !this.#everyEvent && key === this.#lastKey && now - this.#lastShown < THROTTLE_MS) return;
    this.#lastKey = key;
    this.#lastShown = now;
    const event = { ...this.#state, analysis: this.#analysis, elapsedMs: Math.round(now - this.#started), final };
    try {
      this.#sink.show({ ...event, text: progressText(event) });
    } catch {
      // A progress line must never fail the analysis.
    }
  }
}
