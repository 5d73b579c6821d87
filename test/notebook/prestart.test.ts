/**
 * The background start of the embedded service when the helper is imported (connect.ts
 * `prestart`): when it runs (`prestartWanted`), that a script which imports the built package with
 * it switched on still ends by itself, before and after the service has started, with no process
 * left behind; that a hosted configuration starts nothing; and that the first call then uses the
 * service already started (job 1 on the prestarted service, nothing charged by the warm-up).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { prestartWanted } from "../../src/notebook/connect.js";
import { ensureBuilt, runProcess, userProject } from "./package.js";

beforeAll(() => ensureBuilt());

/**
 * Runs `code` as an ES module in a user's project, with a last line that prints the processes the
 * script has started ({"children": "..."} on stderr's last line: none expected, the service runs in
 * threads); resolves with its exit code, its output and those processes.
 */
async function runScript(code: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string; children: string }> {
  const project = userProject("rbp-prestart-");
  const file = join(project, "script.mjs");
  // The script's child processes by name, but the `ps` that lists them.
  const census = `\nimport { execFileSync as census } from "node:child_process";\nprocess.stderr.write(JSON.stringify({ children: census("ps", ["-o", "comm=", "--ppid", String(process.pid)], { encoding: "utf8" }).split("\\n").map((l) => l.trim()).filter((l) => l !== "" && l !== "ps").join(",") }));\n`;
  writeFileSync(file, code + census);
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (/^(CSA_|RBP_)/.test(k)) delete base[k];
  const r = await runProcess(process.execPath, [file], { cwd: project, timeoutMs: 60_000, env: { ...base, ...env } });
  const at = r.stderr.lastIndexOf('{"children":');
  const children = at < 0 ? "(no census)" : (JSON.parse(r.stderr.slice(at)) as { children: string }).children;
  return { code: r.code, stdout: r.stdout, stderr: at < 0 ? r.stderr : r.stderr.slice(0, at), children };
}

/** Awaits until the prestarted connection exists (turns of the event loop, not a clock). */
const WAIT_FOR_CONNECTION = `
async function connected(rbp) {
  for (;;) {
    const c = await rbp.currentConnection();
    if (c !== undefined) return c;
    await new Promise((r) => setImmediate(r));
  }
}`;

describe("prestartWanted", () => {
  it("RBP_PRESTART=1 or 0 decides; otherwise only inside a notebook kernel (this test process is none)", () => {
    expect(prestartWanted({ RBP_PRESTART: "1" })).toBe(true);
    expect(prestartWanted({ RBP_PRESTART: "true" })).toBe(true);
    expect(prestartWanted({ RBP_PRESTART: "0" })).toBe(false);
    expect(prestartWanted({ RBP_PRESTART: "no" })).toBe(false);
    expect(prestartWanted({})).toBe(false);
  });
});

describe("importing the helper with the background start on", () => {
  it("a script that only imports it ends by itself", async () => {
    const r = await runScript(`import * as rbp from "rbp-notebook";\nconsole.log(typeof rbp.grid);\n`, { RBP_PRESTART: "1" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("function\n");
    expect(r.children).toBe("");
  });

  it("the service starts in the background, warms its workers, and the script still ends by itself; the first call is job 1 of that service", async () => {
    const r = await runScript(
      `import * as rbp from "rbp-notebook";
${WAIT_FOR_CONNECTION}
const c = await connected(rbp);
const before = await c.quota();
const p = await rbp.grid({ y: [18.8, 2.3, 3, 6.7, 15.2, 20.9, 4], X: [[25, 2, 76, 53.7, 23.1], [29, 1, 78, 39.1, 5.7], [32, 2, 77, 54.1, 5.3], [30, 5, 82, 68.7, 8.7], [24, 1, 69, 51, 20.3], [25, 2, 79, 50.2, 20], [35, 3, 80, 51.5, 9.4]] }, {}, {}, { progress: "none" });
const after = await c.quota();
console.log(JSON.stringify({ same: (await rbp.currentConnection()) === c, mode: c.mode, job: p.receipt.job_id, used: [before.used, after.used] }));
`,
      { RBP_PRESTART: "1" },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ same: true, mode: "local", job: 1, used: [0, 1] });
    expect(r.children).toBe("");
  });

  it("settings changed after the background start (a cell sets CSA_API_KEY) are read by the first connect(), as without it", async () => {
    const r = await runScript(
      `import * as rbp from "rbp-notebook";
import { startLocalService } from "rbp-notebook/service";
${WAIT_FOR_CONNECTION}
const prestarted = await connected(rbp);
const standIn = await startLocalService({ port: 0, apiKey: "issued-key", accessId: "analyst", unref: true });
process.env.RBP_BASE_URL = standIn.url;
process.env.CSA_API_KEY = "issued-key";
process.env.CSA_ACCESS_ID = "analyst";
const c = await rbp.connect();
const again = await rbp.connect();
console.log(JSON.stringify({ prestarted: prestarted.mode, mode: c.mode, closed: prestarted.closed, same: again === c }));
await rbp.disconnect();
await standIn.close();
`,
      { RBP_PRESTART: "1" },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ prestarted: "local", mode: "hosted", closed: true, same: true });
  });

  it("with a hosted service configured, nothing is started", async () => {
    const r = await runScript(
      `import * as rbp from "rbp-notebook";
await new Promise((r) => setTimeout(r, 0));
await new Promise((r) => setTimeout(r, 0));
console.log(String(await rbp.currentConnection()));
`,
      { RBP_PRESTART: "1", CSA_API_KEY: "hosted-key", CSA_ACCESS_ID: "me", RBP_BASE_URL: "http://127.0.0.1:9" },
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("undefined\n");
  });

  it("switched off (RBP_PRESTART=0), importing starts nothing", async () => {
    const r = await runScript(
      `import * as rbp from "rbp-notebook";
await new Promise((r) => setTimeout(r, 0));
await new Promise((r) => setTimeout(r, 0));
console.log(String(await rbp.currentConnection()));
`,
      { RBP_PRESTART: "0" },
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("undefined\n");
  });
});
