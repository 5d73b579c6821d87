/**
 * `rbp worker --database URL`: a worker process of the team service (service/pg-worker.ts). Runs
 * jobs from the PostgreSQL store until SIGINT or SIGTERM, then hands the jobs it held back to the
 * queue. Any number of these, on any machine that reaches the database (docs/team-service.md).
 * The URL may also come from RBP_DATABASE_URL (keeps a password out of `ps`).
 */
import { RbpBaseError } from "../errors/index.js";
import type { PgWorkerOptions } from "../service/pg-worker.js";
import { flags } from "./flags.js";
import { UsageError } from "./predict.js";

export const WORKER_USAGE = `Usage: rbp worker --database postgres://USER@HOST:PORT/DB [--workers N] [--lease SECONDS]
                  [--timeout SECONDS] [--quiet]

Runs jobs of a team service whose front ends are \`rbp serve --database URL\`.
  --database URL    PostgreSQL URL (or RBP_DATABASE_URL); the schema must be migrated
                    (rbp serve --database URL --migrate)
  --workers N       jobs run at once, one engine thread each (default 1)
  --lease SECONDS   a job held by a worker that stopped is run again after this (default 30)
  --timeout SECONDS time limit of one job (default 600)
  --quiet           no operational log on stderr`;

export function parseWorkerArgs(args: string[], env: NodeJS.ProcessEnv = process.env): { options: PgWorkerOptions; quiet: boolean } {
  let database = env.RBP_DATABASE_URL;
  const options: Partial<PgWorkerOptions> = {};
  let quiet = false;
  for (const flag of flags(args, WORKER_USAGE)) {
    const { name, arg, value } = flag;
    switch (name) {
      case "--database":
        database = value();
        break;
      case "--workers":
        options.workers = flag.number(1);
        if (!Number.isInteger(options.workers) || options.workers > 1024) throw new UsageError(`--workers expects an integer from 1 to 1024`);
        break;
      case "--lease":
        options.leaseMs = Math.round(flag.number(0.1) * 1000);
        break;
      case "--timeout":
        options.jobTimeoutMs = Math.round(flag.number(0.001) * 1000);
        break;
      case "--quiet":
        quiet = true;
        break;
      default:
        throw new UsageError(`unknown option "${arg}"\n\n${WORKER_USAGE}`);
    }
  }
  if (database === undefined || !/^postgres(ql)?:\/\//.test(database)) {
    throw new UsageError(`--database expects a postgres:// URL (or set RBP_DATABASE_URL)\n\n${WORKER_USAGE}`);
  }
  return { options: { ...options, database }, quiet };
}

export async function worker(
  args: { options: PgWorkerOptions; quiet: boolean },
  io: { stdout: (s: string) => void; stderr: (s: string) => void },
): Promise<void> {
  const log = args.quiet ? undefined : (line: string) => io.stderr(`${new Date().toISOString()} ${line}\n`);
  // Loaded here, so that other rbp commands never load the PostgreSQL driver.
  const { startPgWorker } = await import("../service/pg-worker.js");
  const running = await startPgWorker({ ...args.options, log }).catch((error: unknown) => {
    if (error instanceof RbpBaseError && error.code === "schema_mismatch") throw new UsageError(error.message);
    throw error;
  });
  io.stdout(`rbp worker ${running.owner} running jobs (${args.options.workers ?? 1} at a time). Press Ctrl+C to stop.\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      void running.close().then(resolve);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
