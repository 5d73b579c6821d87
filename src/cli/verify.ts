/**
 * `rbp verify report.html`: checks a saved report against the local engine (docs/research.md).
 *
 * For every prediction of the report, from the provenance it carries (display/provenance.ts):
 * - the request embedded whole: its SHA-256 is checked, then every theta row is computed again
 *   with the local engine, rounded as the producing service rounded (the most decimals the
 *   report's numbers show), and compared number for number with the results the report shows:
 *   agree, or differ with the largest difference and its place (field, position, row label);
 * - the request embedded by digest only (too large): cannot check (data not embedded), unless
 *   the data is given with `--data`: the request as sent (JSON: y, X, and theta and options, which
 *   default to the report's), or the data table (CSV with a header: the outcome and attribute
 *   columns the report names; theta and options from the report). Its canonical request must
 *   have the report's SHA-256 (else: cannot check, the data differs, both digests printed); then
 *   it is recomputed and compared as an embedded request is;
 * - no request (results built by hand): cannot check.
 * Then the page itself: rendered again from the embedded results with this package's report code
 * and compared with the file, so that an edit to a shown number (a table cell, a chart) is found
 * and named (the section, the table, the row and the column). A report written by another version
 * of the package cannot have its page checked that way (said so).
 *
 * Exit status 0 only when every prediction and the page agree; 1 otherwise; 2 for usage errors
 * and files that are not reports.
 */
import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import { parseRequest } from "../api/request.js";
import { fromV3Results, type Result } from "../api/result.js";
import {
  canonicalRequest,
  packageInfo,
  readProvenance,
  reportablesOf,
  reportOptionsOf,
  sha256,
  withFooter,
  type Provenance,
  type ProvenanceItem,
  type ProvenanceRequest,
} from "../display/provenance.js";
import { reportHtml } from "../display/report.js";
import { gridParallel, runAnalysis } from "../engine/index.js";
import { encodeJson } from "../service/encode.js";
import { UsageError } from "./predict.js";

export const VERIFY_USAGE = `Usage: rbp verify <report.html> [--data <file>]... [--json]

Recomputes every prediction of a report saved by rbp-notebook (saveReport, p.report) with the
local engine, from the request the report embeds, and compares the numbers it shows. Prints
agree / differ (the largest difference and where) / cannot check per prediction, then whether
the page still shows its embedded results. Exit status 0 only when everything agrees.
  --data <file>  the data of a prediction whose request the report holds by SHA-256 only (too
                 large to embed): the request as sent (.json: y, X, and theta and options, which
                 default to the report's), or the data table (.csv with a header naming the
                 outcome and attribute columns). It must have the report's SHA-256; then it is
                 recomputed. Give it once per such prediction.
  --json         print the checks as JSON`;

/** Data given with --data: the request it makes for an item of the report, or why it cannot make one. */
export interface DataSource {
  path: string;
  requestFor(item: ProvenanceItem): ProvenanceRequest | string;
}

export type CheckStatus = "agree" | "differ" | "cannot check";

/** The check of one prediction. */
export interface PredictionCheck {
  /** 1-based, in the report's order. */
  item: number;
  title: string;
  status: CheckStatus;
  /** Numbers compared. */
  compared: number;
  /** The largest difference and where (differ; for agree, the largest, usually 0). */
  largest?: { difference: number; place: string; report: number | string | null; engine: number | string | null };
  /** Why it cannot be checked, or a note on a difference. */
  detail?: string;
  /** Which service produced it. */
  service: string;
}

/** The check of the page against its embedded results. */
export interface PageCheck {
  status: CheckStatus;
  place?: string;
  detail?: string;
}

export interface VerifyOutcome {
  package: Provenance["package"];
  writtenAt: string;
  predictions: PredictionCheck[];
  page: PageCheck;
  /** True when every prediction and the page agree. */
  ok: boolean;
}

const OBSERVATION_FIELDS = new Set(["weights", "include", "relevance", "similarity", "info_x"]);
const SKIPPED_FIELDS = new Set(["warnings", "experiment_id", "most_eval"]);

/** The most decimals any number of the results shows (the producing service's rounding); null for full precision. */
export function publishedDecimals(results: ReadonlyArray<Result>): number | null {
  let most = 0;
  let full = false;
  const visit = (v: unknown): void => {
    if (typeof v === "number") {
      if (!Number.isFinite(v) || Number.isInteger(v)) return;
      const s = String(v);
      if (s.includes("e")) full = true;
      else most = Math.max(most, s.length - s.indexOf(".") - 1);
    } else if (Array.isArray(v)) v.forEach(visit);
    else if (v !== null && typeof v === "object") Object.values(v).forEach(visit);
  };
  results.forEach(visit);
  return full || most > 12 ? null : most;
}

interface Comparison {
  compared: number;
  largest?: PredictionCheck["largest"];
}

/** Walks the report's result and the engine's side by side; the largest difference wins (a mismatch of kind is infinite). */
function compare(report: unknown, engine: unknown, path: string, out: Comparison): void {
  const note = (difference: number, r: unknown, e: unknown) => {
    if (out.largest === undefined || difference > out.largest.difference) {
      out.largest = { difference, place: path, report: r as number | string | null, engine: e as number | string | null };
    }
  };
  if (typeof report === "number") {
    out.compared++;
    if (typeof engine !== "number") return note(Infinity, report, engine ?? null);
    const d = Math.abs(report - engine);
    note(d <= 1e-12 * Math.max(1, Math.abs(engine)) ? 0 : d, report, engine);
    return;
  }
  if (report === null || typeof report !== "object") {
    if (report !== engine && !(report === null && engine === undefined)) {
      out.compared++;
      note(Infinity, report ?? null, (engine ?? null) as never);
    }
    return;
  }
  if (Array.isArray(report)) {
    if (!Array.isArray(engine) || engine.length !== report.length) {
      out.compared++;
      return note(Infinity, `${report.length} values`, Array.isArray(engine) ? `${engine.length} values` : "none");
    }
    report.forEach((v, i) => compare(v, engine[i], `${path}[${i}]`, out));
    return;
  }
  for (const [key, v] of Object.entries(report as Record<string, unknown>)) {
    if (SKIPPED_FIELDS.has(key)) continue;
    compare(v, (engine as Record<string, unknown> | undefined)?.[key], path === "" || path.endsWith(": ") ? `${path}${key}` : `${path}.${key}`, out);
  }
}

function describeService(item: ProvenanceItem): string {
  if (item.service === null) return "an unknown service";
  const where = item.service.url !== undefined && item.service.url !== "embedded" ? ` at ${item.service.url}` : "";
  return `the ${item.service.kind} service${where}`;
}

/** Recomputes one prediction and compares it with what the report shows. */
export async function checkItem(item: ProvenanceItem, index: number, data: ReadonlyArray<DataSource> = []): Promise<PredictionCheck> {
  const base = { item: index + 1, title: item.title, service: describeService(item), compared: 0 };
  if (item.analysis === null) return { ...base, status: "cannot check", detail: "the report does not say which analysis produced it" };
  let request = item.request;
  let given = "";
  if (request === null) {
    if (item.requestSha256 === null) return { ...base, status: "cannot check", detail: "the request was not recorded (results given by hand)" };
    const shape = item.shape !== null ? `, ${item.shape.rows} x ${item.shape.attributes} data` : "";
    if (data.length === 0)
      return {
        ...base,
        status: "cannot check",
        detail: `data not embedded (too large; request SHA-256 ${item.requestSha256}${shape}); give the data with --data <request.json or data.csv>`,
      };
    // The data given: the one whose request has the report's digest.
    const tried: string[] = [];
    for (const source of data) {
      const made = source.requestFor(item);
      if (typeof made === "string") {
        tried.push(`${source.path}: ${made}`);
        continue;
      }
      const digest = sha256(canonicalRequest(item.analysis, made));
      if (digest === item.requestSha256) {
        request = made;
        given = ` with the data of ${source.path}`;
        break;
      }
      tried.push(`${source.path} gives sha256 ${digest}`);
    }
    if (request === null)
      return {
        ...base,
        status: "cannot check",
        detail: `data differs from the report's (sha256 ${item.requestSha256}${shape}; ${tried.join("; ")})`,
      };
    const checked = await recompute(item, request, base);
    return { ...checked, ...(checked.detail === undefined ? { detail: `checked${given}` } : { detail: `${checked.detail} (checked${given})` }) };
  }
  const digest = sha256(canonicalRequest(item.analysis, request));
  if (digest !== item.requestSha256) {
    return {
      ...base,
      status: "differ",
      detail: `the embedded request does not match its SHA-256 (edited after the report was written)`,
      largest: { difference: Infinity, place: "request", report: item.requestSha256, engine: digest },
    };
  }
  return recompute(item, request, base);
}

/** Computes the request again with the local engine and compares the results the report shows. */
async function recompute(
  item: ProvenanceItem,
  request: ProvenanceRequest,
  base: Pick<PredictionCheck, "item" | "title" | "service" | "compared">,
): Promise<PredictionCheck> {
  const analysis = item.analysis;
  if (analysis === null) return { ...base, status: "cannot check", detail: "the report does not say which analysis produced it" };
  const body = {
    y: request.y,
    X: request.X,
    ...(request.theta !== undefined ? { theta: request.theta } : {}),
    options: request.options ?? {},
  };
  let parsed;
  try {
    parsed = parseRequest(analysis, body, "v3", { requireAccessId: false });
  } catch (error) {
    return { ...base, status: "cannot check", detail: `the local engine refuses the embedded request: ${(error as Error).message}` };
  }
  if (parsed.thetas.length !== item.results.length) {
    return {
      ...base,
      status: "cannot check",
      detail: `the request has ${parsed.thetas.length} theta rows but the report shows ${item.results.length} results`,
    };
  }
  const decimals = publishedDecimals(item.results);
  const rowLabels = item.context.rowLabels;
  const thetaLabels = item.context.thetaLabels;
  const out: Comparison = { compared: 0 };
  for (const [j, theta] of parsed.thetas.entries()) {
    let engine: Result;
    try {
      const r =
        analysis === "grid"
          ? await gridParallel(parsed.data, theta, parsed.options as never)
          : runAnalysis(parsed.analysis, parsed.data, theta, parsed.options as never);
      engine = fromV3Results(JSON.parse(encodeJson(r, decimals)));
    } catch (error) {
      return { ...base, status: "cannot check", detail: `the local engine cannot compute theta row ${j + 1}: ${(error as Error).message}` };
    }
    const prefix = item.experiment ? `theta row ${thetaLabels?.[j] !== undefined ? `"${thetaLabels[j]}"` : j + 1}: ` : "";
    compare(item.results[j], engine, prefix, out);
  }
  const largest = out.largest;
  if (largest !== undefined) {
    // An observation's field is named by the observation's row label too.
    const m = largest.place.match(/(?:^|: )(\w+)\[(\d+)\]/);
    if (m !== null && OBSERVATION_FIELDS.has(m[1]) && rowLabels?.[Number(m[2])] !== undefined) largest.place += ` (row "${rowLabels[Number(m[2])]}")`;
  }
  if (largest === undefined || largest.difference === 0)
    return { ...base, compared: out.compared, status: "agree", ...(largest !== undefined ? { largest } : {}) };
  const lastDigit = decimals !== null && largest.difference <= 10 ** -decimals * (1 + 1e-9);
  return {
    ...base,
    compared: out.compared,
    status: "differ",
    largest,
    ...(lastDigit ? { detail: `at the last decimal the service published (${decimals}): rounding on another machine can do this, and so can an edit` } : {}),
  };
}

/** Text inside the tags of an HTML fragment, entities decoded. */
function textOf(html: string): string {
  return html
    .replace(/<[^>]*>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .trim();
}

/** Names the place of a position in a report page: the section, and the table cell or chart. */
export function placeOf(page: string, pos: number): string {
  const before = page.slice(0, pos);
  const parts: string[] = [];
  const section = before.lastIndexOf('<section class="rbp-section"');
  if (section >= 0 && before.lastIndexOf("</section>") < section) {
    const h2 = page.slice(section).match(/<h2>([\s\S]*?)<\/h2>/);
    const id = page.slice(section).match(/id="prediction-(\d+)"/);
    parts.push(`prediction ${id?.[1] ?? "?"}${h2 !== null ? ` "${textOf(h2[1])}"` : ""}`);
  } else if (before.lastIndexOf("<header>") > before.lastIndexOf("</header>")) parts.push("the page header");
  else if (before.lastIndexOf('<footer class="rbp-provenance">') > before.lastIndexOf("</footer>")) parts.push("the provenance footer");
  const table = before.lastIndexOf("<table");
  if (table >= 0 && before.lastIndexOf("</table>") < table) {
    const caption = page.slice(table).match(/<caption>([\s\S]*?)<\/caption>/);
    parts.push(`table "${caption !== null ? textOf(caption[1]) : "?"}"`);
    const row = before.lastIndexOf("<tr");
    const rowHtml = page.slice(row, page.indexOf("</tr>", row));
    const first = rowHtml.match(/<t[dh]>([\s\S]*?)<\/t[dh]>/);
    const column = (before.slice(row).match(/<t[dh][ >]/g) ?? []).length - 1;
    const head = page.slice(table).match(/<thead>([\s\S]*?)<\/thead>/);
    const headers = head !== null ? [...head[1].matchAll(/<th>([\s\S]*?)<\/th>/g)].map((m) => textOf(m[1])) : [];
    parts.push(`row "${first !== null ? textOf(first[1]) : "?"}", column "${headers[column] ?? column + 1}"`);
  } else if (before.lastIndexOf("<script") > before.lastIndexOf("</script>")) {
    const div = before.lastIndexOf('<div id="rbp-report-fig-');
    const id = div >= 0 ? page.slice(div).match(/id="(rbp-report-fig-\d+)"/)?.[1] : undefined;
    parts.push(`the data of a chart${id !== undefined ? ` (${id})` : ""}`);
  }
  const line = before.split("\n").length;
  parts.push(`line ${line}`);
  return parts.join(", ");
}

/** Renders the page again from its provenance and compares it with the file. */
export function checkPage(provenance: Provenance, page: string): PageCheck {
  const here = packageInfo();
  if (provenance.package.version !== here.version || provenance.package.name !== here.name) {
    return {
      status: "cannot check",
      detail: `the page was written by ${provenance.package.name} ${provenance.package.version}; this is ${here.name} ${here.version}, whose pages differ`,
    };
  }
  let expected: string;
  try {
    const items = reportablesOf(provenance);
    expected = withFooter(reportHtml(items.length === 1 ? items[0] : items, reportOptionsOf(provenance)), provenance);
  } catch (error) {
    return { status: "cannot check", detail: `the page cannot be rendered again from its data: ${(error as Error).message}` };
  }
  if (expected === page) return { status: "agree" };
  let i = 0;
  while (i < page.length && i < expected.length && page[i] === expected[i]) i++;
  return { status: "differ", place: placeOf(page, i), detail: "the page does not show what its embedded results render (edited after it was written)" };
}

/** Checks a report's HTML. Throws UsageError for a page that is not a report with provenance. */
export async function verifyReportHtml(html: string, data: ReadonlyArray<DataSource> = []): Promise<VerifyOutcome> {
  let read;
  try {
    read = readProvenance(html);
  } catch (error) {
    throw new UsageError(`the report's provenance cannot be read: ${(error as Error).message}`);
  }
  if (read === undefined)
    throw new UsageError("the file has no provenance: it is not a report written by rbp-notebook's saveReport (or was written before reports carried one)");
  const { provenance, page } = read;
  const predictions: PredictionCheck[] = [];
  for (const [i, item] of provenance.items.entries()) predictions.push(await checkItem(item, i, data));
  const pageCheck = checkPage(provenance, page);
  return {
    package: provenance.package,
    writtenAt: provenance.writtenAt,
    predictions,
    page: pageCheck,
    ok: predictions.every((p) => p.status === "agree") && pageCheck.status === "agree",
  };
}

/** A difference in 4 significant digits (1e-6, not 9.999999999732445e-7). */
function difference(d: number): string {
  return Number.isFinite(d) ? String(Number(d.toPrecision(4))) : "(not comparable)";
}

function show(v: number | string | null): string {
  return typeof v === "number" ? String(v) : v === null ? "null" : v;
}

/** The outcome as the lines `rbp verify` prints. */
export function verifyText(file: string, outcome: VerifyOutcome): string {
  const lines = [
    `${file}: written ${outcome.writtenAt} by ${outcome.package.name} ${outcome.package.version}; ${outcome.predictions.length} ${outcome.predictions.length === 1 ? "prediction" : "predictions"}`,
  ];
  for (const p of outcome.predictions) {
    const head = `${p.item}. ${p.title} (from ${p.service})`;
    if (p.status === "agree")
      lines.push(
        `${head}: agree (${p.compared} numbers, largest difference ${difference(p.largest?.difference ?? 0)}${p.detail !== undefined ? `; ${p.detail}` : ""})`,
      );
    else if (p.status === "differ") {
      const l = p.largest!;
      lines.push(
        `${head}: differ: largest difference ${difference(l.difference)} at ${l.place} (report ${show(l.report)}, local engine ${show(l.engine)})${p.detail !== undefined ? `; ${p.detail}` : ""}`,
      );
    } else lines.push(`${head}: cannot check: ${p.detail}`);
  }
  const pg = outcome.page;
  lines.push(
    pg.status === "agree"
      ? "page: agrees with its embedded results"
      : pg.status === "differ"
        ? `page: differ at ${pg.place}: ${pg.detail}`
        : `page: cannot check: ${pg.detail}`,
  );
  const count = (s: CheckStatus) => outcome.predictions.filter((p) => p.status === s).length;
  lines.push(`${outcome.ok ? "verified" : "NOT verified"}: ${count("agree")} agree, ${count("differ")} differ, ${count("cannot check")} cannot check`);
  return lines.join("\n");
}

export interface VerifyArgs {
  file: string;
  json: boolean;
  /** Files given with --data. */
  data: string[];
}

export function parseVerifyArgs(args: string[]): VerifyArgs {
  let file: string | undefined;
  let json = false;
  const data: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--json") json = true;
    else if (arg === "--data") {
      const value = args[++i];
      if (value === undefined || value === "") throw new UsageError(`--data needs a file\n\n${VERIFY_USAGE}`);
      data.push(value);
    } else if (arg.startsWith("--data=") && arg.length > "--data=".length) data.push(arg.slice("--data=".length));
    else if (!arg.startsWith("-") && file === undefined) file = arg;
    else throw new UsageError(`unexpected argument "${arg}"\n\n${VERIFY_USAGE}`);
  }
  if (file === undefined) throw new UsageError(`which report?\n\n${VERIFY_USAGE}`);
  return { file, json, data };
}

/**
 * A --data file: JSON (the request as sent, or y and X) or CSV (the data table with a header).
 * Throws UsageError when it cannot be read.
 *
 * @example
 * const data = await readDataSource("people.csv");
 * const outcome = await verifyReportHtml(html, [data]);
 */
export async function readDataSource(path: string): Promise<DataSource> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new UsageError(`--data ${path}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`);
  }
  const ext = extname(path).toLowerCase();
  if (ext === ".csv" || (ext !== ".json" && !/^\s*[{[]/.test(text))) return csvSource(path, text);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--data ${path}: not JSON (${(error as Error).message}); give the request as sent (.json) or the data table (.csv)`);
  }
  if (
    body === null ||
    typeof body !== "object" ||
    Array.isArray(body) ||
    !Array.isArray((body as { y?: unknown }).y) ||
    !Array.isArray((body as { X?: unknown }).X)
  )
    throw new UsageError(`--data ${path}: expected the request as sent, an object with y and X (and theta and options)`);
  const b = body as { y: number[]; X: Array<Array<number | null>>; theta?: ProvenanceRequest["theta"]; options?: Record<string, unknown> };
  return {
    path,
    requestFor: (item) => ({
      y: b.y,
      X: b.X,
      ...(b.theta !== undefined ? { theta: b.theta } : item.theta !== undefined ? { theta: item.theta } : {}),
      options: b.options ?? item.options,
    }),
  };
}

/** The data table as CSV: the report's outcome and attribute columns by name; theta and options from the report. */
function csvSource(path: string, text: string): DataSource {
  const table = parseCsv(text);
  const header = table[0] ?? [];
  return {
    path,
    requestFor(item) {
      const { outcome, attributes } = item.context;
      const missing = [outcome, ...attributes].filter((name) => !header.includes(name));
      if (missing.length > 0) return `no column ${missing.map((m) => `"${m}"`).join(", ")} (the columns are ${header.join(", ")})`;
      if (item.shape !== null && item.shape.thetaRows > 0 && item.theta === undefined)
        return "the report does not hold the theta rows, so a CSV of the data cannot make its request; give the request as sent (.json)";
      const at = (name: string) => header.indexOf(name);
      const y: number[] = [];
      const X: Array<Array<number | null>> = [];
      for (let r = 1; r < table.length; r++) {
        const row = table[r];
        if (row.length === 1 && row[0] === "") continue;
        const out = Number(row[at(outcome)] ?? "");
        // A row without an outcome is dropped, as every call drops it.
        if ((row[at(outcome)] ?? "").trim() === "" || !Number.isFinite(out)) continue;
        const x: Array<number | null> = [];
        for (const name of attributes) {
          const cell = (row[at(name)] ?? "").trim();
          const v = cell === "" ? null : Number(cell);
          if (v !== null && !Number.isFinite(v)) return `row ${r + 1}, column "${name}": "${cell}" is not a number`;
          x.push(v);
        }
        y.push(out);
        X.push(x);
      }
      return { y, X, ...(item.theta !== undefined ? { theta: item.theta } : {}), options: item.options };
    },
  };
}

/**
 * RFC 4180: rows of cells (quoted cells may hold commas, quotes as "" and line breaks).
 *
 * @example
 * parseCsv('a,b\r\n1,"x, ""y"""\r\n'); // [["a", "b"], ["1", 'x, "y"']]
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(cell);
      cell = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
    } else cell += c;
  }
  if (cell !== "" || row.length > 0) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

/** `rbp verify`: returns the exit status. */
export async function verify(args: VerifyArgs, io: { stdout: (s: string) => void }): Promise<number> {
  const html = await readFile(args.file, "utf8");
  const data = await Promise.all(args.data.map(readDataSource));
  const outcome = await verifyReportHtml(html, data);
  io.stdout((args.json ? JSON.stringify(outcome, (_k, v: unknown) => (v === Infinity ? "Infinity" : v), 2) : verifyText(args.file, outcome)) + "\n");
  return outcome.ok ? 0 : 1;
}
