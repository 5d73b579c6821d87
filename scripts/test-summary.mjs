// Prints vitest's JSON reports as the plain closing line CI reads: "tests: N passed, N failed".
// Several reports (the main run, then the loaded run of scripts/loaded-run.sh) are counted together,
// each also on a line of its own: node scripts/test-summary.mjs .ci-report.json .ci-report-loaded.json
import { readFileSync } from "node:fs";

const paths = process.argv.slice(2);
if (paths.length === 0) {
  console.error("usage: node scripts/test-summary.mjs REPORT.json [MORE.json ...]");
  process.exit(2);
}
const total = { passed: 0, failed: 0, skipped: 0, failedFiles: 0 };
let missing = 0;
for (const path of paths) {
  let report;
  try {
    report = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    console.error(`no test report at ${path}: ${error.message}`);
    missing++;
    continue;
  }
  const counts = {
    passed: report.numPassedTests,
    failed: report.numFailedTests,
    skipped: report.numPendingTests + report.numTodoTests,
    // A file that fails outside its tests (a beforeAll, an import) fails no test but fails the run.
    failedFiles: (report.testResults ?? []).filter((file) => file.status === "failed").length,
  };
  for (const key of Object.keys(total)) total[key] += counts[key];
  if (paths.length > 1) console.log(`${path}: ${line(counts)}`);
}
console.log(`tests: ${line(total)}`);
process.exit(missing === 0 && total.failed === 0 && total.failedFiles === 0 && total.passed > 0 ? 0 : 1);

function line({ passed, failed, skipped, failedFiles }) {
  return (
    `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}` +
    (failedFiles ? ` (${failedFiles} test file${failedFiles === 1 ? "" : "s"} failed)` : "")
  );
}
