/** Escaping and number formatting shared by the tables, charts and report. */

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(text: unknown): string {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** The mark shown for an undefined number. */
export const MISSING = "—";

/**
 * A number for a table: up to 6 significant digits, trailing zeros trimmed, exponent notation for
 * very large or very small magnitudes; null (an undefined number) is "—".
 */
export function formatNumber(x: number | null | undefined, digits = 6): string {
  if (x === null || x === undefined || !Number.isFinite(x)) return MISSING;
  if (x === 0) return "0";
  const a = Math.abs(x);
  if (a >= 1e9 || a < 1e-4) return x.toExponential(Math.max(0, digits - 3)).replace(/\.?0+e/, "e");
  if (Number.isInteger(x) && a < 1e9) return String(x);
  const s = x.toPrecision(digits);
  return s.includes(".") ? s.replace(/\.?0+$/, "") : s;
}

/** A count with thousands separators: 9000 -> "9,000". */
export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

/**
 * JSON that is safe inside an HTML <script> element: `<`, `>`, `&` and the line separators
 * U+2028/U+2029 are written as \u escapes, so no data value can close the script or open a comment.
 */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === "number" && !Number.isFinite(v) ? null : v))
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

/**
 * Pads plain-text table cells into aligned columns (for text/plain outputs).
 *
 * @example
 * textTable(["row", "yhat"], [["1", "3.29"], ["2", "-0.5"]]); // "row  yhat\n---  ----\n1    3.29\n2    -0.5"
 */
export function textTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, j) => Math.max(h.length, ...rows.map((r) => (r[j] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, j) => (j === 0 ? c.padEnd(widths[j]) : c.padStart(widths[j])))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}
