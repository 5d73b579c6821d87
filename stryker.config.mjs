// npm run mutate: StrykerJS over the policy modules (README, "Testing"). Not part of npm test: it
// runs the suites of vitest.mutate.config.ts once per mutant (13 minutes on two shared cores).
import { readFileSync } from "node:fs";

/**
 * `file:start-end` for each named top-level function of `file` (from its `export function NAME` to
 * the closing brace at the start of a line), so the ranges follow the code when lines move.
 */
function functions(file, ...names) {
  const lines = readFileSync(new URL(file, import.meta.url), "utf8").split("\n");
  return names.map((name) => {
    const start = lines.findIndex((l) => new RegExp(`^export (async )?function ${name}\\b`).test(l));
    if (start < 0) throw new Error(`stryker.config.mjs: no function ${name} in ${file}`);
    const end = lines.findIndex((l, i) => i > start && l === "}");
    return `${file}:${start + 1}-${end + 1}`;
  });
}

/** @type {import("@stryker-mutator/api/core").PartialStrykerOptions} */
export default {
  packageManager: "npm",
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutate.config.ts", related: false },
  coverageAnalysis: "perTest",
  // Static mutants (module-level constants and code run at import, before any test) would each
  // rerun every suite above: about 40% of the mutants and 90% of the time (hours on two cores).
  // They are left out of the score, and counted as "ignored" in its report.
  ignoreStatic: true,
  mutate: [
    // the client's retry and polling policy
    "src/client/retry.ts",
    "src/client/polling.ts",
    // the service's limits, quota ledger, and the body policies of http.ts (the rest of http.ts is
    // sockets and streams, pinned by the service suites that start servers: too slow to run per mutant)
    "src/service/limits.ts",
    "src/service/quota.ts",
    ...functions("src/service/http.ts", "errorBody", "checkJsonShape", "parseJsonLenient"),
    // the display's formatting and tables
    "src/display/format.ts",
    "src/display/tables.ts",
  ],
  ignorePatterns: [".bench-out", ".jupyter", ".stryker-tmp", ".tools", "coverage", "dist", "notebooks", "reports", "test-output"],
  reporters: ["clear-text", "progress", "json", "html"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  htmlReporter: { fileName: "reports/mutation/mutation.html" },
  incremental: true,
  incrementalFile: "reports/mutation/stryker-incremental.json",
  concurrency: 2,
  timeoutMS: 5000,
  thresholds: { high: 90, low: 85, break: null },
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
};
