import { defineConfig } from "vitest/config";

/**
 * The suites that pin the policy modules stryker.config.json mutates (`npm run mutate`): the client's
 * retry and polling rules, the service's limits, HTTP bodies and quota ledger, the display's
 * formatting and tables. Fast and server-light, so each mutant runs in about a second.
 */
export default defineConfig({
  test: {
    // instrumented code on a loaded machine: the 9,050-row table test takes seconds
    testTimeout: 60_000,
    include: [
      "test/client/units.test.ts",
      "test/client/policy.test.ts",
      "test/service/limits.test.ts",
      "test/service/policy.test.ts",
      "test/service/fields.test.ts",
      "test/display/format.test.ts",
      "test/display/tables.test.ts",
      "test/display/table-output.test.ts",
      "test/display/report.test.ts",
    ],
  },
});
