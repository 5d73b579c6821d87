import { defineConfig } from "vitest/config";

// RBP_TEST_REPORT (set by .ci/run) adds a JSON report beside the usual console output.
const report = process.env.RBP_TEST_REPORT;

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    reporters: report ? ["default", "json"] : ["default"],
    outputFile: report ? { json: report } : undefined,
  },
});
