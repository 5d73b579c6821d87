/**
 * `saveReport(prediction or list, path)`: one self-contained HTML file (plotly.js inlined once, no
 * network needed to open it) with each prediction's options, notes, summary, charts and
 * observations; an experiment's rows each get their summary. The file carries its provenance
 * (the requests, the results shown, the package version, the service: display/provenance.ts), so
 * that `rbp verify <file>` can recompute every prediction. Returns the absolute path written.
 */
import { saveVerifiableReport as writeReport, type VerifiableReportable, type VerifiableReportOptions } from "../display/index.js";
import { toReportable, type ReportItem } from "./prediction.js";

/**
 * Writes one report of one or several predictions.
 *
 * @example
 * await rbp.saveReport([p, e], "reports/study.html"); // then: rbp verify reports/study.html
 */
export async function saveReport(items: ReportItem | ReadonlyArray<ReportItem>, path: string, options: VerifiableReportOptions = {}): Promise<string> {
  const list: VerifiableReportable[] = Array.isArray(items) ? (items as ReadonlyArray<ReportItem>).map(toReportable) : [toReportable(items as ReportItem)];
  return writeReport(list.length === 1 ? list[0] : list, path, options);
}
