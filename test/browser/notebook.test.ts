/**
 * The classic Jupyter Notebook 6.4 (Debian's `jupyter-notebook`) with the tslab kernel, driven in
 * Chromium (playwright-core, Debian's chromium), as a person uses it:
 *
 * - a page reload with the kernel still running and the notebook not saved: running the chart's
 *   cell again draws the chart (the reloaded page asked for kernel_info, so the chart carried
 *   plotly.js again: no remedy needed, no "waits for plotly.js" text);
 * - an untrusted notebook (outputs this server did not write): each chart says once, in its own
 *   place, that its JavaScript did not run and how to trust the notebook; no other message.
 *
 * The server runs on loopback with a token, in a temporary folder whose node_modules/rbp-notebook
 * links to this repository, with the tslab kernelspec of the notebook suite (project-local
 * JUPYTER_PATH). Skipped, with the reason printed, without jupyter-notebook or Chromium
 * (scripts/install-notebook-deps.sh, scripts/install-browser.sh); when CI is set they fail instead.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHROMIUM, openBrowser, type Browser } from "../../scripts/chromium.js";
import { executeNotebook, executedPath, installKernelspec, KERNEL_NAME, notebookEnv, ROOT } from "../../scripts/notebooks/lib.js";
import { IN_CI } from "../ci.js";

const notebookApp = spawnSync("jupyter-notebook", ["--version"], { encoding: "utf8" }).status === 0;
const available = notebookApp && existsSync(CHROMIUM);
const why = [
  !notebookApp ? "jupyter-notebook is not installed (scripts/install-notebook-deps.sh)" : "",
  !existsSync(CHROMIUM) ? `no Chromium at ${CHROMIUM}` : "",
]
  .filter(Boolean)
  .join("; ");
if (!available && !IN_CI) console.warn(`[test/browser/notebook] SKIPPED: ${why}`);

const SHOTS = resolve("test-output", "screenshots");
const FIGURE = `{ data: [{ type: "bar", x: ["a", "b", "c"], y: [3, 1, 2] }], layout: { title: { text: "three bars" }, height: 300 } }`;

function notebook(cells: string[]): string {
  return JSON.stringify({
    nbformat: 4,
    nbformat_minor: 5,
    metadata: { kernelspec: { name: KERNEL_NAME, display_name: "TypeScript (tslab)", language: "typescript" } },
    cells: cells.map((source, i) => ({ id: `c${i}`, cell_type: "code", source, metadata: {}, outputs: [], execution_count: null })),
  });
}

const CELLS = [`import * as rbp from "rbp-notebook";\nconst fig = ${FIGURE};`, `await rbp.display(fig);`, `await rbp.display(fig);`];

describe.skipIf(!available && !IN_CI)("the classic Notebook in Chromium", () => {
  let dir: string;
  let server: ChildProcess | undefined;
  let base = "";
  let token = "";
  let browser: Browser;

  beforeAll(async () => {
    if (!available) throw new Error(`CI is set, so the classic Notebook suite must run: ${why}`);
    mkdirSync(SHOTS, { recursive: true });
    installKernelspec();
    dir = mkdtempSync(join(tmpdir(), "rbp-classic-"));
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(ROOT, join(dir, "node_modules", "rbp-notebook"), "dir");
    // An untrusted notebook: executed by nbconvert here, so its outputs are signed by no server.
    writeFileSync(join(dir, "source.ipynb"), notebook(CELLS.slice(0, 2)));
    const run = await executeNotebook("zz-classic-untrusted", join(dir, "source.ipynb"));
    expect(run.code, run.stderr).toBe(0);
    writeFileSync(join(dir, "untrusted.ipynb"), readFileSync(executedPath("zz-classic-untrusted")));
    rmSync(executedPath("zz-classic-untrusted"), { force: true });
    writeFileSync(join(dir, "reload.ipynb"), notebook(CELLS));

    token = randomBytes(16).toString("hex");
    // A free port (the classic Notebook reports port 0 as 0).
    const port = await new Promise<number>((ok) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const p = (probe.address() as { port: number }).port;
        probe.close(() => ok(p));
      });
    });
    const env = { ...notebookEnv(), JUPYTER_CONFIG_DIR: join(dir, ".config"), JUPYTER_DATA_DIR: join(dir, ".data") };
    server = spawn(
      "jupyter-notebook",
      [
        "--no-browser",
        "--ip=127.0.0.1",
        `--port=${port}`,
        `--NotebookApp.token=${token}`,
        `--notebook-dir=${dir}`,
        "--NotebookApp.open_browser=False",
        ...(process.getuid?.() === 0 ? ["--allow-root"] : []),
      ],
      { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    base = await new Promise<string>((ok, fail) => {
      let log = "";
      const timer = setTimeout(() => fail(new Error(`jupyter-notebook did not start: ${log}`)), 60_000);
      const read = (chunk: Buffer) => {
        log += chunk.toString();
        const m = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(log);
        if (m) {
          clearTimeout(timer);
          ok(m[1]);
        }
      };
      server!.once("exit", (code) => fail(new Error(`jupyter-notebook exited ${code}: ${log}`)));
      server!.stdout!.on("data", read);
      server!.stderr!.on("data", read);
    });
    browser = await openBrowser("rbp-classic-chromium-");
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    if (server !== undefined && server.exitCode === null) {
      server.kill("SIGTERM");
      await new Promise((r) => server!.once("exit", r));
    }
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  async function open(name: string): Promise<Page> {
    const page = await browser.context.newPage();
    await page.goto(`${base}notebooks/${name}?token=${token}`, { waitUntil: "load" });
    await page.waitForFunction(`window.Jupyter && Jupyter.notebook && Jupyter.notebook._fully_loaded`, undefined, { timeout: 60_000 });
    return page;
  }

  async function kernelIdle(page: Page): Promise<void> {
    await page.waitForFunction(
      `Jupyter.notebook.kernel && Jupyter.notebook.kernel.is_connected() && document.querySelector("#kernel_indicator_icon.kernel_idle_icon") !== null`,
      undefined,
      { timeout: 120_000 },
    );
  }

  /** Runs cells and waits until each has its prompt number (the kernel went idle for it). */
  async function runCells(page: Page, indices: number[]): Promise<void> {
    await kernelIdle(page);
    await page.evaluate(`Jupyter.notebook.execute_cells(${JSON.stringify(indices)})`);
    await page.waitForFunction(
      `${JSON.stringify(indices)}.every((i) => { const c = Jupyter.notebook.get_cell(i); return typeof c.input_prompt_number === "number"; })`,
      undefined,
      { timeout: 120_000, polling: 250 },
    );
  }

  const figures = (page: Page) =>
    page.evaluate(
      `Array.from(document.querySelectorAll(".rbp-figure")).map((el) => ({ drawn: el.getAttribute("data-rbp-drawn") === "1", svg: el.querySelectorAll(".main-svg").length, text: (el.textContent || "").slice(0, 300) }))`,
    ) as Promise<Array<{ drawn: boolean; svg: number; text: string }>>;

  it("after a page reload (kernel running, notebook not saved), running the chart's cell again draws it with no remedy", async () => {
    const page = await open("reload.ipynb");
    await runCells(page, [0, 1]);
    await page.waitForFunction(`document.querySelectorAll('.rbp-figure[data-rbp-drawn="1"]').length === 1`, undefined, { timeout: 60_000 });
    // Reload without saving: the outputs (and the copy of plotly.js in them) are gone; the kernel keeps running.
    await page.reload({ waitUntil: "load" });
    await page.waitForFunction(`window.Jupyter && Jupyter.notebook && Jupyter.notebook._fully_loaded`, undefined, { timeout: 60_000 });
    expect(await page.evaluate(`document.querySelectorAll(".rbp-figure").length`)).toBe(0);
    await runCells(page, [2]);
    await page.waitForFunction(`document.querySelectorAll(".rbp-figure").length === 1`, undefined, { timeout: 60_000 });
    await page.waitForFunction(`document.querySelector('.rbp-figure[data-rbp-drawn="1"]') !== null`, undefined, { timeout: 20_000 }).catch(() => undefined);
    const after = await figures(page);
    await page.screenshot({ path: join(SHOTS, "classic-reload.png"), fullPage: true });
    expect(after).toHaveLength(1);
    expect(after[0].text).not.toMatch(/waits for plotly\.js/);
    expect(after[0].drawn, after[0].text).toBe(true);
    expect(after[0].svg).toBeGreaterThan(0);
    // The kernel was the same one: cell 0's variables were still there.
    expect(await page.evaluate(`Jupyter.notebook.get_cell(2).output_area.outputs.some((o) => o.output_type === "error" || o.name === "stderr")`)).toBe(false);
    await page.close();
  }, 300_000);

  it("an untrusted notebook: each chart says once that its JavaScript did not run and how to trust the notebook", async () => {
    const page = await open("untrusted.ipynb");
    expect(await page.evaluate(`Jupyter.notebook.trusted`)).toBe(false);
    await page.waitForTimeout(6000); // longer than a chart waits before saying plotly.js is missing
    const text = (await page.evaluate(`document.getElementById("notebook").innerText`)) as string;
    await page.screenshot({ path: join(SHOTS, "classic-untrusted.png"), fullPage: true });
    const notes = text.split("This chart is drawn by JavaScript, which has not run here").length - 1;
    expect(notes).toBe(1); // one chart, one note
    expect(text).toContain("File > Trust Notebook");
    expect(text).not.toMatch(/waits for plotly\.js/);
    expect(await page.evaluate(`document.querySelectorAll(".main-svg").length`)).toBe(0);
    await page.close();
  }, 120_000);
});
