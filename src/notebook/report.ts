/**
 * `saveReport(prediction or list, path)`: one self-contained HTML file (plotly.js inlined once, no
 * network needed to open it) with each prediction's options, notes, summary, charts and
 * observations; an experiment's rows each get their summary. Returns the absolute path written.
 */
import { saveReport as writeReport, type Reportable, type ReportOptions } from "../display/index.js";
import { toReportable, type ReportItem } from "./prediction.js";

export async function saveReport(items: ReportItem | ReadonlyArray<ReportItem>, path: string, options: ReportOptions = {}): Promise<string> {
  const list: Reportable[] = Array.isArray(items) ? (items as ReadonlyArray<ReportItem>).map(toReportable) : [toReportable(items as ReportItem)];
  return writeReport(list.length === 1 ? list[0] : list, path, options);
}
