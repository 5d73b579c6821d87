/**
 * The heartbeat channel, answered from a worker thread of its own (as ipykernel answers it from a
 * thread): a REP socket that sends every frame back, so a front end that watches the heartbeat
 * (jupyter console, qtconsole) sees the kernel alive while a cell's synchronous code keeps the main
 * thread busy. The thread is unref'd and ends with the kernel (`stop`, or the process's exit).
 *
 * This module is both sides: imported by the kernel it starts the thread; run as the thread's
 * script (`isMainThread` false, workerData the address) it binds and echoes.
 */
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";

export interface Heartbeat {
  /** Resolves when the socket is bound (rejects when it cannot be). */
  readonly ready: Promise<void>;
  /** Ends the thread. */
  stop(): Promise<void>;
}

/**
 * Starts the heartbeat thread on a ZeroMQ address.
 *
 * @example
 * const hb = startHeartbeat("tcp://127.0.0.1:5005");
 * await hb.ready;
 */
export function startHeartbeat(address: string): Heartbeat {
  const worker = new Worker(new URL(import.meta.url), { workerData: { address } });
  worker.unref();
  const ready = new Promise<void>((resolve, reject) => {
    worker.once("message", (m: { bound?: boolean; error?: string }) =>
      m.bound === true ? resolve() : reject(new Error(m.error ?? "the heartbeat did not start")),
    );
    worker.once("error", reject);
    worker.once("exit", (code) => reject(new Error(`the heartbeat thread exited (${code})`)));
  });
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  return {
    ready,
    // The thread closes its socket and ends by itself: terminating it inside ZeroMQ's native code
    // aborts the process at exit. It is ended by force only if it has not ended a second later.
    stop: async () => {
      worker.postMessage("stop");
      const timer = setTimeout(() => void worker.terminate(), 1000);
      await exited;
      clearTimeout(timer);
    },
  };
}

async function echo(address: string): Promise<void> {
  const { Reply } = await import("zeromq");
  const socket = new Reply();
  socket.linger = 0;
  try {
    await socket.bind(address);
  } catch (error) {
    parentPort?.postMessage({ error: `cannot bind the heartbeat to ${address}: ${(error as Error).message}` });
    return;
  }
  parentPort?.once("message", () => {
    socket.close();
    parentPort?.close();
  });
  parentPort?.postMessage({ bound: true });
  try {
    for await (const frames of socket) await socket.send(frames);
  } catch {
    // closed while sending: the thread is ending
  }
}

if (!isMainThread && typeof (workerData as { address?: unknown } | null)?.address === "string") {
  void echo((workerData as { address: string }).address);
}
