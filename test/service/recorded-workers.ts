/**
 * A service on real pool workers whose tasks are recorded as they are posted (spread.test.ts,
 * inline.test.ts): each task's kind ("whole", "lead", "draw" or "rows:<n>") and each part's shared
 * counter, and a promise of so many workers having said they are ready (an event, not a clock).
 * With `holdReady`, the pool hears its workers' ready messages only once `letReady` is called: the
 * workers are slow to start, as under Deno, for as long as the test wants.
 */
import type { Worker } from "node:worker_threads";
import type { Credentials } from "../../src/service/credentials.js";
import { PredictionService, type ServiceConfig } from "../../src/service/core.js";
import { defaultSpawn, type WorkerPool } from "../../src/service/pool.js";
import { EmbeddedStore } from "../../src/service/store/embedded.js";
import { MemoryPersistence } from "../../src/service/store/persistence.js";
import type { WorkerTask } from "../../src/service/worker.js";

export interface RecordedService {
  service: PredictionService;
  /** The kind of every task posted to a worker, in order. */
  tasks: string[];
  /** The shared counter of every Grid part posted, in order. */
  counters: Int32Array[];
  /** Settles once `count` workers have said they are ready. */
  ready: (count: number) => Promise<void>;
  /** Hands the pool the ready messages held so far, and those to come (`holdReady`). */
  letReady: () => void;
  /**
   * Settles once every worker is free. A spread Grid's result can come before its helper's part has
   * left its worker (a helper withdrawn when the lead is done, as after `warm`), and a Grid that
   * starts meanwhile finds one worker free and runs whole: a test that wants a Grid spread waits
   * for this first.
   */
  idle: () => Promise<void>;
}

/** Opens a service with the embedded store in memory and `config`, recording its workers' tasks. */
export async function recordedService(
  credentials: Credentials,
  config: Partial<ServiceConfig>,
  { holdReady = false }: { holdReady?: boolean } = {},
): Promise<RecordedService> {
  let held: Array<() => void> | undefined = holdReady ? [] : undefined;
  const letReady = () => {
    const release = held ?? [];
    held = undefined;
    for (const emit of release) emit();
  };
  const tasks: string[] = [];
  const counters: Int32Array[] = [];
  // Set once the service is open: its pool, read for its free workers only (a test's view of a private field).
  let pool: WorkerPool | undefined;
  const idleWaiters: Array<() => void> = [];
  const isIdle = () => pool !== undefined && pool.capacity() === pool.size;
  const wakeIdle = () => {
    if (isIdle()) for (const resolve of idleWaiters.splice(0)) resolve();
  };
  let readyCount = 0;
  const waiting: Array<{ count: number; resolve: () => void }> = [];
  const spawn = (): Worker => {
    const worker = defaultSpawn();
    // The ready message is the worker's first: held back (from the pool and from `ready`) while `held`.
    const emit = worker.emit.bind(worker);
    worker.emit = (event: string | symbol, ...args: unknown[]) => {
      if (event === "message" && held !== undefined && (args[0] as { type?: string } | undefined)?.type === "ready") {
        held.push(() => emit(event, ...args));
        return true;
      }
      const handled = emit(event, ...args);
      // The pool frees a worker's slot in its own listener of the reply (or of the exit), just run.
      wakeIdle();
      return handled;
    };
    worker.once("message", () => {
      readyCount++;
      for (const w of waiting.filter((w) => w.count <= readyCount)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.resolve();
      }
    });
    const post = worker.postMessage.bind(worker);
    worker.postMessage = (task: WorkerTask, transfer?: never) => {
      tasks.push(task.part ? task.part.kind : task.thetas ? `rows:${task.thetas.length}` : "whole");
      if (task.part) counters.push(new Int32Array(task.part.counter));
      return post(task, transfer);
    };
    return worker;
  };
  const service = await PredictionService.open({ store: await EmbeddedStore.open(new MemoryPersistence()), credentials, config, spawn });
  const ready = (count: number) => (readyCount >= count ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ count, resolve })));
  pool = (service as unknown as { pool: WorkerPool }).pool;
  // Settles at the worker event after which every slot is free (at once when they are).
  const idle = (): Promise<void> => (isIdle() ? Promise.resolve() : new Promise<void>((resolve) => idleWaiters.push(resolve)));
  return { service, tasks, counters, ready, letReady, idle };
}
