// Prints vitest's JSON report as the plain closing line CI reads: "tests: N passed, N failed".
import { readFileSync } from "node:fs";

const path = process.argv[2];
let report;
try {
  report = JSON.parse(readFileSync(path, "utf8"));
} catch (error) {
  console.error(`no test report at ${path}: ${error.message}`);
  process.exit(1);
}
const skipped = report.numPendingTests + report.numTodoTests;
// A file that fails outside its tests (a beforeAll, an import) fails no test but fails the run.
const failedFiles = (report.testResults ?? []).filter((file) => file.status === "failed").length;
console.log(
  `tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ""}` +
    (failedFiles ? ` (${failedFiles} test file${failedFiles === 1 ? "" : "s"} failed)` : ""),
);
process.exit(report.numFailedTests === 0 && failedFiles === 0 && report.numPassedTests > 0 ? 0 : 1);
