import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { CLI_SPREAD_MIN_WORK, helperThreads } from "../../src/cli/predict.js";

// The built command, as a user runs it (npm test builds before vitest runs).
const rbp = fileURLToPath(new URL("../../dist/cli/rbp.js", import.meta.url));
const example = fileURLToPath(new URL("../../examples/quickstart-7x5.json", import.meta.url));
const body = JSON.parse(readFileSync(example, "utf8"));

function run(args: string[], stdin?: string) {
  const result = spawnSync(process.execPath, [rbp, ...args], { input: stdin, encoding: "utf8" });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("rbp predict", () => {
  it("prints the Grid results of the quickstart example", () => {
    const { code, stdout, stderr } = run(["predict", "grid", "--input", example]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
    const results = JSON.parse(stdout);
    // The published value, to the 1e-6 the hosted engine's float32 rounding allows.
    expect(Math.abs(results.yhat[0] - 3.285239)).toBeLessThanOrEqual(1e-6);
    expect(results.fit[0]).toBeCloseTo(0.08769, 5);
    expect(results.insights["Impact on Fit"]).toHaveLength(5);
  });

  it("reads standard input and gives one result per theta row", () => {
    const rows = { ...body, theta: [body.X[0], body.X[6]], options: { threshold: [0, 0.5], censor_type: "relevance" } };
    const { code, stdout } = run(["predict", "psr", "--input", "-"], JSON.stringify(rows));
    expect(code).toBe(0);
    const results = JSON.parse(stdout);
    expect(results).toHaveLength(2);
    expect(results[0].yhat).toHaveLength(2);
    expect(results[0].yhat[0]).not.toBeCloseTo(results[1].yhat[0], 3);
  });

  it("defaults a Grid's theta to the last row of X", () => {
    const { theta: _ignored, ...withoutTheta } = body;
    const fromDefault = JSON.parse(run(["predict", "grid", "--input", "-"], JSON.stringify(withoutTheta)).stdout);
    const explicit = JSON.parse(run(["predict", "grid", "--input", "-"], JSON.stringify({ ...body, theta: body.X[6] })).stdout);
    expect(fromDefault.yhat).toEqual(explicit.yhat);
  });

  it("writes undefined numbers as null, never NaN", () => {
    // Threshold 1 keeps only the top observation: that calibration is undefined.
    const { code, stdout } = run(["predict", "psr", "--input", "-"], JSON.stringify({ ...body, options: { threshold: [0.5, 1] } }));
    expect(code).toBe(0);
    expect(stdout).not.toMatch(/NaN|Infinity/);
    expect(JSON.parse(stdout).yhat[1]).toBeNull();
  });

  it("notes ignored options on stderr", () => {
    const { code, stderr } = run(["predict", "psr", "--input", "-"], JSON.stringify({ ...body, options: { colour: "blue" } }));
    expect(code).toBe(0);
    expect(stderr).toMatch(/colour/);
  });

  it.each([
    ["a field with the wrong shape", { ...body, theta: [1, 2, 3] }, "psr", 3, /theta/],
    ["PSR with both censors", { ...body, options: { censor_type: "both" } }, "psr", 3, /censor_type/],
    ["N <= K", { ...body, y: body.y.slice(0, 5), X: body.X.slice(0, 5) }, "maxfit", 3, /N > K/],
    [
      "a singular covariance",
      { ...body, X: body.X.map((r: number[]) => [...r, 2 * r[0]]), theta: [...body.theta, 48], options: {} },
      "psr",
      4,
      /pseudoinverse/,
    ],
  ])("rejects %s with a message naming it", (_name, input, analysis, exitCode, message) => {
    const { code, stdout, stderr } = run(["predict", analysis as string, "--input", "-"], JSON.stringify(input));
    expect(code).toBe(exitCode);
    expect(stdout).toBe("");
    expect(stderr).toMatch(message as RegExp);
  });

  it.each([
    [["predict", "lasso", "--input", example], /unknown analysis "lasso"/],
    [["predict", "grid"], /--input is required/],
    [["predict", "grid", "--input", "/nonexistent/body.json"], /no such file/],
    [["frobnicate"], /unknown command/],
  ])("refuses the command line %j", (args, message) => {
    const { code, stderr } = run(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it("stops quietly when its reader closes the pipe early (| head)", async () => {
    const child = spawn(process.execPath, [rbp, "predict", "grid", "--input", example], { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += String(chunk)));
    const [code] = (await once(child, "close")) as [number];
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });

  it("refuses a file that is not JSON", () => {
    const { code, stderr } = run(["predict", "grid", "--input", "-"], "{ not json");
    expect(code).toBe(2);
    expect(stderr).toMatch(/not valid JSON/);
  });
});

describe("rbp predict grid's threads", () => {
  it("runs a Grid below CLI_SPREAD_MIN_WORK rows x combinations on its own thread, a larger one on every core", () => {
    expect(helperThreads(1000, 10, { max_iter: 2000 })).toBe(1);
    expect(helperThreads(10_000, 10, { max_iter: 2000 })).toBeUndefined();
    // max_iter caps the combinations, and a given list counts as given.
    expect(helperThreads(10_000, 20, { max_iter: 100 })).toBe(1);
    expect(helperThreads(CLI_SPREAD_MIN_WORK, 20, { max_iter: 2000, attribute_combi: [[1]] })).toBeUndefined();
    expect(helperThreads(CLI_SPREAD_MIN_WORK - 1, 20, { max_iter: 2000, attribute_combi: [[1]] })).toBe(1);
  });

  it("prints the same bytes for a spread Grid as for one on a single thread", () => {
    let s = 3;
    const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647 - 0.5;
    const X = Array.from({ length: 5000 }, () => Array.from({ length: 10 }, rnd));
    const y = X.map((r) => r.reduce((a, b) => a + b, 0) + rnd());
    expect(helperThreads(5000, 10, { max_iter: 2000 })).toBeUndefined();
    const spread = run(["predict", "grid", "--input", "-"], JSON.stringify({ y, X, options: { max_iter: 2000 } }));
    const alone = run(["predict", "grid", "--input", "-"], JSON.stringify({ y, X, options: { max_iter: 2000, inner_parallel: "off" } }));
    expect(spread.code).toBe(0);
    expect(spread.stdout).toBe(alone.stdout);
  });
});

describe("rbp --version", () => {
  const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };

  it("--version, -v and version print the package's version and exit 0", () => {
    expect(version).toMatch(/^\d+\.\d+\.\d+/);
    for (const flag of ["--version", "-v", "version"]) {
      expect(run([flag]), flag).toEqual({ code: 0, stdout: `${version}\n`, stderr: "" });
    }
  });

  it("the usage names it", () => {
    expect(run(["--help"]).stdout).toContain("rbp --version");
  });
});
