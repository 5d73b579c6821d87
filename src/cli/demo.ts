/**
 * `npm run demo`: the quickstart analysis without Jupyter, through the notebook helper.
 *
 * A Grid on the quickstart 7 x 5 data (examples/quickstart-7x5.json, or the file given as the
 * first argument) on the embedded local service, the HTML report written to
 * reports/quickstart.html (or the second argument), and the headline numbers printed. The same
 * `grid(...)` and `saveReport(...)` a notebook calls; no account and no network needed. The
 * report's size is printed, with what the lighter plotly.js choices (`{ plotly: "file" }`, a URL)
 * would make it.
 */
import { readFile, stat } from "node:fs/promises";
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { disconnect, formatNumber, grid, saveReport, PredictionError } from "../index.js";
import { plotlyFileName, plotlyMinifiedSource, reportHtml } from "../display/index.js";

/** Bytes in words: "1.98 MB", "41 KB". */
function size(bytes: number): string {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(2)} MB` : `${Math.max(1, Math.round(bytes / 1e3))} KB`;
}

interface Body {
  y: number[];
  X: Array<Array<number | null>>;
  theta: number[];
  options?: Record<string, unknown>;
}

const root = fileURLToPath(new URL("../../", import.meta.url));

async function main(): Promise<void> {
  const input = resolve(process.argv[2] ?? resolve(root, "examples/quickstart-7x5.json"));
  const output = resolve(process.argv[3] ?? resolve(root, "reports/quickstart.html"));
  const body = JSON.parse(await readFile(input, "utf8")) as Body;
  const names = body.X[0].map((_, j) => `x${j + 1}`);
  // The circumstance as one row object keyed by the attribute names (a bare array would be row positions).
  const theta = Object.fromEntries(names.map((name, j) => [name, body.theta[j]]));

  const prediction = await grid({ y: body.y, X: body.X, names, outcome: "y" }, { theta, title: "Quickstart: Grid on the 7 x 5 example" }, body.options ?? {});
  const path = await saveReport(prediction, output);

  const rows: Array<[string, string]> = [
    ["yhat", formatNumber(prediction.yhat)],
    ["fit", formatNumber(prediction.fit)],
    ["adjusted fit", formatNumber(prediction.adjustedFit)],
    ["K", String(prediction.k ?? prediction.attributes.length)],
    ["combinations", prediction.combinations !== undefined ? String(prediction.combinations) : "not reported"],
  ];
  console.log(`${prediction.title} (N = ${prediction.observationCount}, ${prediction.service} service, job ${prediction.receipt.job_id})`);
  for (const [name, value] of rows) console.log(`  ${name.padEnd(14)}${value}`);
  const inline = (await stat(path)).size;
  const linked = Buffer.byteLength(reportHtml(prediction.toReportable(), { plotly: "file" }));
  console.log(`Report: ${path} (${size(inline)}, plotly.js inlined)`);
  console.log(
    `  with { plotly: "file" }: ${size(linked)} + ${plotlyFileName()} beside it (${size(Buffer.byteLength(plotlyMinifiedSource()))}); with a URL: ${size(linked)}`,
  );
  await disconnect();
}

main().catch((error: unknown) => {
  console.error(error instanceof PredictionError ? error.text() : error instanceof Error ? `${error.name}: ${error.message}` : String(error));
  process.exitCode = 1;
});
