/** `rbp serve` as a process: prints its URL and credentials, serves them, stops on SIGTERM. */
import type { ChildProcess } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { parseServeArgs, SERVE_USAGE } from "../../src/cli/serve.js";
import { UsageError } from "../../src/cli/predict.js";
import { spawnServe, type ServeProcess } from "../../scripts/rbp-serve.js";
import { connect, disconnect } from "../../src/notebook/index.js";
import { Client, quickstart } from "./helpers.js";

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

async function serve(args: string[], env: NodeJS.ProcessEnv): Promise<ServeProcess> {
  const started = await spawnServe(args, env);
  children.push(started.child);
  return started;
}

const exited = (child: ChildProcess) => new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));

describe("rbp serve", () => {
  it("generates and prints credentials that work, then stops cleanly on SIGTERM", async () => {
    const { child, stdout, stderr, url, apiKey, accessId } = await serve(["--port", "0", "--workers", "1"], {});
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(apiKey).toBeDefined();
    expect(accessId).toBeDefined();
    expect(stdout).toContain("generated");
    expect(stdout).toContain(`version 2 API: ${url}/v2/prediction-engine`);
    const client = new Client(url, apiKey!, accessId!);
    const r = await client.run("psr", quickstart());
    expect(r.status).toBe(200);
    expect(stderr()).toContain("POST /v3/psr 200");
    expect(stderr()).not.toContain(apiKey!);
    const code = exited(child);
    child.kill("SIGTERM");
    expect(await code).toBe(0);
    expect(stderr()).toContain("SIGTERM, stopping");
  });

  it("uses CSA_API_KEY and CSA_ACCESS_ID when they are set", async () => {
    const { child, stdout } = await serve(["--port=0", "--quiet", "--workers=1"], { CSA_API_KEY: "my-local-key-123", CSA_ACCESS_ID: "me" });
    expect(stdout).toContain("export CSA_API_KEY=my-local-key-123");
    expect(stdout).toContain("export CSA_ACCESS_ID=me");
    const url = /listening on (\S+)/.exec(stdout)![1];
    expect((await new Client(url, "my-local-key-123", "me").get("/v3/quota")).status).toBe(200);
    const code = exited(child);
    child.kill("SIGINT");
    expect(await code).toBe(0);
  });

  it("prints the export lines a notebook needs: with them, connect() reaches this service", async () => {
    const { child, stdout, url } = await serve(["--port=0", "--quiet", "--workers=1"], {});
    expect(stdout).toContain(`export RBP_BASE_URL=${url}\n`);
    // The three export lines, as a user pastes them into a .env file or the environment.
    const env = Object.fromEntries([...stdout.matchAll(/^export (\w+)=(\S+)$/gm)].map((m) => [m[1], m[2]]));
    expect(Object.keys(env).sort()).toEqual(["CSA_ACCESS_ID", "CSA_API_KEY", "RBP_BASE_URL"]);
    try {
      const connection = await connect({ env, envFile: false });
      expect(connection.mode).toBe("hosted");
      expect(connection.baseUrl).toBe(`${url}/v3`);
      expect((await connection.quota()).used).toBe(0);
    } finally {
      await disconnect();
    }
    const code = exited(child);
    child.kill("SIGTERM");
    expect(await code).toBe(0);
  });

  it("reads its options", () => {
    expect(parseServeArgs([]).options).toEqual({ port: 8765 });
    expect(parseServeArgs(["--port", "0", "--host", "::1", "--data-dir", "d", "--workers", "3", "--timeout", "2.5", "--decimals", "full"]).options).toEqual({
      port: 0,
      host: "::1",
      dataDir: "d",
      workers: 3,
      jobTimeoutMs: 2500,
      decimals: null,
    });
    expect(() => parseServeArgs(["--port", "x"])).toThrow(UsageError);
    expect(() => parseServeArgs(["--workers", "0"])).toThrow(UsageError);
    expect(parseServeArgs(["--experiment-rows-per-task", "1"]).options).toEqual({ port: 8765, experimentRowsPerTask: 1 });
    expect(parseServeArgs(["--experiment-rows-per-task=200"]).options.experimentRowsPerTask).toBe(200);
    expect(() => parseServeArgs(["--experiment-rows-per-task", "0"])).toThrow('--experiment-rows-per-task expects an integer >= 1, got "0"');
    expect(() => parseServeArgs(["--experiment-rows-per-task", "20000"])).toThrow(UsageError);
    expect(SERVE_USAGE).toContain(`--experiment-rows-per-task N`);
    expect(() => parseServeArgs(["--bogus"])).toThrow(UsageError);
  });

  it("reads the limit flags, and --help lists every limit with its default", () => {
    expect(
      parseServeArgs([
        "--max-combinations",
        "500000",
        "--max-work=2000000000",
        "--max-attributes",
        "200",
        "--max-theta-rows",
        "50000",
        "--max-retained-values",
        "9",
      ]).options,
    ).toEqual({
      port: 8765,
      limits: { maxCombinations: 500_000, maxWork: 2_000_000_000, maxAttributes: 200, maxThetaRows: 50_000, maxRetainedValues: 9 },
    });
    expect(() => parseServeArgs(["--max-work", "0"])).toThrow(UsageError);
    for (const text of [
      "--max-combinations N",
      "(default 100,000)",
      "--max-attributes N",
      "--max-theta-rows N",
      "(default 10,000)",
      "--max-retained-values N",
      "(default 5,000,000)",
      "--max-work N",
      "(default 1,000,000,000)",
    ]) {
      expect(SERVE_USAGE).toContain(text);
    }
  });

  it("a lowered limit is enforced by the running service", async () => {
    const { child, url, apiKey, accessId } = await serve(["--port", "0", "--quiet", "--workers", "1", "--max-combinations", "7"], {});
    const client = new Client(url, apiKey!, accessId!);
    const r = await client.post("/v3/grid", quickstart({ options: { max_iter: 8 } }));
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ error: "limit_exceeded", field: "options.max_iter", limit: 7, requested: 8 });
    expect(r.body.message).toContain("--max-combinations");
    child.kill("SIGTERM");
    await exited(child);
  });
});
