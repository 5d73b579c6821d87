/**
 * How long a display waits after Deno's send (src/display/kernels.ts `denoDisplay`): until
 * everything rbp-notebook has queued in Deno's kernel, itself included, is estimated published.
 * Deno is simulated the way it presents itself (`Deno.jupyter.display`, resolved once queued), and
 * time is vitest's fake clock, so the waits are exact. In its own file: the queue's estimate is the
 * module's state, and here it only ever sees the fake clock. The same behaviour in the real Deno
 * kernel: test/notebooks/deno-queue.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { display } from "../../src/display/index.js";

const g = globalThis as Record<string, unknown>;

beforeAll(() => {
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
  g.Deno = { jupyter: { display: () => Promise.resolve() } };
});

afterAll(() => {
  delete g.Deno;
  vi.useRealTimers();
});

/** Whether each promise has resolved, read after `ms` more fake milliseconds. */
async function after(ms: number, promises: Array<Promise<unknown>>): Promise<boolean[]> {
  const done = promises.map(() => false);
  promises.forEach((p, i) => void p.then(() => (done[i] = true)));
  await vi.advanceTimersByTimeAsync(ms);
  return done;
}

const small = { "text/plain": "Grid · job 1 · completed in 0.01 s" };
const big = { "text/plain": "a chart", "text/html": "x".repeat(3_000_000) };

describe("a display in Deno's kernel waits until the queue ahead of it, and itself, is published, then 100 ms", () => {
  it("a small bundle with nothing queued ahead waits 101 ms (1 ms in the queue, 100 quiet)", async () => {
    await vi.advanceTimersByTimeAsync(10_000); // nothing left of an earlier test
    const p = display(small) as Promise<void>;
    expect(p).toBeInstanceOf(Promise);
    expect(await after(100, [p])).toEqual([false]);
    expect(await after(1, [p])).toEqual([true]);
  });

  it("a small bundle queued right behind 3 MB of HTML waits for that too (301 ms in the queue), and the big one for its own size", async () => {
    await vi.advanceTimersByTimeAsync(10_000);
    const first = display(big) as Promise<void>; // 1 + 300 ms, then 100 quiet
    const last = display(small) as Promise<void>; // behind it: 301 + 1 ms, then 100 quiet
    expect(await after(400, [first, last])).toEqual([false, false]);
    expect(await after(1, [first, last])).toEqual([true, false]);
    expect(await after(1, [last])).toEqual([true]);
  });

  it("200 small lines sent at once (an experiment's results fetched one by one): the last waits 300 ms, not 200 quiet times", async () => {
    await vi.advanceTimersByTimeAsync(10_000);
    const lines = Array.from({ length: 200 }, (_, i) => display({ "text/plain": `fetching results ${i} of 200` }) as Promise<void>);
    expect(await after(299, [lines[199]])).toEqual([false]);
    expect(await after(1, [lines[0], lines[199]])).toEqual([true, true]);
  });

  it("a queue that was published long ago adds nothing: the wait counts from now", async () => {
    await vi.advanceTimersByTimeAsync(10_000);
    void display(big);
    await vi.advanceTimersByTimeAsync(1_000);
    const p = display(small) as Promise<void>;
    expect(await after(101, [p])).toEqual([true]);
  });
});
