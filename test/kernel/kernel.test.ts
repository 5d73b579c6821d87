/**
 * The rbp kernel (src/kernel), built (npm test builds first), as a real process:
 * - over the Jupyter wire protocol, driven by a small client on all five channels (wire-client.ts):
 *   kernel info, execution counts, last values and errors, stop_on_error, input_request, interrupt
 *   (control message and SIGINT), comms, refused signatures, history, magics and their errors, and
 *   shutdown and restart leaving no process or thread behind;
 * - headless under Jupyter: `jupyter nbconvert --to notebook --execute` of
 *   notebooks/magics-quickstart.ipynb and notebooks/tslab-compatibility.ipynb with the kernelspec
 *   `rbp kernel install --kind rbp` writes, into test-output/kernel/ (the sources are never
 *   rewritten). The compatibility notebook also runs under plain tslab: every value must be the
 *   same (tslab prints a last value on stdout, the rbp kernel sends it as the cell's result).
 *   Skipped when Jupyter is absent, except in CI (CI set), where that fails.
 * Jupyter's own suite runs in jupyter-kernel-test.test.ts.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KernelClient, streamText, type Message } from "./wire-client.js";
import { IN_CI } from "../ci.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const MAIN = join(ROOT, "dist", "kernel", "main.js");
const RBP = join(ROOT, "dist", "cli", "rbp.js");
const OUT = join(ROOT, "test-output", "kernel");
const JUPYTER_DIR = join(OUT, "jupyter");
const NOTEBOOKS = join(ROOT, "notebooks");
const TYPESCRIPT_VERSION = (JSON.parse(readFileSync(join(ROOT, "node_modules", "typescript", "package.json"), "utf8")) as { version: string }).version;

/** Variables that would send predictions to a hosted service. */
const HOSTED_ENV = ["RBP_BASE_URL", "CSA_BASE_URL", "CSA_API_KEY", "CSA_ACCESS_ID", "RBP_API_VERSION", "RBP_KERNEL_HISTORY"];

function kernelEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONWARNINGS: "ignore", JUPYTER_PATH: JUPYTER_DIR, JUPYTER_RUNTIME_DIR: join(OUT, "runtime") };
  for (const k of HOSTED_ENV) delete env[k];
  return env;
}

function requireBuilt(): void {
  if (!existsSync(MAIN) || !existsSync(RBP)) throw new Error(`the kernel is not built (${MAIN}); run npm run build (npm test does)`);
}

const outputsOf = (r: { outputs: Message[] }, type: string) => r.outputs.filter((m) => m.header.msg_type === type);
const resultText = (r: { outputs: Message[] }) => outputsOf(r, "execute_result").map((m) => m.content.data["text/plain"] as string);

function startKernel(args: string[] = []): Promise<KernelClient> {
  requireBuilt();
  const cwd = join(OUT, "cwd");
  mkdirSync(cwd, { recursive: true });
  return KernelClient.startMain({ main: MAIN, dir: join(OUT, "runtime"), cwd, env: kernelEnv(), args });
}

/** The pids whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

describe("the rbp kernel over the Jupyter protocol", () => {
  let kernel: KernelClient;

  beforeAll(async () => {
    kernel = await startKernel();
  }, 90_000);

  afterAll(async () => {
    await kernel?.close();
  });

  it("introduces itself: implementation rbp, protocol 5.3, the TypeScript that compiles cells", async () => {
    const { reply, iopub } = await kernel.request("kernel_info_request", {});
    expect(reply.content).toMatchObject({ status: "ok", protocol_version: "5.3", implementation: "rbp", debugger: false });
    expect(reply.content.language_info).toMatchObject({ name: "typescript", version: TYPESCRIPT_VERSION, file_extension: ".ts" });
    expect(reply.content.banner).toMatch(new RegExp(`^TypeScript ${TYPESCRIPT_VERSION.replace(/\./g, "\\.")} .*%lsmagic`));
    expect(reply.content.help_links.length).toBeGreaterThan(0);
    expect(iopub.map((m) => m.content.execution_state)).toEqual(["busy", "idle"]);
    // On control too (a front end asks there while a cell runs).
    const control = await kernel.request("kernel_info_request", {}, 60_000, "control");
    expect(control.reply.content.implementation).toBe("rbp");
    expect(String(await kernel.heartbeat())).toBe("ping");
  }, 60_000);

  it("sends a cell's last value as execute_result, util.inspect text without colours, nothing for undefined", async () => {
    const r = await kernel.execute("let x = 1\nx + 1");
    expect(r.reply).toMatchObject({ status: "ok", execution_count: expect.any(Number) });
    expect(r.outputs.map((m) => m.header.msg_type)).toEqual(["execute_result"]);
    expect(r.outputs[0].content).toMatchObject({ execution_count: r.reply.execution_count, data: { "text/plain": "2" }, metadata: {} });
    expect(resultText(await kernel.execute("({ a: [1, 2], s: 'x' })"))).toEqual(["{ a: [ 1, 2 ], s: 'x' }"]);
    expect(resultText(await kernel.execute("new Map([['k', 1]])"))[0]).not.toContain("\u001b[");
    expect((await kernel.execute("undefined")).outputs).toEqual([]);
    expect((await kernel.execute("const quiet = 3;")).outputs).toEqual([]);
  }, 60_000);

  it("counts executions on execute_input, execute_result and every reply; silent and store_history: false do not count", async () => {
    const first = await kernel.execute("1");
    const n = first.reply.execution_count as number;
    const input = first.iopub.find((m) => m.header.msg_type === "execute_input")!;
    expect(input.content).toEqual({ code: "1", execution_count: n });
    const silent = await kernel.execute("console.log('still streamed'); 2", undefined, { silent: true });
    expect(silent.reply).toMatchObject({ status: "ok", execution_count: n });
    expect(silent.iopub.map((m) => m.header.msg_type)).toEqual(["status", "stream", "status"]);
    const unstored = await kernel.execute("3", undefined, { store_history: false });
    expect(unstored.reply.execution_count).toBe(n);
    expect(outputsOf(unstored, "execute_result")[0].content.execution_count).toBe(n);
    const failed = await kernel.execute("throw new Error('counted')");
    expect(failed.reply).toMatchObject({ status: "error", execution_count: n + 1 });
    expect((await kernel.execute("4")).reply.execution_count).toBe(n + 2);
  }, 60_000);

  it("shows a last value with Symbol.for('Jupyter.display') as its mime bundle", async () => {
    const r = await kernel.execute(`({ [Symbol.for("Jupyter.display")]() { return { "text/html": "<b>hi</b>", "application/json": { a: 1 } }; } })`);
    expect(r.reply.status).toBe("ok");
    const [result] = outputsOf(r, "execute_result");
    expect(r.outputs).toHaveLength(1);
    expect(result.content.execution_count).toBe(r.reply.execution_count);
    expect(result.content.data["text/html"]).toBe("<b>hi</b>");
    expect(result.content.data["application/json"]).toEqual({ a: 1 });
    expect(typeof result.content.data["text/plain"]).toBe("string");
    // A promise of a bundle (Deno allows it) is awaited before the cell ends.
    const later = await kernel.execute(`({ [Symbol.for("Jupyter.display")]: async () => ({ "text/plain": "later" }) })`);
    expect(resultText(later)).toEqual(["later"]);
  }, 60_000);

  it("reports a thrown error as an error message and an error reply pointing at the cell", async () => {
    const r = await kernel.execute("function boom(): never {\n  throw new TypeError('bad value');\n}\nboom()");
    expect(r.reply).toMatchObject({ status: "error", ename: "TypeError", evalue: "bad value" });
    expect(r.outputs.map((m) => m.header.msg_type)).toEqual(["error"]);
    expect(r.outputs[0].content).toEqual({ ename: "TypeError", evalue: "bad value", traceback: r.reply.traceback });
    expect(r.reply.traceback.join("\n")).toMatch(/cell \d+, line 2/);
    expect(r.reply.traceback.join("\n")).not.toMatch(/evalmachine|tsLastExpr/);
  }, 60_000);

  it("with stop_on_error, a failed cell aborts the requests queued behind it; without, they run", async () => {
    // The failing cell waits for input, so the requests are sent while it runs: queued behind it,
    // or (messages on two sockets keep no order) arriving just after its failure, dated before it.
    const failing = (options: { stop_on_error: boolean }) =>
      kernel.sendExecute("await input('a?');\nawait input('b?');\nthrow new Error('stopped')", { allow_stdin: true, ...options });
    const answer = async () => {
      const prompt = await kernel.stdinNext();
      await kernel.send("input_reply", { value: "" }, "stdin", prompt.header);
      return prompt;
    };
    const first = await failing({ stop_on_error: true });
    const prompt = await kernel.stdinNext();
    expect(prompt.content).toMatchObject({ prompt: "a?", password: false });
    const queued = [await kernel.sendExecute("'not run 1'"), await kernel.sendExecute("'not run 2'")];
    await kernel.send("input_reply", { value: "" }, "stdin", prompt.header);
    expect((await answer()).content.prompt).toBe("b?");
    expect((await kernel.executeResult(first)).reply).toMatchObject({ status: "error", evalue: "stopped" });
    for (const id of queued) {
      const r = await kernel.executeResult(id);
      expect(r.reply).toMatchObject({ status: "aborted", execution_count: expect.any(Number) });
      expect(r.outputs).toEqual([]);
    }
    const lenient = await failing({ stop_on_error: false });
    await kernel.stdinNext().then((p) => kernel.send("input_reply", { value: "" }, "stdin", p.header));
    const next = await kernel.sendExecute("'runs'");
    await answer();
    expect((await kernel.executeResult(lenient)).reply.status).toBe("error");
    expect(resultText(await kernel.executeResult(next))).toEqual(["'runs'"]);
  }, 60_000);

  it("asks the front end for input over stdin when it allows it, and fails the cell when it does not", async () => {
    const id = await kernel.sendExecute("const answer = await input('Name? ');\nanswer.toUpperCase()", { allow_stdin: true });
    const request = await kernel.stdinNext();
    expect(request.header.msg_type).toBe("input_request");
    expect(request.parent_header.msg_id).toBe(id);
    expect(request.content).toEqual({ prompt: "Name? ", password: false });
    await kernel.send("input_reply", { value: "ada" }, "stdin", request.header);
    expect(resultText(await kernel.executeResult(id))).toEqual(["'ADA'"]);
    const refused = await kernel.execute("await input('Name? ')");
    expect(refused.reply).toMatchObject({ status: "error", ename: "StdinNotImplementedError" });
  }, 60_000);

  it("interrupts a waiting cell with interrupt_request on the control channel", async () => {
    const id = await kernel.sendExecute("console.log('waiting');\nawait new Promise(() => {});");
    await kernel.iopubMatching(id, (m) => m.header.msg_type === "stream");
    const { reply } = await kernel.request("interrupt_request", {}, 60_000, "control");
    expect(reply.content).toEqual({ status: "ok" });
    expect((await kernel.executeResult(id)).reply).toMatchObject({ status: "error", ename: "KeyboardInterrupt" });
    expect(resultText(await kernel.execute("'alive'"))).toEqual(["'alive'"]);
  }, 60_000);

  it("interrupts a busy loop with SIGINT (the kernelspec's interrupt_mode); the heartbeat beats meanwhile", async () => {
    const id = await kernel.sendExecute("console.log('looping');\nwhile (true) {}");
    // The stream leaves while the loop runs: the kernel hands outputs to ZeroMQ at once.
    await kernel.iopubMatching(id, (m) => m.header.msg_type === "stream" && m.content.text === "looping\n");
    // The heartbeat answers from its own thread while the main thread loops.
    expect(String(await kernel.heartbeat())).toBe("ping");
    kernel.process.kill("SIGINT");
    expect((await kernel.executeResult(id)).reply).toMatchObject({ status: "error", ename: "KeyboardInterrupt" });
    expect(resultText(await kernel.execute("'alive'"))).toEqual(["'alive'"]);
  }, 60_000);

  it("answers comm requests so front ends never wait: no comms, and a comm_open is closed", async () => {
    const info = await kernel.request("comm_info_request", {});
    expect(info.reply.content).toEqual({ status: "ok", comms: {} });
    const id = await kernel.send("comm_open", { comm_id: "c-1", target_name: "jupyter.widget", data: {} });
    const closed = await kernel.iopubMatching(id, (m) => m.header.msg_type === "comm_close");
    expect(closed.content).toEqual({ comm_id: "c-1", data: {} });
    await kernel.iopubOf(id);
  }, 60_000);

  it("refuses a message whose signature does not verify, and goes on", async () => {
    const parts = [
      { msg_id: "forged", username: "x", session: "s", date: new Date().toISOString(), msg_type: "execute_request", version: "5.3" },
      {},
      {},
      { code: "'forged'" },
    ];
    await kernel.sendFrames(["<IDS|MSG>", "0".repeat(64), ...parts.map((p) => JSON.stringify(p))]);
    expect(await kernel.waitForStderr(/dropped a message on shell: the message's signature does not verify/)).toBe(true);
    expect(resultText(await kernel.execute("'after'"))).toEqual(["'after'"]);
  }, 60_000);

  it("keeps the history: tail, range and search, with outputs and raw or translated input", async () => {
    const a = await kernel.execute("const hist = 40");
    const b = await kernel.execute("hist + 2");
    const c = await kernel.execute("%time hist + 1");
    const tail = (await kernel.request("history_request", { hist_access_type: "tail", n: 3, output: true, raw: true })).reply.content;
    expect(tail.status).toBe("ok");
    const session = tail.history[0][0] as number;
    expect(tail.history).toEqual([
      [session, a.reply.execution_count, ["const hist = 40", null]],
      [session, b.reply.execution_count, ["hist + 2", "42"]],
      [session, c.reply.execution_count, ["%time hist + 1", "41"]],
    ]);
    const range = (
      await kernel.request("history_request", {
        hist_access_type: "range",
        session: 0,
        start: b.reply.execution_count,
        stop: c.reply.execution_count + 1,
        output: false,
        raw: false,
      })
    ).reply.content;
    expect(range.history[0]).toEqual([session, b.reply.execution_count, "hist + 2"]);
    expect(range.history[1][2]).toMatch(/\$rbp\.time/);
    const search = (await kernel.request("history_request", { hist_access_type: "search", pattern: "hist +*", unique: true, output: false, raw: true })).reply
      .content;
    expect(search.history.map((h: unknown[]) => h[2])).toEqual(["hist + 2"]);
  }, 60_000);

  it("answers a malformed magic with an error naming the word, and compiles nothing", async () => {
    const r = await kernel.execute("const before = 1\n%tme before");
    expect(r.reply).toMatchObject({ status: "error", ename: "MagicError", evalue: expect.stringMatching(/^unknown line magic %tme; did you mean %time\?/) });
    const [error] = outputsOf(r, "error");
    expect(error.content.traceback).toEqual(["MagicError: " + r.reply.evalue, "line 2: %tme before", "        ^^^^"]);
    expect(streamText(r.outputs, "stderr")).toBe("");
    // Nothing ran: `before` was not declared.
    expect((await kernel.execute("typeof before")).reply).toMatchObject({
      status: "error",
      ename: "CompileError",
      evalue: expect.stringMatching(/Cannot find name 'before'/),
    });
    const bad = await kernel.execute("%%grid cars y=a\nthreshhold: [0, 0.5]");
    expect(bad.reply.evalue).toMatch(/unknown option "threshhold"; did you mean "threshold"\?/);
  }, 60_000);

  it("runs line magics: %time keeps the value, %timeit and %lsmagic print", async () => {
    const t = await kernel.execute("const base = 20\n%time base + 22");
    expect(t.reply.status).toBe("ok");
    expect(streamText(t.outputs, "stdout")).toMatch(/^CPU times: user .+, sys: .+, total: .+\nWall time: .+\n$/);
    expect(resultText(t)).toEqual(["42"]);
    const decl = await kernel.execute("%time const later = await Promise.resolve(5)");
    expect(streamText(decl.outputs, "stdout")).toMatch(/Wall time/);
    expect(resultText(await kernel.execute("later"))).toEqual(["5"]);
    const ti = await kernel.execute("%timeit -n 50 -r 2 Math.sqrt(base)");
    expect(streamText(ti.outputs, "stdout")).toMatch(/ per loop \(mean ± std\. dev\. of 2 runs, 50 loops each\)\n$/);
    const ls = await kernel.execute("%lsmagic");
    expect(streamText(ls.outputs, "stdout")).toMatch(/Line magics: %rbp {2}%time {2}%timeit {2}%lsmagic {2}%magic\nCell magics: %%grid {2}%%maxfit {2}%%psr/);
    expect(streamText((await kernel.execute("%%psr?")).outputs, "stdout")).toMatch(/^%%psr: run a partial sample regression/);
  }, 60_000);

  it("points a compile error on a magic line at the user's own words", async () => {
    const t = await kernel.execute(`%time const y: number = "a"`);
    expect(t.reply).toMatchObject({ status: "error", ename: "CompileError" });
    expect(t.reply.evalue).toMatch(/line 1:13 - error TS2322: Type 'string' is not assignable to type 'number'\./);
    const g = await kernel.execute("\n%%grid carz y=a theta=last");
    expect(g.reply.evalue).toMatch(/line 2:8 - error TS2304: Cannot find name 'carz'\./);
  }, 60_000);

  it("%%grid submits, shows progress, displays the prediction and binds it", async () => {
    await kernel.execute("const rows = [1, 2, 3, 4, 5, 6, 7, 8].map((i) => ({ y: (i * 7) % 5 + i, a: i, b: (i * 3) % 4 }))");
    const r = await kernel.execute("%%grid rows y=y X=a,b theta=last -> g\nthreshold: [0, 0.5]");
    expect(r.reply.status).toBe("ok");
    const progress = outputsOf(r, "display_data").concat(outputsOf(r, "update_display_data"));
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)!.content.data["text/plain"]).toMatch(/^Grid · job \d+ · completed/);
    const [result] = outputsOf(r, "execute_result");
    expect(result.content.data["text/html"]).toContain("rbp-prediction");
    expect(result.content.data["text/plain"]).toMatch(/^Grid prediction of y( for .+)?: yhat /);
    expect(resultText(await kernel.execute("[g === _, g.attributes]"))).toEqual(["[ true, [ 'a', 'b' ] ]"]);
    const status = await kernel.execute("%rbp status g");
    expect(outputsOf(status, "display_data")[0].content.data["text/plain"]).toMatch(/^job \d+: completed, yhat /);
    const quota = await kernel.execute("%rbp quota");
    expect(outputsOf(quota, "display_data")[0].content.data["text/plain"]).toMatch(/^Quota: [\d,]+ units, 1 used/);
    // Several theta rows: an experiment, typed as one.
    const e = await kernel.execute("%%psr rows y=y theta=0,-1 -> e\nthreshold: [0, 0.5]");
    expect(outputsOf(e, "execute_result")).toHaveLength(1);
    expect(resultText(await kernel.execute("e.rows.map((p) => p.thetaLabel)"))).toEqual(["[ '0', '7' ]"]);
  }, 120_000);

  it("%rbp connect local on the local service keeps it: earlier jobs stay known; fresh starts a new one", async () => {
    const before = await kernel.execute("%rbp status g");
    expect(outputsOf(before, "display_data")[0].content.data["text/plain"]).toMatch(/^job \d+: completed/);
    const connected = await kernel.execute("%rbp connect local");
    expect(connected.reply.status).toBe("ok");
    const after = await kernel.execute("%rbp status g");
    expect(after.reply.status).toBe("ok");
    expect(outputsOf(after, "display_data")[0].content.data["text/plain"]).toMatch(/^job \d+: completed, yhat /);
    await kernel.execute("%rbp connect local fresh");
    const gone = await kernel.execute("%rbp status g");
    expect(gone.reply.status).toBe("error");
  }, 60_000);

  it("reports a failed prediction of a magic cell as the cell's error", async () => {
    const r = await kernel.execute("%%psr rows y=nope theta=0");
    expect(r.reply).toMatchObject({ status: "error", ename: "PredictionError" });
    expect(r.reply.evalue).toMatch(/outcome column "nope" is not in the data/);
    expect(outputsOf(r, "error")).toHaveLength(1);
    expect(streamText(r.outputs, "stderr")).toBe("");
  }, 60_000);

  it("completes magic names and options, TypeScript from the language service, and knows a cell magic is complete", async () => {
    const c = await kernel.request("complete_request", { code: "%ti", cursor_pos: 3 });
    expect(c.reply.content).toMatchObject({ status: "ok", matches: ["%time", "%timeit"], cursor_start: 0, cursor_end: 3 });
    const o = await kernel.request("complete_request", { code: "%%grid rows y=y\ncensor_t", cursor_pos: 24 });
    expect(o.reply.content.matches).toEqual(["censor_type"]);
    const ts = await kernel.request("complete_request", { code: "%time 1\nMath.sq", cursor_pos: 15 });
    expect(ts.reply.content.matches).toContain("sqrt");
    // The cells' own declarations, and positions in code points (an astral character before the cursor).
    const own = await kernel.request("complete_request", { code: "'😀'; bas", cursor_pos: 8 });
    expect(own.reply.content).toMatchObject({ cursor_start: 5, cursor_end: 8 });
    expect(own.reply.content.matches).toContain("base");
    expect((await kernel.request("is_complete_request", { code: "%%grid rows y=y\n{" })).reply.content.status).toBe("complete");
    expect((await kernel.request("is_complete_request", { code: "%time 1\nconst a = {" })).reply.content.status).toBe("incomplete");
    const help = await kernel.execute("Math.max?");
    expect(help.reply.payload[0]).toMatchObject({ source: "page", start: 0 });
    expect(help.reply.payload[0].data["text/plain"]).toMatch(/max/);
  }, 60_000);
});

describe("shutdown and restart", () => {
  it("a shutdown_request with restart ends the kernel, its embedded service and worker threads: nothing survives", async () => {
    const kernel = await startKernel();
    try {
      const rows = "const rows = [1, 2, 3, 4, 5, 6, 7, 8].map((i) => ({ y: (i * 7) % 5 + i, a: i }))";
      expect((await kernel.execute(rows)).reply.status).toBe("ok");
      expect((await kernel.execute("%%grid rows y=y X=a theta=last\nthreshold: [0]")).reply.status).toBe("ok");
      const pid = kernel.process.pid!;
      // The embedded service's worker threads live in the kernel's process.
      expect(readdirSync(`/proc/${pid}/task`).length).toBeGreaterThan(1);
      const children = childrenOf(pid);
      const { reply } = await kernel.request("shutdown_request", { restart: true }, 60_000, "control");
      expect(reply.content).toEqual({ status: "ok", restart: true });
      expect(await kernel.exited()).toEqual({ code: 0, signal: null });
      expect(existsSync(`/proc/${pid}`)).toBe(false);
      expect(children.filter((c) => existsSync(`/proc/${c}`))).toEqual([]);
    } finally {
      await kernel.close();
    }
  }, 120_000);

  it("keeps the history of earlier sessions in a --history file", async () => {
    const file = join(OUT, "history.jsonl");
    rmSync(file, { force: true });
    const first = await startKernel(["--history", file]);
    await first.execute("'from the first session'");
    await first.close();
    const second = await startKernel(["--history", file]);
    try {
      const tail = (await second.request("history_request", { hist_access_type: "tail", n: 5, output: true, raw: true })).reply.content.history;
      expect(tail).toEqual([[1, 1, ["'from the first session'", "'from the first session'"]]]);
      const r = await second.execute("1");
      expect(r.reply.execution_count).toBe(1);
      const range = (await second.request("history_request", { hist_access_type: "range", session: -1, start: 1, output: false, raw: true })).reply.content
        .history;
      expect(range).toEqual([[1, 1, "'from the first session'"]]);
    } finally {
      await second.close();
    }
  }, 120_000);
});

// ---------------------------------------------------------------------------------------------
// Headless under Jupyter.

const jupyter = spawnSync("jupyter", ["nbconvert", "--version"], { encoding: "utf8", env: kernelEnv() });
const hasJupyter = jupyter.status === 0;
const why = `jupyter nbconvert is not available (${jupyter.error?.message ?? jupyter.stderr?.trim().split("\n").pop() ?? `exit ${jupyter.status}`}); install it with scripts/install-notebook-deps.sh`;

interface Notebook {
  cells: Array<{
    cell_type: string;
    source: string[] | string;
    metadata: { tags?: string[] };
    execution_count?: number | null;
    outputs?: Array<Record<string, any>>;
  }>;
}

function nbconvert(notebook: string, outName: string, kernel?: string): Promise<{ code: number | null; stderr: string }> {
  const args = ["nbconvert", "--to", "notebook", "--execute", "--ExecutePreprocessor.timeout=300", "--ExecutePreprocessor.startup_timeout=120"];
  if (kernel !== undefined) args.push(`--ExecutePreprocessor.kernel_name=${kernel}`);
  args.push("--output-dir", OUT, "--output", outName, join(NOTEBOOKS, notebook));
  return new Promise((resolvePromise) => {
    const child = spawn("jupyter", args, { cwd: ROOT, env: kernelEnv(), stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.on("close", (code) => resolvePromise({ code, stderr }));
  });
}

function load(name: string): Notebook {
  return JSON.parse(readFileSync(join(OUT, `${name}.ipynb`), "utf8")) as Notebook;
}

const source = (c: Notebook["cells"][number]) => (Array.isArray(c.source) ? c.source.join("") : c.source);
const text = (v: unknown) => (Array.isArray(v) ? v.join("") : String(v ?? ""));

/** Every code cell executed; no error output; no stderr. */
function expectClean(nb: Notebook): Notebook["cells"] {
  const code = nb.cells.filter((c) => c.cell_type === "code");
  for (const c of code) {
    expect(c.execution_count, source(c)).toBeTypeOf("number");
    for (const o of c.outputs ?? []) {
      expect(o.output_type, `${source(c)}\n${JSON.stringify(o).slice(0, 500)}`).not.toBe("error");
      if (o.output_type === "stream") expect(o.name, `${source(c)}\n${text(o.text)}`).toBe("stdout");
    }
  }
  return code;
}

describe.skipIf(!hasJupyter && !IN_CI)(`notebooks under the rbp kernel, headless${hasJupyter ? "" : ` (skipped: ${why})`}`, () => {
  beforeAll(() => {
    if (!hasJupyter) throw new Error(`CI is set but ${why}`);
    requireBuilt();
    rmSync(JUPYTER_DIR, { recursive: true, force: true });
    for (const args of [
      ["--kind", "rbp"],
      ["--kind", "tslab", "--name", "tslab-plain"],
    ]) {
      const r = spawnSync(process.execPath, [RBP, "kernel", "install", ...args, "--jupyter-path", JUPYTER_DIR], { encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
    }
  });

  it("rbp kernel install --kind rbp registers TypeScript (rbp) beside plain tslab", () => {
    const list = spawnSync("jupyter", ["kernelspec", "list", "--json"], { encoding: "utf8", env: kernelEnv() });
    expect(list.status, list.stderr).toBe(0);
    const specs = JSON.parse(list.stdout).kernelspecs;
    expect(specs.rbp.spec).toMatchObject({
      display_name: "TypeScript (rbp)",
      language: "typescript",
      argv: [process.execPath, MAIN, "--config-path", "{connection_file}"],
    });
    expect(specs["tslab-plain"].spec.display_name).toBe("TypeScript (tslab)");
  });

  it("magics-quickstart.ipynb runs with no error, the predictions shown as rich output", async () => {
    const run = await nbconvert("magics-quickstart.ipynb", "magics-quickstart");
    expect(run.code, run.stderr).toBe(0);
    const cells = expectClean(load("magics-quickstart"));
    const find = (start: string) => {
      const c = cells.find((cell) => source(cell).startsWith(start));
      if (c === undefined) throw new Error(`no cell starting with ${start}`);
      return c.outputs ?? [];
    };
    const result = (outs: Array<Record<string, any>>) => outs.find((o) => o.output_type === "execute_result");
    const stdout = (outs: Array<Record<string, any>>) =>
      outs
        .filter((o) => o.output_type === "stream")
        .map((o) => text(o.text))
        .join("");

    expect(stdout(find("%lsmagic"))).toContain("Cell magics: %%grid  %%maxfit  %%psr");
    expect(text(find("%rbp connect local")[0].data["text/plain"])).toMatch(/^Connected to the embedded local service at http:\/\/127\.0\.0\.1:\d+\/v3/);
    expect(text(find("%rbp options grid")[0].data["text/html"])).toContain("<table");
    for (const [start, label] of [
      ["%%grid data theta=circumstance -> fit", "Grid"],
      ["%%psr data", "PSR"],
      ["%%maxfit data", "MaxFit"],
    ]) {
      const outs = find(start);
      expect(outs.some((o) => o.output_type === "display_data" && /completed in/.test(text(o.data["text/plain"])))).toBe(true);
      const r = result(outs);
      expect(r, start).toBeDefined();
      expect(text(r!.data["text/html"])).toContain("rbp-prediction");
      expect(text(r!.data["text/plain"])).toMatch(new RegExp(`^${label} prediction of y( for .+)?: yhat `));
    }
    // The quickstart's published Grid prediction (rounded to 6 decimals by the service).
    expect(text(result(find("%%grid data"))!.data["text/plain"])).toMatch(/yhat 3\.2852/);
    expect(text(result(find("fit.yhat"))!.data["text/plain"])).toMatch(/^3\.2852\d*$/);
    expect(text(find("%rbp status fit")[0].data["text/plain"])).toMatch(/^job 1: completed, yhat 3\.2852/);
    expect(text(find("%rbp quota")[0].data["text/plain"])).toMatch(/^Quota: 1,000,000 units, 3 used, 999,997 remaining/);
    expect(stdout(find("%time "))).toMatch(/Wall time: .+\n$/);
    expect(text(result(find("%time "))!.data["text/plain"])).toBe("5");
    expect(stdout(find("%timeit "))).toMatch(/per loop \(mean ± std\. dev\. of 3 runs, 100 loops each\)/);
    expect(stdout(find("%%grid?"))).toContain("%%grid <data> [y=<column>] [X=<columns>] [theta=<rows>] [-> <name>]");
  }, 300_000);

  it("tslab-compatibility.ipynb gives tslab's values under the rbp kernel, each last value as the cell's result", async () => {
    const [rbp, plain] = await Promise.all([
      nbconvert("tslab-compatibility.ipynb", "tslab-compatibility"),
      nbconvert("tslab-compatibility.ipynb", "tslab-compatibility.tslab", "tslab-plain"),
    ]);
    expect(rbp.code, rbp.stderr).toBe(0);
    expect(plain.code, plain.stderr).toBe(0);
    const a = expectClean(load("tslab-compatibility"));
    const b = load("tslab-compatibility.tslab").cells.filter((c) => c.cell_type === "code");
    expect(a).toHaveLength(b.length);
    const stdout = (outs: Array<Record<string, any>>) =>
      outs
        .filter((o) => o.output_type === "stream")
        .map((o) => text(o.text))
        .join("");
    for (let i = 0; i < a.length; i++) {
      const outs = a[i].outputs!;
      const results = outs.filter((o) => o.output_type === "execute_result");
      expect(results.length, source(a[i])).toBeLessThanOrEqual(1);
      for (const r of results) expect(r.execution_count).toBe(a[i].execution_count);
      if (a[i].metadata.tags?.includes("rbp-display")) {
        // tslab prints the object, the rbp kernel shows its bundle.
        expect(b[i].outputs!.map((o) => o.output_type)).toEqual(["stream"]);
        expect(outs).toHaveLength(1);
        expect([text(results[0].data["text/html"]), text(results[0].data["text/plain"])]).toEqual(["<b>shown as HTML</b>", "shown as text"]);
        continue;
      }
      // tslab prints the last value on stdout after the cell's own output (a string bare, by
      // console.log); the rbp kernel sends it as the result (a string quoted, by util.inspect).
      const shown = results.length === 1 ? text(results[0].data["text/plain"]) : undefined;
      const value = shown === undefined ? "" : `${/^'.*'$/s.test(shown) ? shown.slice(1, -1).replace(/\\'/g, "'") : shown}\n`;
      expect(stdout(outs) + value, source(a[i])).toBe(stdout(b[i].outputs!));
    }
    // Not a comparison of nothing with nothing: every cell but `undefined` and the import shows something.
    expect(a.filter((c) => (c.outputs ?? []).length === 0).map(source)).toEqual(["undefined"]);
  }, 300_000);
});
