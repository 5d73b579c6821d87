/**
 * The progress line: one display output updated in place in a kernel (display id, then
 * update_display_data), one stderr line rewritten with \r in a terminal, only the final line when
 * stderr is not a terminal, nothing with "none"; throttled updates.
 */
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { connect, disconnect, grid, psr, progressText } from "../../src/notebook/index.js";
import { Progress } from "../../src/notebook/progress.js";
import { RBP_KERNEL_HOOK } from "../../src/display/index.js";
import { quickstartFrame, quickstartRows, quickstartTheta, simulateTslab } from "./helpers.js";

beforeAll(async () => {
  await connect({ hosted: false, env: {}, envFile: false, local: { workers: 2 } });
});
afterAll(async () => {
  await disconnect();
});

/** A stream that records what is written; a TTY or not. */
function sink(isTTY: boolean): { stream: NodeJS.WriteStream; written: string[] } {
  const written: string[] = [];
  const w = new Writable({
    write(chunk, _enc, cb) {
      written.push(String(chunk));
      cb();
    },
  }) as unknown as NodeJS.WriteStream;
  (w as { isTTY?: boolean }).isTTY = isTTY;
  return { stream: w, written };
}

describe("in a notebook kernel (tslab, simulated)", () => {
  it("a single call shows one output, updated in place, that ends completed", async () => {
    const kernel = simulateTslab();
    try {
      const p = await grid(quickstartRows(), { y: "Points", theta: quickstartTheta() });
      const ids = new Set(kernel.messages.map((m) => m.transient.display_id));
      expect(ids.size).toBe(1);
      const [id] = ids;
      expect(String(id)).toMatch(/^rbp-progress-/);
      expect(kernel.messages[0].update).toBe(false);
      expect(kernel.messages.slice(1).every((m) => m.update)).toBe(true);
      const last = kernel.messages[kernel.messages.length - 1];
      expect(last.data["text/plain"]).toBe(`Grid · job ${p.receipt.job_id} · completed in ${(p.elapsedMs / 1000).toFixed(2)} s · local service`);
      expect(last.data["text/html"]).toContain('data-rbp-status="completed"');
    } finally {
      kernel.restore();
    }
  });

  it("an experiment's line counts rows and draws a bar", async () => {
    const kernel = simulateTslab();
    try {
      const e = await psr(quickstartFrame(), { y: "Points", theta: [0, 1, 2, 3] });
      const last = kernel.messages[kernel.messages.length - 1];
      expect(last.update).toBe(true);
      expect(last.data["text/plain"]).toMatch(/^PSR · experiment \d+ · 4 of 4 rows done · completed in/);
      expect(last.data["text/html"]).toContain("width:100%");
      expect(new Set(kernel.messages.map((m) => m.transient.display_id)).size).toBe(1);
      expect(e).toBeDefined();
    } finally {
      kernel.restore();
    }
  });

  it("an experiment says it is fetching results, counting them, before it completes", async () => {
    const kernel = simulateTslab();
    try {
      await psr(quickstartFrame(), { y: "Points", theta: [0, 1, 2, 3] });
      const texts = kernel.messages.map((m) => String(m.data["text/plain"]));
      const fetching = texts.filter((t) => t.includes("fetching results"));
      expect(fetching.length).toBeGreaterThan(0);
      expect(fetching[fetching.length - 1]).toMatch(/4 of 4 rows done · fetching results 4 of 4 · \d+\.\d\d s/);
      expect(texts.indexOf(fetching[0])).toBeLessThan(texts.length - 1);
      expect(texts[texts.length - 1]).toMatch(/completed in/);
    } finally {
      kernel.restore();
    }
  });

  it("the running mark is drawn with CSS, not an emoji glyph (no empty box without an emoji font)", async () => {
    const kernel = simulateTslab();
    try {
      await grid(quickstartRows(), { y: "Points", theta: quickstartTheta() });
      for (const m of kernel.messages) {
        const html = String(m.data["text/html"]);
        expect(html).toContain('class="rbp-progress-mark"');
        // Nothing outside Latin-1 and the middle dot before the text: no emoji, no dingbat.
        expect(html).not.toMatch(/[\u{2190}-\u{2BFF}\u{1F000}-\u{1FFFF}]/u);
      }
    } finally {
      kernel.restore();
    }
  });

  it("a single job's first line waits 100 ms: a call that ends sooner sends only its final line", () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval"] });
    const kernel = simulateTslab();
    try {
      const fast = new Progress("grid", "display");
      fast.update({ service: "local", status: "submitting" });
      fast.update({ jobId: 7, status: "queued" });
      expect(kernel.messages).toHaveLength(0);
      fast.finish("completed");
      expect(kernel.messages).toHaveLength(1);
      expect(kernel.messages[0].update).toBe(false);
      expect(kernel.messages[0].data["text/plain"]).toMatch(/^Grid · job 7 · completed in /);
      vi.advanceTimersByTime(1000);
      expect(kernel.messages).toHaveLength(1);

      const slow = new Progress("grid", "display");
      slow.update({ service: "local", status: "submitting" });
      slow.update({ jobId: 8, status: "running" });
      vi.advanceTimersByTime(100);
      expect(kernel.messages).toHaveLength(2);
      expect(kernel.messages[1].update).toBe(false);
      expect(kernel.messages[1].data["text/plain"]).toMatch(/^Grid · job 8 · running · /);
      slow.finish("completed");
      expect(kernel.messages).toHaveLength(3);
      expect(kernel.messages[2].update).toBe(true);
      expect(kernel.messages[2].transient.display_id).toBe(kernel.messages[1].transient.display_id);

      // An experiment's line is drawn at once.
      const experiment = new Progress("psr", "display");
      experiment.update({ experimentId: 3, rows: { done: 0, failed: 0, total: 4 }, status: "running" });
      expect(kernel.messages).toHaveLength(4);
      experiment.finish("completed");
    } finally {
      kernel.restore();
      vi.useRealTimers();
    }
  });

  it("show() sends the summary table and each chart as its own output", async () => {
    const p = await grid(quickstartFrame(), { y: "Points", theta: quickstartTheta() }, {}, { progress: "none" });
    const kernel = simulateTslab();
    try {
      void p.show();
      const kinds = kernel.messages.map((m) => Object.keys(m.data).sort().join(","));
      expect(kinds[0]).toBe("text/html,text/plain");
      expect(kernel.messages[0].data["text/html"]).toContain("rbp-table");
      expect(kinds.slice(1)).toEqual(Array(3).fill("application/vnd.plotly.v1+json,text/html,text/plain"));
    } finally {
      kernel.restore();
    }
  });
});

describe("the final line and the event loop's turns (turns.ts)", () => {
  /** Whether `end` resolves before a turn of the event loop has passed. */
  async function endsWithinTheTurn(): Promise<boolean> {
    const progress = new Progress("grid", "display");
    progress.update({ status: "queued", jobId: 1 });
    let turned = false;
    setImmediate(() => (turned = true));
    await progress.end("completed");
    return !turned;
  }

  it("waits for turns around the final line in tslab, and for none in the rbp kernel, which sends its messages in order", async () => {
    const kernel = simulateTslab();
    try {
      expect(await endsWithinTheTurn()).toBe(false);
      expect(kernel.messages).toHaveLength(1);
    } finally {
      kernel.restore();
    }
    const shown: unknown[] = [];
    const g = globalThis as Record<symbol, unknown>;
    g[RBP_KERNEL_HOOK] = { display: (bundle: unknown) => shown.push(bundle), clearOutput: () => undefined, onKernelInfo: () => undefined };
    try {
      expect(await endsWithinTheTurn()).toBe(true);
      expect(shown).toHaveLength(1);
    } finally {
      delete g[RBP_KERNEL_HOOK];
    }
  });
});

describe("in a terminal and in logs", () => {
  it("a TTY gets one line rewritten with \\r and ended with a newline", () => {
    const { stream, written } = sink(true);
    const progress = new Progress("grid", "auto", stream);
    progress.update({ status: "submitting", service: "local" });
    progress.update({ jobId: 7, status: "queued" });
    progress.update({ status: "running" });
    progress.finish("completed");
    expect(written.length).toBeGreaterThanOrEqual(3);
    expect(written.every((w) => w.startsWith("\r"))).toBe(true);
    expect(written.slice(0, -1).every((w) => !w.includes("\n"))).toBe(true);
    const last = written[written.length - 1];
    expect(last).toMatch(/^\rGrid · job 7 · completed in \d+\.\d\d s · local service *\n$/);
    // A shorter line pads over the longer one before it.
    const lengths = written.map((w) => w.replace(/\n$/, "").length);
    expect(lengths[1]).toBeGreaterThanOrEqual(lengths[0] - 1);
  });

  it("not a TTY: only the final line", () => {
    const { stream, written } = sink(false);
    const progress = new Progress("psr", "auto", stream);
    progress.update({ experimentId: 3, rows: { done: 0, failed: 0, total: 4 }, status: "running", service: "hosted" });
    progress.update({ rows: { done: 2, failed: 1, total: 4 } });
    progress.finish("partial_failed", { rows: { done: 4, failed: 1, total: 4 } });
    expect(written).toHaveLength(1);
    expect(written[0]).toMatch(/^PSR · experiment 3 · 4 of 4 rows done \(1 failed\) · finished with failed rows in \d+\.\d\d s · hosted service\n$/);
  });

  it('"none" writes nothing; "line" writes the final line even on a TTY', () => {
    const a = sink(true);
    const none = new Progress("grid", "none", a.stream);
    none.update({ status: "running" });
    none.finish("failed");
    expect(a.written).toEqual([]);
    const b = sink(true);
    const line = new Progress("maxfit", "line", b.stream);
    line.update({ jobId: 1, status: "running" });
    line.finish("failed");
    expect(b.written).toHaveLength(1);
    expect(b.written[0]).toMatch(/^MaxFit · job 1 · failed in/);
  });

  it("repeated polls with nothing new are throttled; a new status is shown at once", () => {
    const { stream, written } = sink(true);
    const progress = new Progress("grid", "terminal", stream);
    progress.update({ jobId: 1, status: "running" });
    for (let i = 0; i < 50; i++) progress.update({ status: "running" });
    expect(written).toHaveLength(1);
    progress.update({ status: "queued" });
    expect(written).toHaveLength(2);
    progress.finish("completed");
    progress.finish("completed");
    progress.update({ status: "running" });
    expect(written).toHaveLength(3);
  });

  it("rows that end in quick succession are shown at most every 100 ms, the last by the ticker or a new status; a function sees every one", () => {
    vi.useFakeTimers({ toFake: ["performance", "setInterval", "clearInterval"] });
    try {
      const { stream, written } = sink(true);
      const progress = new Progress("psr", "terminal", stream);
      const rows = (done: number) => ({ rows: { done, failed: 0, total: 100 } });
      progress.update({ status: "running", ...rows(0) });
      for (let done = 1; done <= 50; done++) progress.update(rows(done));
      expect(written).toHaveLength(1);
      vi.advanceTimersByTime(100);
      progress.update(rows(51));
      expect(written).toHaveLength(2);
      expect(written[1]).toMatch(/51 of 100 rows done · running/);
      progress.update(rows(52));
      expect(written).toHaveLength(2);
      // The ticker (every 500 ms since the first line, skipped within 450 ms of the last) shows the counts held back.
      vi.advanceTimersByTime(950);
      expect(written).toHaveLength(3);
      expect(written[2]).toMatch(/52 of 100 rows done · running/);
      progress.update(rows(53));
      expect(written).toHaveLength(3);
      // A new status at once, with the counts so far.
      progress.update({ status: "fetching" });
      expect(written).toHaveLength(4);
      expect(written[3]).toMatch(/53 of 100 rows done · fetching results/);
      progress.finish("completed", rows(100));
      expect(written[written.length - 1]).toMatch(/100 of 100 rows done · completed in/);
      const events: string[] = [];
      const every = new Progress("psr", (e) => events.push(e.text));
      for (let done = 1; done <= 50; done++) every.update({ status: "running", ...rows(done) });
      expect(events).toHaveLength(50);
    } finally {
      vi.useRealTimers();
    }
  });

  it("while nothing changes, the line is redrawn twice a second so its clock moves; never after the final line", async () => {
    const { stream, written } = sink(true);
    const progress = new Progress("psr", "terminal", stream);
    progress.update({ experimentId: 3, rows: { done: 31, failed: 0, total: 31 }, status: "fetching", fetched: 0 });
    await new Promise((r) => setTimeout(r, 1300));
    expect(written.length).toBeGreaterThanOrEqual(3);
    const clocks = written.map((w) => /(\d+\.\d\d) s/.exec(w)?.[1]);
    expect(new Set(clocks).size).toBe(written.length);
    expect(written[written.length - 1]).toMatch(/31 of 31 rows done · fetching results 0 of 31 · /);
    progress.finish("completed");
    const n = written.length;
    await new Promise((r) => setTimeout(r, 700));
    expect(written).toHaveLength(n);
  });

  it("long waits read in seconds and minutes", () => {
    expect(progressText({ analysis: "grid", status: "running", jobId: 2, elapsedMs: 65_400, final: false })).toBe("Grid · job 2 · running · 65.4 s");
    expect(progressText({ analysis: "grid", status: "completed", jobId: 2, elapsedMs: 185_000, final: true })).toBe("Grid · job 2 · completed in 3 min 5 s");
  });
});
