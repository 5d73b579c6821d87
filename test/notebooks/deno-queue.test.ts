/**
 * In Deno's real Jupyter kernel (Deno 2.9.6 from .tools/deno), every output of a cell arrives
 * before the cell's idle status, when the cell ends right after an analysis call: its progress
 * line, and large displays queued ahead of that line and never awaited. Deno resolves a display
 * when it is queued and can publish idle before its queue is drained, and a front end stops
 * listening to a cell at idle; so each display of rbp-notebook waits until what it queued is
 * estimated published (src/display/kernels.ts `denoDisplay`; the waits themselves, on a fake
 * clock: test/display/deno-queue.test.ts). With 20 ms for each message and no wait for the queue
 * ahead of it, the first cell of eight 3 MB displays below lost four of them and the line.
 *
 * The kernel is spoken to directly over ZeroMQ (test/kernel/wire-client.ts), and nothing is read
 * past a cell's idle status. Without a deno binary the tests are skipped; with CI set that fails.
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NOTEBOOK_DIR, denoBinary, linkPackage } from "../../scripts/notebooks/lib.js";
import { IN_CI } from "../ci.js";
import { KernelClient, type Message } from "../kernel/wire-client.js";

const deno = denoBinary();

if (deno === undefined && !IN_CI) console.warn("[test/notebooks/deno-queue] SKIPPED: no deno binary (bash scripts/install-deno.sh, or RBP_DENO).");
if (deno === undefined && IN_CI) {
  describe("Deno's kernel in CI", () => {
    it("has a deno binary to run", () => {
      expect.fail("CI is set, so Deno's kernel must run: bash scripts/install-deno.sh");
    });
  });
}

/** The plain texts of a cell's display_data and update_display_data, in the order they came, all before idle. */
function texts(iopub: Message[]): string[] {
  const idle = iopub.findIndex((m) => m.header.msg_type === "status" && m.content.execution_state === "idle");
  expect(idle, "the cell's idle status").toBeGreaterThan(-1);
  return iopub
    .slice(0, idle)
    .filter((m) => m.header.msg_type === "display_data" || m.header.msg_type === "update_display_data")
    .map((m) => String((m.content.data as Record<string, unknown>)["text/plain"]));
}

const FINAL = /^Grid · job \d+ · completed in \d+\.\d\d s · local service$/;

describe.runIf(deno !== undefined)("Deno's kernel: a cell's outputs all arrive before its idle status", () => {
  let kernel: KernelClient;

  beforeAll(async () => {
    linkPackage();
    kernel = await KernelClient.start({
      argv: [deno!, "jupyter", "--kernel", "--conn", "{connection_file}"],
      dir: join(tmpdir(), "rbp-deno-queue"),
      cwd: NOTEBOOK_DIR,
      env: { ...process.env, NO_COLOR: "1" },
      timeoutMs: 120_000,
    });
    const setup = await kernel.execute(`import * as rbp from "rbp-notebook";
let s = 7;
const rnd = () => (s = (s * 16807) % 2147483647) / 2147483647 - 0.5;
const X = Array.from({ length: 1000 }, () => Array.from({ length: 10 }, rnd));
const y = X.map((r) => r.reduce((a, b) => a + b, 0) + rnd());
await rbp.grid({ y, X }, {}, { max_iter: 2000 });`);
    expect(setup.reply.status, JSON.stringify(setup.reply)).toBe("ok");
  }, 180_000);

  afterAll(() => kernel?.close(), 60_000);

  it("three Grids in a cell: each one's final progress line", async () => {
    for (let cell = 0; cell < 5; cell++) {
      const run = await kernel.execute(`for (let i = 0; i < 3; i++) await rbp.grid({ y, X }, {}, { max_iter: 2000 });`);
      expect(run.reply.status).toBe("ok");
      const finals = texts(run.iopub).filter((t) => FINAL.test(t));
      expect(finals, `cell ${cell}: ${texts(run.iopub).join(" | ")}`).toHaveLength(3);
    }
  }, 120_000);

  it("eight 3 MB displays never awaited, then a Grid that ends the cell: all nine outputs", async () => {
    for (let cell = 0; cell < 3; cell++) {
      const run = await kernel.execute(`const pad${cell} = "x".repeat(3_000_000);
for (let i = 0; i < 8; i++) void rbp.display({ "text/plain": "big " + i, "text/html": "<p>" + pad${cell} + "</p>" });
await rbp.grid({ y, X }, {}, { max_iter: 2000 });`);
      expect(run.reply.status).toBe("ok");
      const shown = texts(run.iopub);
      expect(shown.slice(0, 8), `cell ${cell}`).toEqual(Array.from({ length: 8 }, (_, i) => `big ${i}`));
      expect(shown.filter((t) => FINAL.test(t)), `cell ${cell}: ${shown.join(" | ").slice(0, 400)}`).toHaveLength(1);
    }
  }, 180_000);
});
