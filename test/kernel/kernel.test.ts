/**
 * The rbp kernel (src/kernel), built (npm test builds first):
 * - over the Jupyter wire protocol, driven by a small client (wire-client.ts): kernel info, tslab's
 *   own output for ordinary cells, rich display of a displayable last value, magics, their errors
 *   and the positions of compile errors;
 * - headless under Jupyter: `jupyter nbconvert --to notebook --execute` of
 *   notebooks/magics-quickstart.ipynb and notebooks/tslab-compatibility.ipynb with the kernelspec
 *   `rbp kernel install --kind rbp` writes, into test-output/kernel/ (the sources are never
 *   rewritten). The compatibility notebook also runs under plain tslab, and every output but the
 *   last cell's must be the same. Skipped when Jupyter is absent, except in CI (CI set), where
 *   that fails.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
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

/** Variables that would send predictions to a hosted service. */
const HOSTED_ENV = ["RBP_BASE_URL", "CSA_BASE_URL", "CSA_API_KEY", "CSA_ACCESS_ID", "RBP_API_VERSION"];

function kernelEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONWARNINGS: "ignore", JUPYTER_PATH: JUPYTER_DIR, JUPYTER_RUNTIME_DIR: join(OUT, "runtime") };
  for (const k of HOSTED_ENV) delete env[k];
  return env;
}

function requireBuilt(): void {
  if (!existsSync(MAIN) || !existsSync(RBP)) throw new Error(`the kernel is not built (${MAIN}); run npm run build (npm test does)`);
}

const outputsOf = (r: { outputs: Message[] }, type: string) => r.outputs.filter((m) => m.header.msg_type === type);

describe("the rbp kernel over the Jupyter protocol", () => {
  let kernel: KernelClient;
  const cwd = join(OUT, "cwd");

  beforeAll(async () => {
    requireBuilt();
    mkdirSync(cwd, { recursive: true });
    kernel = await KernelClient.startMain({ main: MAIN, dir: join(OUT, "runtime"), cwd, env: kernelEnv() });
  }, 90_000);

  afterAll(async () => {
    await kernel?.close();
  });

  it("introduces itself as tslab with magics", async () => {
    const { reply } = await kernel.request("kernel_info_request", {});
    expect(reply.content.implementation).toBe("rbp");
    expect(reply.content.language_info.name).toBe("typescript");
    expect(reply.content.banner).toMatch(/tslab 1\.0\.22 .*%lsmagic/);
  });

  it("runs a cell without magics as tslab does: the last value printed as text", async () => {
    const r = await kernel.execute("let x = 1\nx + 1");
    expect(r.reply.status).toBe("ok");
    expect(r.outputs.map((m) => m.header.msg_type)).toEqual(["stream"]);
    expect(streamText(r.outputs, "stdout")).toBe("2\n");
    expect(streamText((await kernel.execute("({ a: [1, 2] })")).outputs, "stdout")).toBe("{ a: [ 1, 2 ] }\n");
    expect((await kernel.execute("undefined")).outputs).toEqual([]);
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
    expect(outputsOf(later, "execute_result").map((m) => m.content.data["text/plain"])).toEqual(["later"]);
  }, 60_000);

  it("answers a malformed magic with an error naming the word, and compiles nothing", async () => {
    const r = await kernel.execute("const before = 1\n%tme before");
    expect(r.reply).toMatchObject({ status: "error", ename: "MagicError", evalue: expect.stringMatching(/^unknown line magic %tme; did you mean %time\?/) });
    const [error] = outputsOf(r, "error");
    expect(error.content.traceback).toEqual(["MagicError: " + r.reply.evalue, "line 2: %tme before", "        ^^^^"]);
    expect(streamText(r.outputs, "stderr")).toBe("");
    // Nothing ran: `before` was not declared.
    expect(streamText((await kernel.execute("typeof before")).outputs, "stderr")).toMatch(/Cannot find name 'before'/);
    const bad = await kernel.execute("%%grid cars y=a\nthreshhold: [0, 0.5]");
    expect(bad.reply.evalue).toMatch(/unknown option "threshhold"; did you mean "threshold"\?/);
  }, 60_000);

  it("runs line magics: %time keeps the value, %timeit and %lsmagic print", async () => {
    const t = await kernel.execute("const base = 20\n%time base + 22");
    expect(t.reply.status).toBe("ok");
    expect(streamText(t.outputs, "stdout")).toMatch(/^CPU times: user .+, sys: .+, total: .+\nWall time: .+\n42\n$/);
    const decl = await kernel.execute("%time const later = await Promise.resolve(5)");
    expect(streamText(decl.outputs, "stdout")).toMatch(/Wall time/);
    expect(streamText((await kernel.execute("later")).outputs, "stdout")).toBe("5\n");
    const ti = await kernel.execute("%timeit -n 50 -r 2 Math.sqrt(base)");
    expect(streamText(ti.outputs, "stdout")).toMatch(/ per loop \(mean ± std\. dev\. of 2 runs, 50 loops each\)\n$/);
    const ls = await kernel.execute("%lsmagic");
    expect(streamText(ls.outputs, "stdout")).toMatch(/Line magics: %rbp {2}%time {2}%timeit {2}%lsmagic {2}%magic\nCell magics: %%grid {2}%%maxfit {2}%%psr/);
    expect(streamText((await kernel.execute("%%psr?")).outputs, "stdout")).toMatch(/^%%psr: run a partial sample regression/);
  }, 60_000);

  it("points a compile error on a magic line at the user's own words", async () => {
    const t = await kernel.execute(`%time const y: number = "a"`);
    expect(t.reply.status).toBe("error");
    expect(streamText(t.outputs, "stderr")).toBe("1:13 - Type 'string' is not assignable to type 'number'.\n");
    const g = await kernel.execute("\n%%grid carz y=a theta=last");
    expect(streamText(g.outputs, "stderr")).toBe("2:8 - Cannot find name 'carz'.\n");
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
    expect(streamText((await kernel.execute("[g === _, g.attributes]")).outputs, "stdout")).toBe("[ true, [ 'a', 'b' ] ]\n");
    const status = await kernel.execute("%rbp status g");
    expect(outputsOf(status, "display_data")[0].content.data["text/plain"]).toMatch(/^job \d+: completed, yhat /);
    const quota = await kernel.execute("%rbp quota");
    expect(outputsOf(quota, "display_data")[0].content.data["text/plain"]).toMatch(/^Quota: [\d,]+ units, 1 used/);
    // Several theta rows: an experiment, typed as one.
    const e = await kernel.execute("%%psr rows y=y theta=0,-1 -> e\nthreshold: [0, 0.5]");
    expect(outputsOf(e, "execute_result")).toHaveLength(1);
    expect(streamText((await kernel.execute("e.rows.map((p) => p.thetaLabel)")).outputs, "stdout")).toBe("[ '0', '7' ]\n");
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
    expect(r.reply.evalue).toMatch(/^PSR: the data cannot be used\. outcome column "nope" is not in the data/);
    expect(outputsOf(r, "error")).toHaveLength(1);
    expect(outputsOf(r, "display_data")).toEqual([]);
    expect(streamText(r.outputs, "stderr")).toBe("");
  }, 60_000);

  it("completes magic names and options, and knows a cell magic is complete", async () => {
    const c = await kernel.request("complete_request", { code: "%ti", cursor_pos: 3 });
    expect(c.reply.content).toMatchObject({ status: "ok", matches: ["%time", "%timeit"], cursor_start: 0, cursor_end: 3 });
    const o = await kernel.request("complete_request", { code: "%%grid rows y=y\ncensor_t", cursor_pos: 24 });
    expect(o.reply.content.matches).toEqual(["censor_type"]);
    const ts = await kernel.request("complete_request", { code: "%time 1\nMath.sq", cursor_pos: 15 });
    expect(ts.reply.content.matches).toContain("sqrt");
    expect((await kernel.request("is_complete_request", { code: "%%grid rows y=y\n{" })).reply.content.status).toBe("complete");
    expect((await kernel.request("is_complete_request", { code: "%time 1\nconst a = {" })).reply.content.status).toBe("incomplete");
  }, 60_000);
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
    expect(stdout(find("fit.yhat"))).toMatch(/^3\.2852\d*\n$/);
    expect(text(find("%rbp status fit")[0].data["text/plain"])).toMatch(/^job 1: completed, yhat 3\.2852/);
    expect(text(find("%rbp quota")[0].data["text/plain"])).toMatch(/^Quota: 1,000,000 units, 3 used, 999,997 remaining/);
    expect(stdout(find("%time "))).toMatch(/Wall time: .+\n5\n$/);
    expect(stdout(find("%timeit "))).toMatch(/per loop \(mean ± std\. dev\. of 3 runs, 100 loops each\)/);
    expect(stdout(find("%%grid?"))).toContain("%%grid <data> [y=<column>] [X=<columns>] [theta=<rows>] [-> <name>]");
  }, 300_000);

  it("tslab-compatibility.ipynb gives tslab's own outputs under the rbp kernel", async () => {
    const [rbp, plain] = await Promise.all([
      nbconvert("tslab-compatibility.ipynb", "tslab-compatibility"),
      nbconvert("tslab-compatibility.ipynb", "tslab-compatibility.tslab", "tslab-plain"),
    ]);
    expect(rbp.code, rbp.stderr).toBe(0);
    expect(plain.code, plain.stderr).toBe(0);
    const a = expectClean(load("tslab-compatibility"));
    const b = load("tslab-compatibility.tslab").cells.filter((c) => c.cell_type === "code");
    expect(a).toHaveLength(b.length);
    const strip = (outs: Array<Record<string, any>>) => outs.map((o) => ({ ...o, text: text(o.text) }));
    for (let i = 0; i < a.length; i++) {
      if (a[i].metadata.tags?.includes("rbp-display")) {
        // The one difference: tslab prints the object, the rbp kernel shows its bundle.
        expect(b[i].outputs!.map((o) => o.output_type)).toEqual(["stream"]);
        const [shown, ...more] = a[i].outputs!;
        expect(more).toEqual([]);
        expect(shown).toMatchObject({ output_type: "execute_result", execution_count: a[i].execution_count, metadata: {} });
        expect([text(shown.data["text/html"]), text(shown.data["text/plain"])]).toEqual(["<b>shown as HTML</b>", "shown as text"]);
        continue;
      }
      expect(strip(a[i].outputs!), source(a[i])).toEqual(strip(b[i].outputs!));
    }
    // Not a comparison of nothing with nothing: every cell but `undefined` and the import shows something.
    expect(a.filter((c) => (c.outputs ?? []).length === 0).map(source)).toEqual(["undefined"]);
  }, 300_000);
});
