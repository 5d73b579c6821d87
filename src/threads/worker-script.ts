/**
 * Starts a worker thread on an entry module beside the caller: the compiled `.js` file, or, when
 * the TypeScript sources run directly (vitest, tsx, from the repository), the `.ts` file through
 * tsx's loader, which a worker does not inherit from its parent.
 */
import { Worker, type WorkerOptions } from "node:worker_threads";

export function startWorker(name: string, callerUrl: string, options: WorkerOptions = {}): Worker {
  if (!callerUrl.endsWith(".ts")) return new Worker(new URL(`./${name}.js`, callerUrl), options);
  const entry = new URL(`./${name}.ts`, callerUrl).href;
  const bootstrap = `import("tsx/esm/api").then(({ register }) => { register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(bootstrap, { ...options, eval: true });
}
