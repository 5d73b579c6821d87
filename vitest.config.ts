import { defineConfig } from "vitest/config";

// RBP_TEST_REPORT (set by .ci/run) adds a JSON report beside the usual console output.
const report = process.env.RBP_TEST_REPORT;

/**
 * The service suites that start services through test/service/helpers.ts `start()` and speak only
 * the API: run a second time on the PostgreSQL store (RBP_TEST_STORE=postgres: each service on a
 * fresh database of a real server the file starts), so that both stores answer the same
 * (docs/team-service.md). Suites about one store's own files (persistence, store, embedded-store)
 * and the ones that start `rbp serve` with a data dir run once.
 */
const ON_BOTH_STORES = [
  "auth-quota",
  "bad-inputs",
  "concurrency",
  "core",
  "execution",
  "faults",
  "fuzz",
  "hostile",
  "large",
  "limits",
  "raw-requests",
  "stall",
  "times",
  "upload-memory",
  "v2-jobs",
  "v2-long-poll",
  "v2-retain",
  "v2-upload",
  "v2",
  "v3",
  "warnings",
].map((name) => `test/service/${name}.test.ts`);

export default defineConfig({
  test: {
    reporters: report ? ["default", "json"] : ["default"],
    outputFile: report ? { json: report } : undefined,
    projects: [
      { extends: true, test: { name: "all", include: ["test/**/*.test.ts"] } },
      { extends: true, test: { name: "postgres-store", include: ON_BOTH_STORES, env: { RBP_TEST_STORE: "postgres" } } },
    ],
  },
});
