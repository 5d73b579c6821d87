/**
 * `rbp serve`: runs the local prediction service until SIGINT or SIGTERM. Prints the URL and what
 * a notebook needs to use it (`export RBP_BASE_URL=...`, and `export CSA_API_KEY=...` and
 * `CSA_ACCESS_ID` lines, which a shell or a .env file can take as is).
 */
import { startLocalService, type LocalServiceOptions } from "../service/index.js";
import { RbpBaseError } from "../errors/index.js";
import { DEFAULT_LIMITS, LIMIT_FLAGS, type ServiceLimits } from "../service/limits.js";
import { EXPERIMENT_ROWS_PER_TASK } from "../service/core.js";
import { flags } from "./flags.js";
import { UsageError } from "./predict.js";

export const DEFAULT_PORT = 8765;

export const SERVE_USAGE = `Usage: rbp serve [--port N] [--host H] [--credentials FILE] [--data-dir DIR] [--workers N]
                 [--timeout SECONDS] [--decimals N|full] [--quota N] [--v2-long-poll SECONDS]
                 [--retention HOURS] [--result-memory MIB] [--database URL [--migrate]] [--quiet]
                 [--experiment-rows-per-task N]
                 [--max-combinations N] [--max-attributes N] [--max-theta-rows N]
                 [--max-retained-values N] [--max-work N]

Serves the prediction API version 3 at http://H:N/v3 (and /v3/prediction-engine) and the legacy
version 2 at http://H:N/v2/prediction-engine.
  --port N            TCP port (default ${DEFAULT_PORT}; 0 picks a free one)
  --host H            interface to bind (default 127.0.0.1)
  --credentials FILE  organisations, API keys, users and quotas (JSON); without it one local
                      organisation uses CSA_API_KEY and CSA_ACCESS_ID, generated when unset
  --data-dir DIR      keep jobs, results and quota in DIR across restarts (default: memory)
  --workers N         worker threads for jobs (default: the number of cores)
  --timeout SECONDS   time limit of one job (default 600)
  --decimals N|full   decimal places of result numbers (default 6, as the hosted service)
  --quota N           units of the local organisation (default 1000000)
  --v2-long-poll SECONDS
                      how long a v2 GET /results waits for a running job before answering
                      "still running" (default 240, at most 290). The official Python client
                      reads a job with three GETs and then gives up, so it sees jobs of up to
                      3 x SECONDS + 6 s finish; it drops a GET after 300 s. Lower it behind a
                      proxy that cuts requests idle for less
  --retention HOURS   finished jobs and their results are removed this long after they
                      finish; their ids then answer 410 (default 168 = 7 days)
  --result-memory MIB without --data-dir: results kept in memory, least recently used out
                      first (410 once out; default 256). With --data-dir results are on disk
  --database URL      keep jobs, results and quota in PostgreSQL (postgres://USER@HOST/DB, or
                      RBP_DATABASE_URL), shared by every rbp serve and rbp worker on it
                      (docs/team-service.md); --workers 0 then serves without running jobs
  --migrate           with --database: create or upgrade the schema first (else refused
                      when it is not current)
  --quiet             no request log on stderr
  --experiment-rows-per-task N
                      most Grid rows of one experiment a worker runs in one task, sharing
                      what does not depend on theta (default ${EXPERIMENT_ROWS_PER_TASK}; a task also stays
                      within about a second of work, one turn of the organisation); 1 runs
                      one row per task

Limits on one request, checked when it is posted (a 422 naming the option and the limit, nothing
charged); the defaults suit a laptop, a team's server raises them (docs/limits.md):
  --max-combinations N     Grid combinations one job evaluates: attribute_combi rows, else
                           max_iter or what K, min_k, max_k, allowed_k admit (default ${fmt(DEFAULT_LIMITS.maxCombinations)})
  --max-attributes N       attribute columns (K) of X (default ${fmt(DEFAULT_LIMITS.maxAttributes)})
  --max-theta-rows N       theta rows of one request, one job each (default ${fmt(DEFAULT_LIMITS.maxThetaRows)})
  --max-retained-values N  numbers the Grid's retain options keep per job (default ${fmt(DEFAULT_LIMITS.maxRetainedValues)})
  --max-work N             rows x cells (combinations x thresholds x censors) per job
                           (default ${fmt(DEFAULT_LIMITS.maxWork)})
Also fixed: request bodies up to 10 MiB, X uploads up to 256 MiB, one result field up to 4 MiB,
at most 255 thresholds, JSON nested at most 32 levels.`;

function fmt(n: number): string {
  return n.toLocaleString("en-US");
}

/** `--max-...` flag -> the limit it sets. */
const LIMIT_OF_FLAG: ReadonlyMap<string, keyof ServiceLimits> = new Map(
  (Object.entries(LIMIT_FLAGS) as Array<[keyof ServiceLimits, string]>).map(([limit, flag]) => [flag, limit]),
);

export interface ServeArgs {
  options: LocalServiceOptions;
  quiet: boolean;
}

export function parseServeArgs(args: string[]): ServeArgs {
  const options: LocalServiceOptions = { port: DEFAULT_PORT };
  let quiet = false;
  for (const flag of flags(args, SERVE_USAGE)) {
    const { name, arg, value } = flag;
    switch (name) {
      case "--port":
        options.port = flag.integer(0);
        if (options.port > 65535) throw new UsageError(`--port expects a port number up to 65535, got ${options.port}`);
        break;
      case "--host":
        options.host = value();
        break;
      case "--credentials":
        options.credentialsFile = value();
        break;
      case "--data-dir":
        options.dataDir = value();
        break;
      case "--workers":
        options.workers = flag.integer(0);
        break;
      case "--database":
        options.database = value();
        break;
      case "--migrate":
        options.migrate = true;
        break;
      case "--timeout": {
        const v = value();
        const seconds = Number(v);
        if (!Number.isFinite(seconds) || seconds <= 0) throw new UsageError(`--timeout expects seconds > 0, got "${v}"`);
        options.jobTimeoutMs = Math.round(seconds * 1000);
        break;
      }
      case "--decimals": {
        const v = value();
        if (v === "full") options.decimals = null;
        else if (/^\d+$/.test(v) && Number(v) <= 15) options.decimals = Number(v);
        else throw new UsageError(`--decimals expects 0 to 15 or "full", got "${v}"`);
        break;
      }
      case "--quota":
        options.quota = flag.integer(0);
        break;
      case "--v2-long-poll": {
        const seconds = flag.integer(0);
        if (seconds > 290) throw new UsageError(`--v2-long-poll expects 0 to 290 seconds (the official client drops a GET after 300 s), got ${seconds}`);
        options.v2LongPollMs = seconds * 1000;
        break;
      }
      case "--retention": {
        const v = value();
        const hours = Number(v);
        if (!/^\d+(\.\d+)?$/.test(v) || !(hours > 0) || hours > 24 * 365 * 100) throw new UsageError(`--retention expects hours > 0, got "${v}"`);
        options.retentionMs = Math.max(1, Math.round(hours * 3600_000));
        break;
      }
      case "--result-memory":
        options.maxResultMemoryBytes = flag.integer(0) * 1024 * 1024;
        break;
      case "--quiet":
        quiet = true;
        break;
      case "--experiment-rows-per-task":
        options.experimentRowsPerTask = flag.integer(1);
        if (options.experimentRowsPerTask > 10_000)
          throw new UsageError(`--experiment-rows-per-task expects 1 to 10,000, got ${options.experimentRowsPerTask}`);
        break;
      default: {
        const limit = LIMIT_OF_FLAG.get(name);
        if (limit !== undefined) {
          options.limits = { ...options.limits, [limit]: flag.integer(1) };
          break;
        }
        throw new UsageError(`unexpected argument "${arg}"\n\n${SERVE_USAGE}`);
      }
    }
  }
  if (options.database === undefined && process.env.RBP_DATABASE_URL && options.dataDir === undefined) options.database = process.env.RBP_DATABASE_URL;
  if (options.database !== undefined) {
    if (!/^postgres(ql)?:\/\//.test(options.database)) throw new UsageError(`--database expects a postgres:// URL\n\n${SERVE_USAGE}`);
    if (options.dataDir !== undefined) throw new UsageError("--database and --data-dir: choose one store");
  } else if (options.workers === 0) throw new UsageError("--workers 0 needs --database (someone else must run the jobs)");
  if (options.migrate === true && options.database === undefined) throw new UsageError("--migrate needs --database");
  return { options, quiet };
}

export interface ServeIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

/** Starts the service and resolves once it has stopped after SIGINT or SIGTERM. */
/** The codes of start-up errors the operator fixes by hand, shown as usage errors (no stack). */
const OPERATOR_CODES: ReadonlySet<string> = new Set(["credentials_invalid", "store_damaged", "schema_mismatch"]);

export async function serve(args: ServeArgs, io: ServeIo): Promise<void> {
  const log = args.quiet ? undefined : (line: string) => io.stderr(`rbp serve: ${line}\n`);
  let service: Awaited<ReturnType<typeof startLocalService>>;
  try {
    service = await startLocalService({ ...args.options, log });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") throw new UsageError(`port ${args.options.port} is in use; choose another with --port (0 picks a free one)`);
    if (code === "EACCES") throw new UsageError(`not allowed to listen on ${args.options.host ?? "127.0.0.1"}:${args.options.port}`);
    // What the operator can fix: the credentials file, a damaged data directory, an unmigrated schema.
    if (error instanceof RbpBaseError && OPERATOR_CODES.has(error.code)) throw new UsageError(error.message);
    throw error;
  }
  const { url, credentials } = service;
  const lines = [
    `rbp serve: listening on ${url}`,
    `  version 3 API: ${url}/v3 (also ${url}/v3/prediction-engine)`,
    `  version 2 API: ${url}/v2/prediction-engine`,
  ];
  // What a notebook or script needs to reach this service through connect() (the hosted path).
  lines.push(`  for a notebook or script (connect() then uses this service):`, `export RBP_BASE_URL=${url}`);
  if (credentials.source === "file") {
    lines.push(`  credentials: from ${args.options.credentialsFile} (x-api-key per organisation, access_id per user)`);
  } else {
    const origin = {
      generated: "generated for this service; set CSA_API_KEY and CSA_ACCESS_ID to choose your own",
      env: "from CSA_API_KEY and CSA_ACCESS_ID",
      option: "as given",
      "data-dir": `kept in ${args.options.dataDir}`,
    }[credentials.source];
    lines.push(`  credentials (${origin}): send x-api-key and access_id as below`);
    lines.push(`export CSA_API_KEY=${credentials.apiKey}`, `export CSA_ACCESS_ID=${credentials.accessId}`);
  }
  lines.push("Press Ctrl+C to stop.");
  io.stdout(lines.join("\n") + "\n");

  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      io.stderr(`rbp serve: ${signal}, stopping\n`);
      service.close().then(resolve, (error: unknown) => {
        io.stderr(`rbp serve: while stopping: ${error instanceof Error ? error.message : String(error)}\n`);
        resolve();
      });
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
}
