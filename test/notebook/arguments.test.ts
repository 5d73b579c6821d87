/**
 * Plain JavaScript mistakes the types would catch: an unknown option, an option put in the spec, a
 * misspelt run setting. Each is shown with a did-you-mean (in the cell in a kernel, on stderr in a
 * script) and the call goes on; with `strict: true` it is an error and nothing is sent or charged.
 * Against the embedded service (real HTTP on loopback); the script case runs in its own process.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkArguments } from "../../src/notebook/arguments.js";
import { PredictionError, connect, disconnect, grid, psr, quota } from "../../src/notebook/index.js";
import { quickstartRows, quickstartTheta, simulateTslab } from "./helpers.js";

const REPO = fileURLToPath(new URL("../../", import.meta.url));

beforeAll(async () => {
  await connect({ hosted: false, env: {}, envFile: false, local: { workers: 1 } });
});
afterAll(async () => {
  await disconnect();
});

/** Calls `f` with stderr captured (this process's real stream, restored after). */
async function withStderr<T>(f: () => Promise<T>): Promise<{ value: T; stderr: string }> {
  const original = process.stderr.write.bind(process.stderr);
  let text = "";
  process.stderr.write = ((chunk: string | Uint8Array) => {
    text += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString();
    return true;
  }) as typeof process.stderr.write;
  try {
    return { value: await f(), stderr: text };
  } finally {
    process.stderr.write = original;
  }
}

describe("checkArguments", () => {
  it("names a misspelt option with the nearest known one", () => {
    expect(checkArguments("grid", {}, { treshold: [0, 0.5] }, {})).toEqual([
      { field: "options.treshold", message: expect.stringContaining('unknown option "treshold"; did you mean "threshold"?') },
    ]);
  });
  it("says an option put in the spec belongs in the options", () => {
    const [p] = checkArguments("grid", { y: "Points", threshold: [0, 0.5] }, {}, {});
    expect(p.field).toBe("spec.threshold");
    expect(p.message).toContain('"threshold" is an option, not a spec key');
  });
  it("names an option of another analysis, a spec key in the options, a misspelt spec key and run setting", () => {
    const problems = checkArguments("psr", { y: "Points", thata: "last" }, { max_k: 2, theta: "last" }, { progres: "none" });
    expect(problems.map((p) => p.field)).toEqual(["spec.thata", "options.max_k", "options.theta", "run.progres"]);
    expect(problems[0].message).toContain('did you mean "theta"?');
    expect(problems[1].message).toContain("an option of grid, not of psr");
    expect(problems[2].message).toContain("belongs in the spec");
    expect(problems[3].message).toContain('did you mean "progress"?');
  });
  it("accepts every key the call reads, in both dialects, and undefined values", () => {
    expect(
      checkArguments(
        "grid",
        { y: "a", X: ["b"], theta: "last", title: "t" },
        { threshold: [0], eval_type: "both", _seed: 1, max_k: undefined },
        { progress: "none", strict: true },
      ),
    ).toEqual([]);
    expect(checkArguments("psr", {}, { adjust_impact_for_missing: true, missing_moments: "pairwise" }, {})).toEqual([]);
  });
});

describe("grid(...) in plain JavaScript", () => {
  it("a misspelt option: warned with a did-you-mean on stderr, and the call runs with the defaults", async () => {
    const { value: p, stderr } = await withStderr(() =>
      grid(quickstartRows(), { y: "Points", theta: quickstartTheta() }, { treshold: [0, 0.5] } as never, { progress: "none" }),
    );
    expect(stderr).toContain('warning: Grid: unknown option "treshold"; did you mean "threshold"?');
    expect(p.thresholds).toEqual([0, 0.2, 0.5, 0.8]);
  });

  it("threshold in the spec: warned, and noted in p.notes", async () => {
    const { value: p, stderr } = await withStderr(() =>
      grid(quickstartRows(), { y: "Points", theta: quickstartTheta(), threshold: [0, 0.5] } as never, {}, { progress: "none" }),
    );
    expect(stderr).toContain('"threshold" is an option, not a spec key');
    expect(p.notes.join("\n")).toContain('ignored spec key: "threshold" is an option');
  });

  it("strict: true makes it an error naming the field, before anything is sent (nothing charged)", async () => {
    const before = (await quota()).used;
    const failure = await grid(quickstartRows(), { y: "Points" }, { treshold: [0, 0.5] } as never, { progress: "none", strict: true }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(PredictionError);
    const e = failure as PredictionError;
    expect(e.kind).toBe("invalid-request");
    expect(e.field).toBe("options.treshold");
    expect(e.message).toContain('did you mean "threshold"?');
    expect((await quota()).used).toBe(before);
  });

  it("in a kernel: shown in the cell as a warning box, not on stderr", async () => {
    const tslab = simulateTslab();
    try {
      const { stderr } = await withStderr(() =>
        psr(quickstartRows(), { y: "Points", theta: quickstartTheta() }, { threshhold: 0.5 } as never, { progress: "none" }),
      );
      expect(stderr).toBe("");
      const warning = tslab.messages.find((m) => String(m.data["text/html"] ?? "").includes("rbp-warning"));
      expect(warning).toBeDefined();
      expect(String(warning!.data["text/plain"])).toContain('PSR: unknown option "threshhold"; did you mean "threshold"?');
    } finally {
      tslab.restore();
    }
  });
});

describe("a plain JavaScript script", () => {
  it("prints the did-you-mean on stderr and still ends with the prediction", async () => {
    const dir = mkdtempSync(join(tmpdir(), "rbp-args-"));
    const entry = join(REPO, "src", "notebook", "index.ts");
    writeFileSync(
      join(dir, "typo.mjs"),
      `import { grid } from ${JSON.stringify(entry)};
const p = await grid({ y: [1, 2, 3, 4, 5, 6], X: [[1, 2], [2, 1], [3, 5], [4, 3], [5, 8], [6, 5]] }, {}, { treshold: [0, 0.5] }, { progress: "none" });
console.log(JSON.stringify(p.thresholds));
`,
    );
    const env = { ...process.env };
    for (const k of Object.keys(env)) if (/^(CSA_|RBP_)/.test(k)) delete env[k];
    const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((done, fail) => {
      const child = spawn(process.execPath, ["--import", "tsx", join(dir, "typo.mjs")], { cwd: REPO, env });
      let stdout = "";
      let stderr = "";
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
      child.on("error", fail);
      child.on("close", (code) => {
        clearTimeout(timer);
        done({ code, stdout, stderr });
      });
    });
    expect(r.stderr).toBe('warning: Grid: unknown option "treshold"; did you mean "threshold"? (ignored; rbp.defaults("grid") lists the options)\n');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([0, 0.2, 0.5, 0.8]);
  }, 40_000);
});
