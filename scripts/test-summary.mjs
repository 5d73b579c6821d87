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
console.log(`tests: ${report.numPassedTests} passed, ${report.numFailedTests} failed${skipped ? `, ${skipped} skipped` : ""}`);
process.exit(report.numFailedTests === 0 && report.numPassedTests > 0 ? 0 : 1);
