/**
 * The embedded store (jobs.ts) through the `Store` interface, on a real data dir: a job's terminal
 * state is recorded once (a second complete/fail does nothing, even after an outcome write threw),
 * the input of a request is released exactly once, and the queue is round robin across
 * organisations.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { startLocalService } from "../../src/service/index.js";
import { EmbeddedStore } from "../../src/service/store/embedded.js";
import { FairQueue } from "../../src/service/store/queue.js";
import { DeferredText, PACK_AT_ONCE_CHARS, PACK_FROM_CHARS, PACK_QUIET_MS, PackedText, packText, unpackText } from "../../src/service/store/packed.js";
import { DirPersistence, MemoryPersistence, type Outcome } from "../../src/service/store/persistence.js";
import type { JobInput } from "../../src/service/store/records.js";
import { Client, gold, quickstart, tempDir } from "./helpers.js";

const dirs: Array<{ remove: () => void }> = [];
afterEach(() => {
  for (const d of dirs.splice(0)) d.remove();
});

const input = (rows: number): JobInput => ({
  analysis: "psr",
  data: { rows: 7, cols: 5, y: Float64Array.from(gold.inputs.y), X: Float64Array.from(gold.inputs.X.flat()) },
  thetas: Array.from({ length: rows }, () => Float64Array.from(gold.inputs.theta)),
  options: {},
});

/** A data dir whose next outcome write fails once (as a full disk would). */
class FlakyOutcomes extends DirPersistence {
  failNext = false;
  override async saveOutcome(jobId: number, outcome: Outcome): Promise<void> {
    if (this.failNext) {
      this.failNext = false;
      throw Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
    }
    return super.saveOutcome(jobId, outcome);
  }
}

async function flaky(path: string): Promise<FlakyOutcomes> {
  // DirPersistence.open makes the layout; the subclass shares it
  return Object.setPrototypeOf(await DirPersistence.open(path), FlakyOutcomes.prototype) as FlakyOutcomes;
}

describe("EmbeddedStore", () => {
  it("fail() after a complete() whose outcome write failed does nothing: the request's input is released once", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const persistence = await flaky(dir.path);
    const store = await EmbeddedStore.open(persistence);
    const { jobs } = await store.createJobs({ org: "o", plan: 10, analysis: "psr", input: input(2), warnings: [] });
    const first = (await store.claim())!;
    persistence.failNext = true;
    expect(await store.complete(first.job, '{"yhat":[1]}', { yhat: [1], fit: [0] })).toBe("completed");
    await store.fail(first.job, { message: "should not apply", error_code: 2, status_code: 10 });
    expect(first.job.status).toBe("completed");
    const second = (await store.claim())!;
    expect(second.job.id).toBe(jobs[1].id);
    expect(second.input.thetas).toHaveLength(2); // not "inputs lost"
    expect(await store.complete(second.job, '{"yhat":[2]}', { yhat: [2], fit: [0] })).toBe("completed");
    await store.close();

    // the first job's outcome was never saved: it runs again after a restart, paid once
    const again = await EmbeddedStore.open(await DirPersistence.open(dir.path));
    expect((await again.quotaStatus("o", 10)).used).toBe(2);
    const rerun = (await again.claim())!;
    expect(rerun.job.id).toBe(jobs[0].id);
    expect(rerun.input.thetas).toHaveLength(2);
    expect(await again.claim()).toBeUndefined();
    expect((await again.findJob("o", jobs[1].id, jobs[1].code))?.status).toBe("completed");
    await again.close();
  });

  it("the quota and the jobs are created in one step: a plan too small creates nothing", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const store = await EmbeddedStore.open(await DirPersistence.open(dir.path));
    await expect(store.createJobs({ org: "o", plan: 2, analysis: "psr", input: input(3), warnings: [] })).rejects.toThrow(/costs 3 unit/);
    expect((await store.quotaStatus("o", 2)).used).toBe(0);
    expect(await store.claim()).toBeUndefined();
    await store.close();
  });

  it("with a data dir, the records of finished requests are not all kept in memory; every job is still served", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const store = await EmbeddedStore.open(await DirPersistence.open(dir.path), { maxJobRecords: 10 });
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await store.createJobs({ org: "o", plan: 100, analysis: "psr", input: input(8), warnings: ["w"] }));
    expect(store.stats().jobRecordsInMemory).toBe(40); // unfinished: all kept
    for (let claimed = await store.claim(); claimed; claimed = await store.claim()) {
      await store.complete(claimed.job, JSON.stringify({ yhat: [claimed.job.id] }), { yhat: [claimed.job.id], fit: [0] });
    }
    expect(store.stats().jobRecordsInMemory).toBeLessThanOrEqual(10);
    for (const { jobs, experiment } of created) {
      const found = await store.findExperiment("o", experiment!.id, experiment!.code);
      expect(found?.job_ids).toEqual(jobs.map((j) => j.id));
      const rows = await store.experimentJobs(found!);
      expect(rows.map((j) => [j.status, j.compact?.yhat[0], j.warnings])).toEqual(jobs.map((j) => ["completed", j.id, ["w"]]));
      const job = (await store.findJob("o", jobs[3].id, jobs[3].code))!;
      expect(JSON.parse((await store.readResult(job))!)).toEqual({ yhat: [jobs[3].id] });
      expect(await store.findJob("o", jobs[3].id, jobs[4].code)).toBeUndefined();
      expect(store.stats().jobRecordsInMemory).toBeLessThanOrEqual(10);
    }
    expect(store.stats().requestsKept).toBe(5);
    await store.close();
  });

  it("startLocalService runs on a store it is given (how another store plugs in) and closes it", async () => {
    const store = await EmbeddedStore.open(new MemoryPersistence());
    let closed = false;
    const close = store.close.bind(store);
    store.close = async () => {
      closed = true;
      return close();
    };
    const service = await startLocalService({ port: 0, workers: 1, store, apiKey: "given-store-key-012345", accessId: "u" });
    const client = new Client(service.url, "given-store-key-012345", "u");
    expect((await client.run("psr", quickstart())).status).toBe(200);
    expect(store.stats().requestsKept).toBe(1);
    await service.close();
    expect(closed).toBe(true);
    await expect(startLocalService({ store, dataDir: "/tmp/x" })).rejects.toThrow(/store replaces the embedded store/);
  });

  it("requests saved out of order (concurrent POSTs) are all found by id", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const persistence = await DirPersistence.open(dir.path);
    const save = persistence.saveBatch.bind(persistence);
    let delay = 60;
    persistence.saveBatch = async (batch) => {
      // each later request is saved sooner than the one before it
      await new Promise((r) => setTimeout(r, (delay -= 20)));
      return save(batch);
    };
    const store = await EmbeddedStore.open(persistence);
    const created = await Promise.all([1, 2, 3].map((rows) => store.createJobs({ org: "o", plan: 100, analysis: "psr", input: input(rows), warnings: [] })));
    for (const { jobs } of created) for (const job of jobs) expect((await store.findJob("o", job.id, job.code))?.id).toBe(job.id);
    await store.close();
  });

  it("a large result text is kept deflated once stored, and read back byte for byte (so more results fit in maxResultMemoryBytes)", async () => {
    // JSON as a result's: numbers, and strings with escapes and characters beyond Latin-1.
    const text = (seed: number) =>
      JSON.stringify({
        warnings: ['naïve \u2028 «quoted» "x" \ud83d\ude00 tab\t', "\u0000"],
        relevance: Array.from({ length: 160_000 }, (_, i) => Math.round(Math.sin(i * seed) * 1e6) / 1e6),
      });
    const a = text(1);
    const b = text(2);
    expect(a.length).toBeGreaterThan(PACK_FROM_CHARS);
    // Room for one text as it is, not for two: the first is still there only if it was deflated.
    const store = await EmbeddedStore.open(new MemoryPersistence(), { maxResultMemoryBytes: Math.round(1.6 * a.length) });
    await store.createJobs({ org: "o", plan: 10, analysis: "psr", input: input(2), warnings: [] });
    const first = (await store.claim())!;
    const second = (await store.claim())!;
    expect(await store.complete(first.job, a, { yhat: [1], fit: [0] })).toBe("completed");
    await store.whenPacked();
    expect(await store.complete(second.job, b, { yhat: [2], fit: [0] })).toBe("completed");
    await store.whenPacked();
    expect(await store.readResult(first.job)).toBe(a);
    expect(await store.readResult(second.job)).toBe(b);
    // A short text is kept as it is.
    const small = '{"yhat":[1.5],"note":"é"}';
    expect(await packText(small)).toBeUndefined();
    const packed = await packText(a);
    expect(packed!.bytes.length).toBeLessThan(0.5 * a.length);
    expect(await unpackText(packed!)).toBe(a);
    await store.close();
  });

  it("a shorter text (a warm N=1,000 Grid's) is deflated once the store has stored nothing for a while, not at once", async () => {
    const text = (seed: number) => JSON.stringify({ relevance: Array.from({ length: 6_000 }, (_, i) => Math.round(Math.sin(i * seed) * 1e6) / 1e6) });
    const [a, b, c] = [text(1), text(2), text(3)];
    expect(a.length).toBeGreaterThan(PACK_FROM_CHARS);
    expect(a.length).toBeLessThan(PACK_AT_ONCE_CHARS);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      // Room for one text as it is, not for two: an earlier text is still there only if it was deflated.
      const store = await EmbeddedStore.open(new MemoryPersistence(), { maxResultMemoryBytes: Math.round(1.6 * a.length) });
      await store.createJobs({ org: "o", plan: 10, analysis: "psr", input: input(3), warnings: [] });
      const [first, second, third] = [(await store.claim())!, (await store.claim())!, (await store.claim())!];
      expect(await store.complete(first.job, a, { yhat: [1], fit: [0] })).toBe("completed");
      // Quiet for PACK_QUIET_MS: the first text is deflated (its deflate is awaited through the thread pool, no timer).
      await vi.advanceTimersByTimeAsync(PACK_QUIET_MS);
      await new Promise<void>((resolve) => setImmediate(resolve));
      await store["packing"];
      expect(await store.complete(second.job, b, { yhat: [2], fit: [0] })).toBe("completed");
      expect(await store.readResult(first.job)).toBe(a);
      // Not quiet: the second text still waits as it is, so the third evicts it.
      expect(await store.complete(third.job, c, { yhat: [3], fit: [0] })).toBe("completed");
      await store.whenPacked();
      expect(await store.readResult(second.job)).toBeUndefined();
      expect(await store.readResult(third.job)).toBe(c);
      expect(await store.readResult(first.job)).toBe(a);
      await store.close();
    } finally {
      vi.useRealTimers();
    }
  });

  it("a deferred text (an inline Grid's) is written once, when first read or deflated, and read back byte for byte", async () => {
    const long = JSON.stringify({ relevance: Array.from({ length: 6_000 }, (_, i) => Math.round(Math.sin(i) * 1e6) / 1e6) });
    const short = '{"yhat":[1.5]}';
    const writes: string[] = [];
    const deferred = (text: string, charsAtMost: number) =>
      new DeferredText(
        () => {
          writes.push(text);
          return text;
        },
        charsAtMost,
        text.length / 2,
      );
    const store = await EmbeddedStore.open(new MemoryPersistence(), {});
    await store.createJobs({ org: "o", plan: 10, analysis: "psr", input: input(3), warnings: [] });
    const [first, second, third] = [(await store.claim())!, (await store.claim())!, (await store.claim())!];
    // Read before the store is quiet: written then, once.
    expect(await store.complete(first.job, deferred(short, 100), { yhat: [1.5], fit: [0] })).toBe("completed");
    expect(writes).toEqual([]);
    expect(await store.readResult(first.job)).toBe(short);
    expect(await store.readResult(first.job)).toBe(short);
    expect(writes).toEqual([short]);
    // Deflated once the store is quiet: written for it, then kept deflated (or as the text, when shorter than its bound said).
    expect(await store.complete(second.job, deferred(long, long.length + 100), { yhat: [1], fit: [0] })).toBe("completed");
    expect(await store.complete(third.job, deferred(short, PACK_FROM_CHARS + 1), { yhat: [1], fit: [0] })).toBe("completed");
    expect(writes).toEqual([short]);
    await store.whenPacked();
    expect(writes).toEqual([short, long, short]);
    expect(store["results"].get(second.job.id)).toBeInstanceOf(PackedText);
    expect(store["results"].get(third.job.id)).toBe(short);
    expect(await store.readResult(second.job)).toBe(long);
    expect(await store.readResult(third.job)).toBe(short);
    expect(writes).toHaveLength(3);
    await store.close();
  });

  it("writes the deferred texts of a burst for their deflate one turn at a time", async () => {
    const text = (seed: number) => JSON.stringify({ relevance: Array.from({ length: 3_000 }, (_, i) => Math.round(Math.sin(i * seed) * 1e6) / 1e6) });
    const events: string[] = [];
    const store = await EmbeddedStore.open(new MemoryPersistence(), {});
    await store.createJobs({ org: "o", plan: 10, analysis: "psr", input: input(3), warnings: [] });
    for (const seed of [1, 2, 3]) {
      const { job } = (await store.claim())!;
      const deferred = new DeferredText(
        () => {
          events.push(`write ${seed}`);
          // Runs at the next turn: before the next write only if each write has a turn of its own.
          setImmediate(() => events.push(`turn after ${seed}`));
          return text(seed);
        },
        PACK_FROM_CHARS + 1,
        1000,
      );
      expect(await store.complete(job, deferred, { yhat: [seed], fit: [0] })).toBe("completed");
    }
    await store.whenPacked();
    expect(events.slice(0, 5)).toEqual(["write 1", "turn after 1", "write 2", "turn after 2", "write 3"]);
    await store.close();
  });

  it("FairQueue takes organisations in turn, oldest first within one", () => {
    const q = new FairQueue();
    for (let i = 1; i <= 4; i++) q.push("flood", i);
    q.push("single", 100);
    q.push("other", 200);
    const order = Array.from({ length: 6 }, () => q.shift());
    expect(order).toEqual([1, 100, 200, 2, 3, 4]);
    expect(q.shift()).toBeUndefined();
    expect(q.size).toBe(0);
  });

  it("FairQueue.remove takes one queued id out of its organisation's turn, and only a queued one", () => {
    const q = new FairQueue();
    for (let i = 1; i <= 3; i++) q.push("flood", i);
    q.push("other", 200);
    expect(q.shift()).toBe(1);
    expect(q.remove("flood", 1)).toBe(false);
    expect(q.remove("flood", 3)).toBe(true);
    expect(q.remove("flood", 3)).toBe(false);
    expect(q.remove("nobody", 2)).toBe(false);
    expect(q.size).toBe(2);
    expect([q.shift(), q.shift(), q.shift()]).toEqual([200, 2, undefined]);
  });
});
