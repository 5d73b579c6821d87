import { defineConfig } from "vitest/config";

// RBP_TEST_REPORT (set by .ci/run) adds a JSON report beside the usual console output.
const report = process.env.RBP_TEST_REPORT;

// RBP_TEST_LOADED=1 (set by scripts/loaded-run.sh): vitest's default 5 s per test and 10 s per hook
// are hang guards, not measures; on a machine loaded by four busy processes they are raised, so that
// only a test that bends (an assertion) can fail there. They are set here, not on the command line:
// vitest 3 does not pass --testTimeout or --hookTimeout on to the projects below.
const loaded = process.env.RBP_TEST_LOADED === "1";

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
    testTimeout: loaded ? 60_000 : undefined,
    hookTimeout: loaded ? 120_000 : undefined,
    reporters: report ? ["default", "json"] : ["default"],
    outputFile: report ? { json: report } : undefined,
    projects: [
      { extends: true, test: { name: "all", include: ["test/**/*.test.ts"] } },
      { extends: true, test: { name: "postgres-store", include: ON_BOTH_STORES, env: { RBP_TEST_STORE: "postgres" } } },
    ],
  },
});
