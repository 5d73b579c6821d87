/**
 * The package in a real tslab kernel, executed headless by `jupyter nbconvert --execute`:
 *
 * - the quickstart notebook: `import * as rbp from "rbp-notebook"` type-checks under tslab's
 *   bundled TypeScript (tslab prints type errors on stderr and stops the run, so a clean run with
 *   a consumed `@ts-expect-error` proves the types are real), a Grid runs on the embedded service
 *   with one progress output, show() draws an HTML table and plotly bundles, an experiment and a
 *   report follow;
 * - a control notebook with a deliberate type error, to show the check above can fail;
 * - a failing notebook (a wrong key against a service outside the kernel): the cell shows the
 *   readable error box once (tslab's stderr echo of the same text is dropped), no stack frames,
 *   and the key nowhere.
 *
 * The notebooks live in a user project whose node_modules/rbp-notebook links to this repository
 * (package.ts). The kernelspec is written to a temporary JUPYTER_PATH. Skipped, with the reason
 * printed, when jupyter-nbconvert is not installed (scripts/install-notebook-deps.sh installs it).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalService, type LocalService } from "../../src/service/index.js";
import { REPO, ensureBuilt, userProject } from "./package.js";
import { IN_CI } from "../ci.js";

const nbconvert = spawnSync("jupyter-nbconvert", ["--version"], { encoding: "utf8" });
const available = nbconvert.status === 0;
if (!available && !IN_CI)
  console.warn(
    `test/notebook/tslab.test.ts skipped: jupyter-nbconvert is not installed (${nbconvert.error?.message ?? nbconvert.stderr}); scripts/install-notebook-deps.sh installs it`,
  );

interface Output {
  output_type: string;
  name?: string;
  text?: string | string[];
  data?: Record<string, unknown>;
  metadata?: Record<string, unknown>;
}
interface Cell {
  cell_type: string;
  source: string | string[];
  outputs: Output[];
}

const join_ = (t: string | string[] | undefined) => (Array.isArray(t) ? t.join("") : (t ?? ""));
const html = (o: Output) => join_(o.data?.["text/html"] as string | string[] | undefined);
const plain = (o: Output) => join_(o.data?.["text/plain"] as string | string[] | undefined);

function notebook(cells: string[]): string {
  return JSON.stringify(
    {
      cells: cells.map((source) => ({ cell_type: "code", execution_count: null, metadata: {}, outputs: [], source })),
      metadata: { kernelspec: { name: "tslab", display_name: "TypeScript", language: "typescript" }, language_info: { name: "typescript" } },
      nbformat: 4,
      nbformat_minor: 4,
    },
    null,
    1,
  );
}

let project: string;
let jupyterPath: string;
let service: LocalService;
const KEY = "kernel-org-key-93be0c1d77aa";

/** Executes a notebook of the project; resolves with its cells after the run. */
function execute(
  name: string,
  cells: string[],
  options: { allowErrors?: boolean; env?: Record<string, string> } = {},
): Promise<{ code: number | null; log: string; cells: Cell[]; raw: string }> {
  const file = join(project, `${name}.ipynb`);
  writeFileSync(file, notebook(cells));
  const env: NodeJS.ProcessEnv = { ...process.env, JUPYTER_PATH: jupyterPath, ...options.env };
  for (const k of Object.keys(env)) if (/^(CSA_|RBP_BASE_URL|RBP_API_VERSION)/.test(k)) delete env[k];
  const args = [
    "--to",
    "notebook",
    "--execute",
    "--ExecutePreprocessor.timeout=120",
    "--ExecutePreprocessor.kernel_name=tslab",
    "--output",
    `${name}.out.ipynb`,
    file,
  ];
  if (options.allowErrors) args.splice(3, 0, "--allow-errors");
  return new Promise((done, fail) => {
    const child = spawn("jupyter-nbconvert", args, { cwd: project, env });
    let log = "";
    child.stdout.on("data", (d) => (log += d));
    child.stderr.on("data", (d) => (log += d));
    child.on("error", fail);
    child.on("close", (code) => {
      const out = join(project, `${name}.out.ipynb`);
      const raw = existsSync(out) ? readFileSync(out, "utf8") : "";
      done({ code, log, cells: raw ? (JSON.parse(raw) as { cells: Cell[] }).cells : [], raw });
    });
  });
}

describe.skipIf(!available && !IN_CI)("tslab (jupyter nbconvert --execute)", () => {
  beforeAll(async () => {
    if (!available) throw new Error("CI is set, so the tslab suite must run: jupyter-nbconvert is not installed (scripts/install-notebook-deps.sh)");
    ensureBuilt();
    project = userProject("rbp-tslab-");
    jupyterPath = join(project, "jupyter");
    mkdirSync(join(jupyterPath, "kernels", "tslab"), { recursive: true });
    writeFileSync(
      join(jupyterPath, "kernels", "tslab", "kernel.json"),
      JSON.stringify({
        argv: [process.execPath, join(REPO, "node_modules", "tslab", "bin", "tslab"), "kernel", "--config-path", "{connection_file}"],
        display_name: "TypeScript",
        language: "typescript",
      }),
    );
    service = await startLocalService({ port: 0, apiKey: KEY, accessId: "analyst-1", workers: 1 });
  });
  afterAll(async () => {
    await service?.close();
  });

  const data = () => relative(project, resolve(REPO, "test/fixtures/quickstart-7x5.json"));
  const setup = () => [
    `import * as rbp from "rbp-notebook";
import { readFileSync } from "fs";`,
    `const q = JSON.parse(readFileSync(${JSON.stringify(data())}, "utf8")).inputs as { y: number[]; X: number[][]; theta: number[] };
const names = ["Age", "Experience", "Height", "Weight", "Score"];
const rows = q.y.map((y, i) => ({ Points: y, ...Object.fromEntries(names.map((n, j) => [n, q.X[i][j]])) }));
const circumstance = Object.fromEntries(names.map((n, j) => [n, q.theta[j]]));`,
  ];

  it("the quickstart: types check, a Grid runs with one progress output, tables and plotly charts are shown", async () => {
    const r = await execute("quickstart", [
      ...setup(),
      // (tslab does not rewrite a shorthand property naming an earlier cell's variable: write theta: circumstance.)
      `const p = await rbp.grid(rows, { y: "Points", theta: circumstance });`,
      `const yhat: number | null = p.yhat;
const k: number | undefined = p.k;
const attributes: ReadonlyArray<string> = p.attributes;
// @ts-expect-error yhat is a number, not a string
const wrong: string = p.yhat;
const options: rbp.GridOptionsInput = rbp.defaults("grid");
console.log(JSON.stringify({ yhat, k, attributes, combinations: p.combinations, service: p.service, seed: options.seed }));`,
      `p.show();`,
      `const e = await rbp.psr(rows, { y: "Points", theta: [0, 1, 2] }, { threshold: [0, 0.5] });
if (rbp.isExperiment(e)) e.show();`,
      `const path = await rbp.saveReport([p, e], "report.html");
console.log(path.endsWith("report.html"));`,
      `p`,
      `await rbp.disconnect();`,
    ]);
    expect(r.code, r.log).toBe(0);
    const outputs = r.cells.flatMap((c) => c.outputs);
    // No error of any kind: no error outputs, nothing on stderr (where tslab prints type errors and exceptions).
    expect(outputs.filter((o) => o.output_type === "error")).toEqual([]);
    expect(outputs.filter((o) => o.output_type === "stream" && o.name === "stderr").map((o) => join_(o.text))).toEqual([]);

    const [, , gridCell, typed, show, experiment, report, last] = r.cells;
    // One progress output, left in its final state.
    expect(gridCell.outputs).toHaveLength(1);
    expect(gridCell.outputs[0].output_type).toBe("display_data");
    expect(plain(gridCell.outputs[0])).toMatch(/^Grid · job \d+ · completed in \d+\.\d\d s · local service$/);
    expect(html(gridCell.outputs[0])).toContain('class="rbp-progress"');

    const values = JSON.parse(join_(typed.outputs[0].text)) as Record<string, unknown>;
    expect(Math.abs((values.yhat as number) - 3.285239)).toBeLessThanOrEqual(1e-6 + 1e-12); // the gold vector is printed to six decimals
    expect(values).toMatchObject({ k: 5, attributes: ["Age", "Experience", "Height", "Weight", "Score"], combinations: 31, service: "local", seed: 42 });

    // show(): the summary as an HTML table, then the charts as plotly bundles (with HTML for other front ends).
    expect(show.outputs.map((o) => o.output_type)).toEqual(["display_data", "display_data", "display_data", "display_data"]);
    expect(html(show.outputs[0])).toContain('<table class="rbp-table">');
    expect(html(show.outputs[0])).toContain("yhat (Points)");
    for (const o of show.outputs.slice(1)) {
      expect(o.data).toHaveProperty(["application/vnd.plotly.v1+json"]);
      expect(html(o)).toContain('class="rbp-figure"');
    }
    expect(html(show.outputs[1])).toContain("data-rbp-plotly"); // the session's first chart carries plotly.js
    const impact = show.outputs[1].data!["application/vnd.plotly.v1+json"] as { data: Array<{ y: string[] }> };
    expect(impact.data[0].y).toEqual(["Score", "Weight", "Height", "Experience", "Age"]);

    expect(plain(experiment.outputs[0])).toMatch(/^PSR · experiment \d+ · 3 of 3 rows done · completed in/);
    expect(experiment.outputs.some((o) => html(o).includes("rbp-table"))).toBe(true);
    expect(experiment.outputs.some((o) => o.data?.["application/vnd.plotly.v1+json"] !== undefined)).toBe(true);
    expect(join_(report.outputs[0].text)).toBe("true\n");
    expect(existsSync(join(project, "report.html"))).toBe(true);
    // A cell's last value: tslab prints it as text, which for a prediction is its headline.
    expect(join_(last.outputs[0].text)).toMatch(/^Grid prediction of Points: yhat 3\.28524, fit 0\.08769, adjusted fit 1\.05774, K 5, 31 combinations\n/);
  }, 180_000);

  it("control: a type error in a cell is reported by tslab (so the check above can fail)", async () => {
    const r = await execute("type-error", [`import * as rbp from "rbp-notebook";`, `const seed: string = rbp.defaults("grid").seed;`], { allowErrors: true });
    const stderr = r.cells[1].outputs
      .filter((o) => o.name === "stderr")
      .map((o) => join_(o.text))
      .join("");
    expect(stderr).toMatch(/is not assignable to type 'string'/);
  }, 120_000);

  it("a failure shows a readable message in the cell: no stack frames, no key", async () => {
    const r = await execute(
      "failure",
      [
        ...setup(),
        `await rbp.connect({ baseUrl: process.env.RBP_TEST_URL, apiKey: process.env.RBP_TEST_KEY, accessId: "analyst-1" });
await rbp.grid(rows, { y: "Points", theta: circumstance });`,
        `console.log("after the failure");`,
      ],
      { allowErrors: true, env: { RBP_TEST_URL: service.url, RBP_TEST_KEY: `${KEY}-wrong` } },
    );
    const cell = r.cells[2];
    const box = cell.outputs.find((o) => html(o).includes("rbp-error"));
    expect(box, JSON.stringify(cell.outputs)).toBeDefined();
    expect(html(box!)).toContain("Grid: the service did not accept the credentials");
    expect(html(box!)).toContain("field: <code>x-api-key</code>");
    // Shown once: the box, and not the same text again as a stderr block.
    expect(cell.outputs.filter((o) => html(o).includes("rbp-error"))).toHaveLength(1);
    const stderr = cell.outputs
      .filter((o) => o.name === "stderr")
      .map((o) => join_(o.text))
      .join("");
    expect(stderr).toBe("");
    // The run still stops at the failed cell (tslab's error reply): the next cell does not run.
    expect(r.cells[3]?.outputs ?? []).toEqual([]);
    // The key is in no output (the cell reads it from the environment).
    expect(r.raw).not.toContain(KEY);
  }, 120_000);
});
