/** `rbp worker`'s command line: flags in both spellings, values checked, the database required. */
import { describe, expect, it } from "vitest";
import { parseWorkerArgs } from "../../src/cli/worker.js";

describe("parseWorkerArgs", () => {
  it("reads --name value and --name=value, in seconds where the flag says so", () => {
    const { options, quiet } = parseWorkerArgs(["--database=postgres://rbp@db/rbp", "--workers", "3", "--lease", "2.5", "--timeout=60", "--quiet"], {});
    expect(options).toEqual({ database: "postgres://rbp@db/rbp", workers: 3, leaseMs: 2500, jobTimeoutMs: 60_000 });
    expect(quiet).toBe(true);
  });

  it("takes the database from RBP_DATABASE_URL when no flag names one", () => {
    expect(parseWorkerArgs([], { RBP_DATABASE_URL: "postgresql://x/y" }).options.database).toBe("postgresql://x/y");
  });

  it("refuses a bad or missing value naming the flag, an unknown flag, and no database", () => {
    expect(() => parseWorkerArgs(["--database", "postgres://x/y", "--workers", "0"], {})).toThrow('--workers expects a number >= 1, got "0"');
    expect(() => parseWorkerArgs(["--database", "postgres://x/y", "--lease"], {})).toThrow(/^--lease needs a value/);
    expect(() => parseWorkerArgs(["--database", "postgres://x/y", "--port", "1"], {})).toThrow(/^unknown option "--port"/);
    expect(() => parseWorkerArgs(["--workers", "2"], {})).toThrow(/^--database expects a postgres:\/\/ URL/);
  });
});
