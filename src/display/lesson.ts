/**
 * What a teaching notebook shows beside the predictions: a plain table of values (`valuesTable`),
 * lines of text (`textBlock`) and the verdict on a learner's answer (`checkAnswer`). Both are HTML with a text twin, sent by
 * `display()` like every other output, so they reach the page under tslab, the rbp kernel and Deno
 * alike (console.log does not: Deno's kernel loses plain stdout at random, docs/kernels.md).
 *
 * A verdict never throws: a missing answer, a value of the wrong kind, NaN or an answer that is
 * off all say "not yet" in words with the exercise's hint. Its HTML carries
 * `data-rbp-check="right"` or `"not-yet"`, which the notebook CI counts (scripts/notebooks/lib.ts).
 */
import { formatWithOptions } from "node:util";
import { escapeHtml, formatNumber, textTable } from "./format.js";
import { TABLE_CSS, type HtmlTable } from "./tables.js";

/** A cell of a values table: a number (formatted), a string (as is) or nothing (—). */
export type TableCell = number | string | boolean | null | undefined;

export interface ValuesTableOptions {
  /** Significant digits of the numbers (default 6, as the summary tables). */
  digits?: number;
  /** A note under the table (plain text). */
  note?: string;
}

function cellText(v: TableCell, digits: number): string {
  if (typeof v === "number") return formatNumber(v, digits);
  if (typeof v === "boolean") return v ? "yes" : "no";
  if (v === null || v === undefined) return "—";
  return v;
}

/**
 * A small table of values with a caption: what a lesson shows instead of console.log.
 *
 * @example
 * await rbp.display(rbp.valuesTable("Forecasts", ["forecaster", "yhat"], [["Grid", 27.1], ["mean", 23.4]]));
 */
export function valuesTable(
  caption: string,
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<TableCell>>,
  options: ValuesTableOptions = {},
): HtmlTable {
  const digits = options.digits ?? 6;
  const cells = rows.map((r) => header.map((_, j) => cellText(r[j], digits)));
  const head = `<thead><tr>${header.map((h) => `<th>${escapeHtml(h)}</th>`).join("")}</tr></thead>`;
  const body = cells.map((r) => `<tr>${r.map((c) => `<td>${escapeHtml(c)}</td>`).join("")}</tr>`).join("");
  const note = options.note !== undefined ? `<p class="rbp-notes">${escapeHtml(options.note)}</p>` : "";
  const html = `<style>${TABLE_CSS}</style><div class="rbp-scroll" style="overflow-x:auto;max-width:100%"><table class="rbp-table"><caption>${escapeHtml(caption)}</caption>${head}<tbody>${body}</tbody></table></div>${note}`;
  const text = [caption, textTable([...header], cells), ...(options.note !== undefined ? [options.note] : [])].join("\n");
  return { html, text };
}

/**
 * Lines of text as an output, formatted as console.log formats its arguments (one call, one
 * line; a value that is not a string is inspected): what a lesson shows instead of console.log.
 *
 * @example
 * await rbp.display(rbp.textBlock(`${cars.length} cars`, "the first:", cars[0]));
 */
export function textBlock(...values: unknown[]): HtmlTable {
  const text = formatWithOptions({ depth: 4, breakLength: 100 }, ...values);
  return { html: `<pre class="rbp-text" style="margin:.3em 0;white-space:pre-wrap">${escapeHtml(text)}</pre>`, text };
}

export interface CheckOptions {
  /** What to try when the answer is not right yet. */
  hint: string;
  /** Said after "right": what the answer shows. */
  explain?: string;
  /** Largest accepted difference of numbers: absolute, or relative to the expected value, whichever is larger (default 1e-6). */
  tolerance?: number;
}

/** A learner's answer judged: whether it is right, and the words shown. */
export interface CheckVerdict extends HtmlTable {
  right: boolean;
}

function numbersClose(a: number, b: number, tolerance: number): boolean {
  return Math.abs(a - b) <= tolerance * Math.max(1, Math.abs(b));
}

/** Why `answer` is not `expected`, or undefined when it is. */
function mismatch(answer: unknown, expected: unknown, tolerance: number, where = ""): string | undefined {
  if (answer === undefined || answer === null) return `there is no answer${where} yet`;
  if (typeof expected === "number") {
    if (typeof answer !== "number") return `expected a number${where}, got ${typeof answer}`;
    if (Number.isNaN(answer)) return `the answer${where} is NaN (a division by zero, or an undefined value in the sum?)`;
    if (!numbersClose(answer, expected, tolerance)) return `${formatNumber(answer, 6)}${where} is not the expected value`;
    return undefined;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(answer)) return `expected a list${where}, got ${typeof answer}`;
    if (answer.length !== expected.length) return `expected ${expected.length} values${where}, got ${answer.length}`;
    for (let i = 0; i < expected.length; i++) {
      const m = mismatch(answer[i], expected[i], tolerance, ` at position ${i}`);
      if (m !== undefined) return m;
    }
    return undefined;
  }
  if (typeof expected === "string" || typeof expected === "boolean") {
    if (answer !== expected) return `${JSON.stringify(answer)}${where} is not the expected answer`;
    return undefined;
  }
  return `cannot compare the answer${where} with ${typeof expected}`;
}

/**
 * Judges a learner's answer against the expected value (numbers within a tolerance, lists element
 * by element, strings and booleans exactly) and says so in words, with the hint when it is not
 * right yet. Never throws.
 *
 * @example
 * await rbp.display(rbp.checkAnswer("Exercise 1", myMean, p.yhatLinear, { hint: "Add the outcomes, divide by N." }));
 */
export function checkAnswer(label: string, answer: unknown, expected: unknown, options: CheckOptions): CheckVerdict {
  let why: string | undefined;
  try {
    why = mismatch(answer, expected, options.tolerance ?? 1e-6);
  } catch (e) {
    why = `the answer could not be read (${e instanceof Error ? e.message : String(e)})`;
  }
  const right = why === undefined;
  const words = right
    ? `${label}: right.${options.explain !== undefined ? ` ${options.explain}` : ""}`
    : `${label}: not yet. ${why!.charAt(0).toUpperCase()}${why!.slice(1)}. Hint: ${options.hint}`;
  const color = right ? "#1a7f37" : "#9a6700";
  const html =
    `<div class="rbp-check" data-rbp-check="${right ? "right" : "not-yet"}" style="font:14px/1.45 system-ui,sans-serif;border-left:4px solid ${color};background:${right ? "#eef8f0" : "#fff8e5"};padding:.4em .8em;margin:.4em 0">` +
    `<strong style="color:${color}">${right ? "✓" : "…"}</strong> ${escapeHtml(words)}</div>`;
  return { right, html, text: `${right ? "✓" : "…"} ${words}` };
}
