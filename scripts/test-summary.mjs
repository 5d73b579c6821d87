// Prints vitest's JSON reports as the plain closing line CI reads: "tests: N passed, N failed".
// Several reports (the main run, then the loaded run of scripts/loaded-run.sh) are counted together,
// each also on a line of its own: node scripts/test-summary.mjs .ci-report.json .ci-report-loaded.json
// Every failed test is named above that line, with the first lines of its message: CI keeps only the
// tail of what a run printed, and the tail must say what failed.
import { readFileSync } from "node:fs";

const paths = process.argv.slice(2);
if (paths.length === 0) {
  console.error("usage: node scripts/test-summary.mjs REPORT.json [MORE.json ...]");
  process.exit(2);
}
const total = { passed: 0, failed: 0, skipped: 0, failedFiles: 0 };
let missing = 0;
const failures = [];
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
  failures.push(...failuresOf(report, path));
  if (paths.length > 1) console.log(`${path}: ${line(counts)}`);
}
for (const failure of failures) console.log(failure);
console.log(`tests: ${line(total)}`);
process.exit(missing === 0 && total.failed === 0 && total.failedFiles === 0 && total.passed > 0 ? 0 : 1);

function line({ passed, failed, skipped, failedFiles }) {
  return (
    `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}` +
    (failedFiles ? ` (${failedFiles} test file${failedFiles === 1 ? "" : "s"} failed)` : "")
  );
}

/** "FAILED file > title: message" for each failed test, and for a file that failed outside its tests. */
function failuresOf(report, path) {
  const lines = [];
  for (const file of report.testResults ?? []) {
    const name = relative(file.name ?? "?");
    const failed = (file.assertionResults ?? []).filter((test) => test.status === "failed");
    for (const test of failed) {
      lines.push(`FAILED (${path}) ${name} > ${test.fullName ?? test.title}: ${excerpt(test.failureMessages)}`);
    }
    if (file.status === "failed" && failed.length === 0) {
      lines.push(`FAILED (${path}) ${name}, outside its tests: ${excerpt([file.message ?? ""])}`);
    }
  }
  return lines;
}

function relative(name) {
  const at = name.indexOf("/test/");
  return at >= 0 ? name.slice(at + 1) : name;
}

/** The first three non-empty lines of the first message, at most 600 characters. */
function excerpt(messages) {
  const text = (messages ?? []).find((message) => message && message.trim()) ?? "(no message)";
  const first = text
    .split("\n")
    .map((part) => part.trim())
    .filter(Boolean)
    .slice(0, 3)
    .join(" | ");
  return first.length > 600 ? `${first.slice(0, 600)}...` : first;
}
