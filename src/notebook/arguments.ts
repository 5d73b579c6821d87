/**
 * What the TypeScript types and the magics catch, checked again at run time for plain JavaScript
 * cells and scripts: a key of the spec (second argument), the options (third) or the run settings
 * (fourth) that the call does not read. `rbp.grid(df, spec, { treshold: [0, 0.5] })` would otherwise
 * run with the default thresholds, and `threshold` put in the spec would be dropped unseen.
 *
 * The policy, in one place:
 * - a misplaced key (an option in the spec, `theta` in the options) says where it belongs;
 * - an option of another analysis says whose option it is;
 * - any other unknown key gets the nearest known name ("did you mean"), as the magics do;
 * - by default each problem is shown and the call goes on (the key is ignored, as the service
 *   ignores an unknown option with a warning): in a notebook kernel as a warning box in the cell, in
 *   a script as one line on stderr, and a misplaced spec key also in the prediction's `notes`;
 * - with the run setting `strict: true` the call throws a `PredictionError` (kind
 *   "invalid-request", field `options.<key>`, `spec.<key>` or `run.<key>`) before anything is sent,
 *   so nothing is charged.
 */
import { ANALYSES, ANY_OPTION_KEY, OPTION_KEYS, type Analysis } from "../api/options.js";
import { display, escapeHtml, jupyterKernel, type MimeBundle } from "../display/index.js";
import { didYouMean } from "../internal/suggest.js";
import { PredictionError, analysisLabel } from "./errors.js";

/** The keys a spec is read for (src/frame's FrameSpec, plus the title). */
export const SPEC_KEYS = ["y", "X", "theta", "index", "title"] as const;

/** The keys of the run settings (RunSettings in run.ts). */
export const RUN_KEYS = ["progress", "signal", "timeoutMs", "connection", "showErrors", "strict"] as const;

/**
 * Options the vendor documents that the engine accepts and ignores with a note of its own
 * (NOT_IMPLEMENTED in src/api/options.ts): known, so not reported here.
 */
const ACCEPTED_UNREAD = ["adjust_impact_for_missing"];

/** One key the call does not read. */
export interface ArgumentProblem {
  /** `options.treshold`, `spec.threshold`, `run.progres`. */
  field: string;
  /** One readable sentence, without the analysis label. */
  message: string;
}

const quoted = (s: string) => JSON.stringify(s);

function keysOf(value: unknown): string[] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
  return Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k);
}

/**
 * The keys of a call's spec, options and run settings that it does not read.
 *
 * @example
 * checkArguments("grid", { y: "mpg", threshold: [0, 0.5] }, { treshold: [0, 0.5] }, {});
 * // [{ field: "spec.threshold", message: '"threshold" is an option, not a spec key: ...' },
 * //  { field: "options.treshold", message: 'unknown option "treshold"; did you mean "threshold"? (ignored; ...)' }]
 */
export function checkArguments(analysis: Analysis, spec: unknown, options: unknown, run: unknown): ArgumentProblem[] {
  const problems: ArgumentProblem[] = [];
  for (const key of keysOf(spec)) {
    if ((SPEC_KEYS as readonly string[]).includes(key)) continue;
    if (ANY_OPTION_KEY.has(key) || ACCEPTED_UNREAD.includes(key)) {
      problems.push({
        field: `spec.${key}`,
        message: `${quoted(key)} is an option, not a spec key: pass it in the options (third argument), e.g. ${analysis}(data, spec, { ${key}: ... }); the spec takes ${SPEC_KEYS.join(", ")}`,
      });
    } else {
      problems.push({
        field: `spec.${key}`,
        message: `unknown spec key ${quoted(key)}${didYouMean(key, SPEC_KEYS)} (ignored; the spec, the second argument, takes ${SPEC_KEYS.join(", ")})`,
      });
    }
  }
  const known = OPTION_KEYS[analysis];
  for (const key of keysOf(options)) {
    if (known.includes(key) || ACCEPTED_UNREAD.includes(key)) continue;
    const elsewhere = ANALYSES.filter((a) => a !== analysis && OPTION_KEYS[a].includes(key));
    if (elsewhere.length > 0) {
      // The service also notes this (e.g. missing_moments on a Grid, which chooses complete rows per combination).
      problems.push({ field: `options.${key}`, message: `${quoted(key)} is an option of ${elsewhere.join(" and ")}, not of ${analysis}; it is ignored` });
    } else if ((SPEC_KEYS as readonly string[]).includes(key)) {
      problems.push({ field: `options.${key}`, message: `${quoted(key)} belongs in the spec (second argument), not in the options; it is ignored here` });
    } else {
      problems.push({
        field: `options.${key}`,
        message: `unknown option ${quoted(key)}${didYouMean(key, known)} (ignored; rbp.defaults(${quoted(analysis)}) lists the options)`,
      });
    }
  }
  for (const key of keysOf(run)) {
    if ((RUN_KEYS as readonly string[]).includes(key)) continue;
    const where = ANY_OPTION_KEY.has(key) ? "; it is an option: pass it in the third argument" : didYouMean(key, RUN_KEYS);
    problems.push({
      field: `run.${key}`,
      message: `unknown run setting ${quoted(key)}${where} (ignored; the run settings, the fourth argument, are ${RUN_KEYS.join(", ")})`,
    });
  }
  return problems;
}

/** The problems as one PredictionError (what `strict: true` throws). */
export function argumentError(analysis: Analysis, problems: ArgumentProblem[]): PredictionError {
  return new PredictionError({
    kind: "invalid-request",
    subject: analysisLabel(analysis),
    detail: problems.map((p) => p.message).join("; "),
    field: problems[0].field,
    hint: "Nothing was sent. Without the run setting strict: true these keys are reported and ignored.",
  });
}

/** A warning box for a notebook cell: amber, one line per problem. */
export function argumentWarningBundle(analysis: Analysis, problems: ArgumentProblem[]): MimeBundle {
  const label = analysisLabel(analysis);
  const lines = problems.map((p) => `${label}: ${p.message}`);
  const html =
    `<div class="rbp-warning" data-rbp-warning="arguments" style="border-left:4px solid #f9a825;background:#fff8e1;color:#222;` +
    `padding:.6em 1em;margin:.4em 0;font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;white-space:pre-wrap">` +
    lines.map((l) => `<div>${escapeHtml(l)}</div>`).join("") +
    `</div>`;
  return { "text/html": html, "text/plain": lines.map((l) => `warning: ${l}`).join("\n") };
}

/**
 * Reports the problems where the user will see them: a warning box in a kernel's cell, else one line
 * each on stderr (`write` replaces stderr, for tests).
 */
export function reportArgumentProblems(analysis: Analysis, problems: ArgumentProblem[], write: (text: string) => void = (t) => process.stderr.write(t)): void {
  if (problems.length === 0) return;
  if (jupyterKernel() !== "none") {
    try {
      // in Deno, a promise of the output sent; the warning is shown whether or not anyone waits for it
      void display(argumentWarningBundle(analysis, problems));
      return;
    } catch {
      // fall through to stderr
    }
  }
  write(argumentWarningBundle(analysis, problems)["text/plain"] + "\n");
}
