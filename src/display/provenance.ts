/**
 * Reports that verify themselves: what a saved report carries so that a reader (or `rbp verify`)
 * can check it (docs/research.md).
 *
 * The report's HTML (report.ts, unchanged) gets a visible "Provenance" footer (which service
 * computed each prediction, when, and how to check it) and one element before `</body>`:
 * `<script type="application/json" id="rbp-provenance">`, holding
 * - the package's name and version, when the report was written, and the report options that
 *   shaped the page (title, date, maxRows, figures), so that the page can be rendered again;
 * - per prediction: its title, analysis, the service that produced it (local or hosted, and
 *   where), the job or experiment, when it started and how long it took; the request (y, X,
 *   theta, options) inline when its canonical JSON is at most `inlineLimit` bytes (default
 *   4 MiB), else only its SHA-256, the data's shape and its theta rows (so that a reader who
 *   has the data, as the request's JSON or as a CSV table, can have it checked against the
 *   digest: `rbp verify --data`); the SHA-256 of the canonical request either way; the options as the engine resolves them (defaults filled in, so seeds too); the
 *   engine's documented choices that applied (docs/methodology.md); the display context; and the
 *   results the page shows, number for number.
 *
 * The canonical request is JSON with object keys sorted, no white space, numbers in JavaScript's
 * shortest round-trip form: `{"X":..,"analysis":..,"options":..,"theta":..,"y":..}` (theta absent
 * when a Grid used the last row of X).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { parseRequest } from "../api/request.js";
import type { Result } from "../api/result.js";
import type { Analysis } from "../engine/result.js";
import type { DisplayContext } from "./context.js";
import { escapeHtml, formatCount, scriptJson } from "./format.js";
import { reportHtml, type Reportable, type ReportOptions } from "./report.js";

/** The id of the provenance element in a report. */
export const PROVENANCE_ID = "rbp-provenance";
/** The provenance format; `rbp verify` reads this version. */
export const PROVENANCE_FORMAT = "rbp-report-provenance/1";
/** Requests whose canonical JSON is larger than this are embedded by digest only (bytes). */
export const DEFAULT_INLINE_LIMIT = 4 * 1024 * 1024;

/** The request a prediction was computed from (as a notebook prediction keeps it). */
export interface ProvenanceRequest {
  y: ReadonlyArray<number>;
  X: ReadonlyArray<ReadonlyArray<number | null>>;
  theta?: ReadonlyArray<number> | ReadonlyArray<ReadonlyArray<number>>;
  options?: Readonly<Record<string, unknown>>;
}

/** Where and how a prediction was computed: what a prediction adds to its Reportable. */
export interface ReportSource {
  analysis: Analysis;
  /** Absent for results built by hand: the report then says it cannot be checked. */
  request?: ProvenanceRequest;
  /** "local" (the embedded service), "hosted", or another name. */
  service?: string;
  /** The hosted service's address, or "embedded". */
  serviceUrl?: string;
  /** The job (`job_id`) or experiment (`experiment_id`) that produced it. */
  receipt?: Readonly<Record<string, unknown>>;
  startedAt?: string;
  elapsedMs?: number;
}

/** A Reportable that knows where it came from. */
export interface VerifiableReportable extends Reportable {
  source?: ReportSource;
}

/** Report options, and the size up to which requests are embedded whole. */
export interface VerifiableReportOptions extends ReportOptions {
  /** Canonical request bytes up to which the request is embedded (default 4 MiB); 0 embeds digests only. */
  inlineLimit?: number;
}

/** What the provenance element holds about one prediction. */
export interface ProvenanceItem {
  title: string;
  analysis: Analysis | null;
  service: { kind: string; url?: string } | null;
  receipt?: Record<string, unknown>;
  startedAt?: string;
  elapsedMs?: number;
  /** The request when embedded whole; null when only its digest is. */
  request: ProvenanceRequest | null;
  /** SHA-256 (hex) of the canonical request; null when the request is not known. */
  requestSha256: string | null;
  /** The data's shape: observations, attributes, theta rows (0: the last row of X). */
  shape: { rows: number; attributes: number; thetaRows: number } | null;
  /**
   * When the request is embedded by digest only: its theta as sent (absent when there was none,
   * or when even it is larger than the inline limit), so that the data alone (a CSV table) and this,
   * with `options`, make the request again.
   */
  theta?: ProvenanceRequest["theta"];
  /** The options as the engine resolves them (defaults filled in); includes the seed where there is one. */
  resolvedOptions: Record<string, unknown> | null;
  seed: number | null;
  /** The engine's documented choices that applied (docs/methodology.md sections). */
  choices: string[];
  /** The page's inputs besides the results: to render the page again. */
  context: DisplayContext;
  options: Record<string, unknown>;
  notes: string[];
  /** The results shown: one, or one per theta row of an experiment. */
  results: Result[];
  experiment: boolean;
}

/** The provenance element's content. */
export interface Provenance {
  format: typeof PROVENANCE_FORMAT;
  package: { name: string; version: string };
  writtenAt: string;
  /** The report options that shaped the page (JSON-safe ones). */
  report: Record<string, unknown>;
  items: ProvenanceItem[];
}

/** This package's name and version. */
export function packageInfo(): { name: string; version: string } {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { name: string; version: string };
    return { name: pkg.name, version: pkg.version };
  } catch {
    return { name: "rbp-notebook", version: "unknown" };
  }
}

/** JSON with object keys sorted and no white space (arrays keep their order). */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === "number" && !Number.isFinite(v)) return null;
    if (v !== null && typeof v === "object" && !Array.isArray(v) && !ArrayBuffer.isView(v)) {
      const sorted: Record<string, unknown> = {};
      for (const k of Object.keys(v as Record<string, unknown>).sort()) sorted[k] = (v as Record<string, unknown>)[k];
      return sorted;
    }
    return ArrayBuffer.isView(v) ? Array.from(v as unknown as ArrayLike<number>) : v;
  });
}

/** The canonical request text of an analysis' request (what the digest is taken of). */
export function canonicalRequest(analysis: Analysis, request: ProvenanceRequest): string {
  return canonicalJson({
    analysis,
    y: request.y,
    X: request.X,
    ...(request.theta !== undefined ? { theta: request.theta } : {}),
    options: request.options ?? {},
  });
}

export function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * The engine's documented choices (docs/methodology.md) that apply to a request, by section.
 *
 * @example
 * documentedChoices("maxfit", {}) // [..., "6: MaxFit keeps the first maximum ...", ...]
 */
export function documentedChoices(analysis: Analysis, resolved: Record<string, unknown> | null): string[] {
  const out = [
    "4: a partial sample needs at least 2 retained observations (MIN_RETAINED); below it a calibration is invalid",
    "5.2: asymmetry is 0 when the complement has fewer than 2 observations (MIN_COMPLEMENT_FOR_ASYMMETRY)",
    "5.3: adjusted fit = fit x m(K), m as options.adj_fit_multiplier says (log is ln K)",
    "5.4: kfit read as K x fit",
    "5.5: outlier influence is the diagonal of rho^2's split; agreement the rest",
    "5.7: observation votes y_solo_i = ybar + N (w_i - 1/N)(y_i - ybar)",
  ];
  if (resolved?.censor_unit === "score") out.push("3: r_star_percent is the share of scores strictly below the cut");
  if (analysis === "maxfit") out.push("6: MaxFit keeps the first maximum (relevance before similarity, thresholds in order; ties within 1e-12 relative)");
  if (analysis === "grid") out.push("7.2: when every cell has zero adjusted fit the composite falls back to equal weights (yhat = ybar)");
  return out;
}

function resolvedOf(analysis: Analysis, request: ProvenanceRequest): Record<string, unknown> | null {
  try {
    const body = { y: request.y, X: request.X, ...(request.theta !== undefined ? { theta: request.theta } : {}), options: request.options ?? {} };
    return JSON.parse(JSON.stringify(parseRequest(analysis, body, "v3", { requireAccessId: false }).resolved)) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function thetaRows(theta: ProvenanceRequest["theta"]): number {
  if (theta === undefined) return 0;
  return theta.length > 0 && Array.isArray(theta[0]) ? theta.length : 1;
}

/** The provenance of one reportable. */
export function provenanceItem(item: VerifiableReportable, inlineLimit = DEFAULT_INLINE_LIMIT): ProvenanceItem {
  const results: Result[] = Array.isArray(item.result) ? [...(item.result as ReadonlyArray<Result>)] : [item.result as Result];
  const source = item.source;
  const analysis = source?.analysis ?? item.context.analysis ?? results[0]?.analysis ?? null;
  const request = source?.request;
  let canonical: string | null = null;
  let resolved: Record<string, unknown> | null = null;
  if (request !== undefined && analysis !== null) {
    canonical = canonicalRequest(analysis, request);
    resolved = resolvedOf(analysis, request);
  }
  const inline = canonical !== null && Buffer.byteLength(canonical, "utf8") <= inlineLimit;
  const theta = !inline && request?.theta !== undefined ? canonicalJson(request.theta) : undefined;
  return {
    title: item.title,
    analysis,
    service: source?.service !== undefined ? { kind: source.service, ...(source.serviceUrl !== undefined ? { url: source.serviceUrl } : {}) } : null,
    ...(source?.receipt !== undefined ? { receipt: { ...source.receipt } } : {}),
    ...(source?.startedAt !== undefined ? { startedAt: source.startedAt } : {}),
    ...(source?.elapsedMs !== undefined ? { elapsedMs: source.elapsedMs } : {}),
    request: inline && request !== undefined ? (JSON.parse(canonical!) as ProvenanceRequest) : null,
    requestSha256: canonical !== null ? sha256(canonical) : null,
    shape: request !== undefined ? { rows: request.y.length, attributes: request.X[0]?.length ?? 0, thetaRows: thetaRows(request.theta) } : null,
    ...(theta !== undefined && Buffer.byteLength(theta, "utf8") <= inlineLimit ? { theta: JSON.parse(theta) as ProvenanceRequest["theta"] } : {}),
    resolvedOptions: resolved,
    seed: typeof resolved?.seed === "number" ? resolved.seed : null,
    choices: analysis !== null ? documentedChoices(analysis, resolved) : [],
    context: JSON.parse(JSON.stringify(item.context)) as DisplayContext,
    options: JSON.parse(JSON.stringify(item.options ?? {})) as Record<string, unknown>,
    notes: [...(item.notes ?? [])],
    results: JSON.parse(JSON.stringify(results)) as Result[],
    experiment: Array.isArray(item.result),
  };
}

/** The report options that shape the page, as JSON (the date fixed). */
function reportSettings(options: ReportOptions, date: Date): Record<string, unknown> {
  const { inlineLimit: _omit, ...rest } = options as VerifiableReportOptions;
  return JSON.parse(JSON.stringify({ ...rest, date: date.toISOString() })) as Record<string, unknown>;
}

/** The report options back from the provenance (the date a Date again). */
export function reportOptionsOf(provenance: Provenance): ReportOptions {
  const { date, ...rest } = provenance.report;
  return { ...(rest as ReportOptions), ...(typeof date === "string" ? { date: new Date(date) } : {}) };
}

/** The Reportables a provenance renders: the page's inputs as written. */
export function reportablesOf(provenance: Provenance): Reportable[] {
  return provenance.items.map((item) => ({
    title: item.title,
    result: item.experiment ? item.results : item.results[0],
    context: item.context,
    options: item.options,
    notes: item.notes,
  }));
}

/** The provenance element, ready to insert before `</body>`. */
export function provenanceElement(provenance: Provenance): string {
  return `<script type="application/json" id="${PROVENANCE_ID}">${scriptJson(provenance)}</script>\n`;
}

/**
 * The report HTML (report.ts) with its provenance element.
 *
 * @example
 * const html = verifiableReportHtml(p.toReportable(), { title: "Quickstart" });
 */
export function verifiableReportHtml(items: VerifiableReportable | ReadonlyArray<VerifiableReportable>, options: VerifiableReportOptions = {}): string {
  const list: VerifiableReportable[] = Array.isArray(items) ? [...(items as ReadonlyArray<VerifiableReportable>)] : [items as VerifiableReportable];
  const date = options.date ?? new Date();
  const settings = { ...options, date };
  const html = reportHtml(list.length === 1 ? list[0] : list, settings);
  const provenance: Provenance = {
    format: PROVENANCE_FORMAT,
    package: packageInfo(),
    writtenAt: new Date().toISOString(),
    report: reportSettings(settings, date),
    items: list.map((item) => provenanceItem(item, options.inlineLimit ?? DEFAULT_INLINE_LIMIT)),
  };
  return insertProvenance(html, provenance);
}

/** Where each prediction came from, in words: the visible part of the provenance. */
export function provenanceFooter(provenance: Provenance): string {
  const items = provenance.items.map((item, i) => {
    const where =
      item.service === null
        ? "results given by hand"
        : item.service.kind === "hosted"
          ? `the hosted service at ${item.service.url ?? "?"}`
          : item.service.kind === "local"
            ? "the embedded local service"
            : `the ${item.service.kind} service`;
    const job =
      item.receipt?.job_id !== undefined
        ? `, job ${String(item.receipt.job_id)}`
        : item.receipt?.experiment_id !== undefined
          ? `, experiment ${String(item.receipt.experiment_id)}`
          : "";
    const when = item.startedAt !== undefined ? `, started ${item.startedAt}` : "";
    const data =
      item.request !== null
        ? "request embedded"
        : item.requestSha256 !== null
          ? `request by SHA-256 ${item.requestSha256.slice(0, 16)}... (${formatCount(item.shape?.rows ?? 0)} x ${formatCount(item.shape?.attributes ?? 0)})`
          : "no request recorded";
    return `<li>${escapeHtml(`${i + 1}. ${item.title}: computed by ${where}${job}${when}; ${data}`)}</li>`;
  });
  return `<footer class="rbp-provenance"><h2>Provenance</h2><p class="rbp-meta">${escapeHtml(
    `Written ${provenance.writtenAt} by ${provenance.package.name} ${provenance.package.version}. The requests, results, resolved options, seeds and the engine's documented choices are embedded in this file; check them with: rbp verify <this file>`,
  )}</p><ol style="list-style:none;padding:0">${items.join("")}</ol></footer>
`;
}

/** The page with its visible provenance (before the last `</main>`, else `</body>`). */
export function withFooter(html: string, provenance: Provenance): string {
  const main = html.lastIndexOf("</main>");
  const at = main >= 0 ? main : html.lastIndexOf("</body>");
  if (at < 0) throw new Error("saveReport: the page has no </body>");
  return html.slice(0, at) + provenanceFooter(provenance) + html.slice(at);
}

/** Inserts the visible provenance, and the provenance element before the page's last `</body>`. */
export function insertProvenance(html: string, provenance: Provenance): string {
  const page = withFooter(html, provenance);
  const at = page.lastIndexOf("</body>");
  if (at < 0) throw new Error("saveReport: the page has no </body>");
  return page.slice(0, at) + provenanceElement(provenance) + page.slice(at);
}

/** The provenance of a report page, and the page without it (what report.ts wrote); undefined when there is none. */
export function readProvenance(html: string): { provenance: Provenance; page: string } | undefined {
  const open = `<script type="application/json" id="${PROVENANCE_ID}">`;
  const start = html.lastIndexOf(open);
  if (start < 0) return undefined;
  const end = html.indexOf("</script>\n", start);
  if (end < 0) return undefined;
  const provenance = JSON.parse(html.slice(start + open.length, end)) as Provenance;
  if (provenance?.format !== PROVENANCE_FORMAT)
    throw new Error(`the report's provenance is in format ${String(provenance?.format)}; this version reads ${PROVENANCE_FORMAT}`);
  return { provenance, page: html.slice(0, start) + html.slice(end + "</script>\n".length) };
}

/** Writes a verifiable report to `path` (folders created as needed); returns the absolute path. */
export async function saveVerifiableReport(
  items: VerifiableReportable | ReadonlyArray<VerifiableReportable>,
  path: string,
  options: VerifiableReportOptions = {},
): Promise<string> {
  const html = verifiableReportHtml(items, options);
  const target = resolve(path);
  await mkdir(dirname(target), { recursive: true });
  await writeFile(target, html, "utf8");
  return target;
}
