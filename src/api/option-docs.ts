/**
 * What is generated from the option table (options.ts OPTION_TABLE): the client's input types
 * (client/option-types.ts, plain literal unions that tslab's TypeScript 5.0 reads) and the options
 * table of docs/api.md section 4, with the defaults taken from the engine. `npm run gen:options`
 * writes both; test/api/option-table.test.ts fails when either is out of date.
 */
import { RETAIN_KEYS } from "../engine/options.js";
import { ANALYSES, analysisLabel, type Analysis } from "../engine/result.js";
import { CANONICAL_VALUES, OPTION_TABLE, resolveOptions, toV3Options, type OptionRow } from "./options.js";

/** The client's TypeScript type of an option for an analysis. */
function clientType(row: OptionRow, analysis: Analysis): { type: string; comment?: string } {
  const narrow = row.clientTypeFor?.[analysis];
  if (narrow !== undefined) return { type: narrow.type, comment: narrow.comment };
  const type = row.clientType ?? (row.values !== undefined ? CANONICAL_VALUES[row.values].map((v) => JSON.stringify(v)).join(" | ") : "unknown");
  return { type, ...(row.clientDoc !== undefined ? { comment: row.clientDoc } : {}) };
}

const field = (key: string, t: { type: string; comment?: string }) =>
  `${t.comment !== undefined ? `  /** ${t.comment} */\n` : ""}  ${key}?: ${t.type} | null;\n`;

/**
 * client/option-types.ts: CommonOptionsInput (options of every analysis with one type) and one
 * interface per analysis, fields in the table's order, each `| null` ("the service's default").
 *
 * @example
 * writeFileSync("src/client/option-types.ts", renderClientOptionTypes());
 */
export function renderClientOptionTypes(): string {
  const common = OPTION_TABLE.filter((r) => r.analyses.length === ANALYSES.length && r.clientTypeFor === undefined);
  const iface = (name: string, rows: readonly OptionRow[], analysis: Analysis, ext: string) =>
    `export interface ${name}${ext} {\n${rows.map((r) => field(r.spellings[0].key, clientType(r, analysis))).join("")}}\n`;
  const own = (a: Analysis) => OPTION_TABLE.filter((r) => r.analyses.includes(a) && !common.includes(r));
  return [
    "/**",
    " * The client's option inputs (v3 names). GENERATED from the option table (src/api/options.ts,",
    " * OPTION_TABLE) by `npm run gen:options`; do not edit. Plain literal unions, for tslab's TypeScript 5.0.",
    " */",
    "",
    `export type RetainKey =\n${RETAIN_KEYS.map((k) => `  | ${JSON.stringify(k)}`).join("\n")};`,
    "",
    '/** Options of every analysis. `null` means "the service\'s default", like leaving the key out. */',
    iface("CommonOptionsInput", common, "psr", ""),
    iface("PsrOptionsInput", own("psr"), "psr", " extends CommonOptionsInput"),
    iface("MaxFitOptionsInput", own("maxfit"), "maxfit", " extends CommonOptionsInput"),
    iface("GridOptionsInput", own("grid"), "grid", " extends CommonOptionsInput"),
  ].join("\n");
}

function formatDefault(value: unknown): string {
  if (value === undefined) return "none";
  if (typeof value === "number") return String(value);
  return `\`${JSON.stringify(value).replace(/"/g, "").replace(/,/g, ", ")}\``;
}

/** The engine's default of an option per analysis, as the docs write it ("PSR `[0.5]`; MaxFit, Grid `[0, 0.2, 0.5, 0.8]`"). */
function engineDefault(row: OptionRow): string {
  if (row.doc.default !== undefined) return row.doc.default;
  const byText = new Map<string, Analysis[]>();
  for (const a of row.analyses) {
    const v3 = toV3Options(a, resolveOptions(a, {}, 1) as never) as Record<string, unknown>;
    const text = formatDefault(v3[row.spellings[0].key]);
    byText.set(text, [...(byText.get(text) ?? []), a]);
  }
  if (byText.size === 1) return [...byText.keys()][0];
  return [...byText].map(([text, as]) => `${as.map(analysisLabel).join(", ")} ${text}`).join("; ");
}

function analysesText(row: OptionRow): string {
  if (row.doc.analyses !== undefined) return row.doc.analyses;
  return row.analyses.length === ANALYSES.length ? "all" : row.analyses.map(analysisLabel).join(", ");
}

/**
 * The options table of docs/api.md section 4: v3 name (and other v3 spellings), v2 name, values,
 * the engine's default, analyses.
 *
 * @example
 * renderOptionsDoc().startsWith("| v3 name |"); // true
 */
export function renderOptionsDoc(): string {
  const lines = ["| v3 name | v2 name | values, v3 ↔ v2 | default | analyses |", "| --- | --- | --- | --- | --- |"];
  for (const row of OPTION_TABLE) {
    const first = row.spellings[0].key;
    const alsoV3 = row.spellings.slice(1).filter((s) => !s.v2Body && !s.key.startsWith("_") && s.key !== "eval_type" && s.key !== "k");
    const name = `\`${first}\`${alsoV3.length > 0 ? ` (also ${alsoV3.map((s) => `\`${s.key}\``).join(", ")})` : ""}`;
    lines.push(`| ${name} | ${row.doc.v2} | ${row.doc.values} | ${engineDefault(row)} | ${analysesText(row)} |`);
  }
  return lines.join("\n") + "\n";
}

/** Markers around the generated table in docs/api.md. */
export const DOC_BEGIN = "<!-- options table: generated from src/api/options.ts by `npm run gen:options`; do not edit -->";
export const DOC_END = "<!-- end of options table -->";
