/**
 * `rbp serve`: runs the local prediction service until SIGINT or SIGTERM. Prints the URL and the
 * credentials to use (as `export CSA_API_KEY=...` lines a shell or a notebook can take as is).
 */
import { startLocalService, type LocalServiceOptions } from "../service/index.js";
import { DamagedStoreError } from "../service/store.js";
import { UsageError } from "./predict.js";

export const DEFAULT_PORT = 8765;

export const SERVE_USAGE = `Usage: rbp serve [--port N] [--host H] [--credentials FILE] [--data-dir DIR] [--workers N]
                 [--timeout SECONDS] [--decimals N|full] [--quota N] [--retention HOURS]
                 [--result-memory MIB] [--quiet]

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
  --retention HOURS   finished jobs and their results are removed this long after they
                      finish; their ids then answer 410 (default 168 = 7 days)
  --result-memory MIB without --data-dir: results kept in memory, least recently used out
                      first (410 once out; default 256). With --data-dir results are on disk
  --quiet             no request log on stderr`;

export interface ServeArgs {
  options: LocalServiceOptions;
  quiet: boolean;
}

export function parseServeArgs(args: string[]): ServeArgs {
  const options: LocalServiceOptions = { port: DEFAULT_PORT };
  let quiet = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const [name, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const value = () => {
      const v = inline ?? args[++i];
      if (v === undefined || v === "") throw new UsageError(`${name} needs a value\n\n${SERVE_USAGE}`);
      return v;
    };
    const integer = (min: number) => {
      const v = value();
      if (!/^\d+$/.test(v) || Number(v) < min) throw new UsageError(`${name} expects an integer >= ${min}, got "${v}"`);
      return Number(v);
    };
    switch (name) {
      case "--port":
        options.port = integer(0);
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
        options.workers = integer(1);
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
        options.quota = integer(0);
        break;
      case "--retention": {
        const v = value();
        const hours = Number(v);
        if (!/^\d+(\.\d+)?$/.test(v) || !(hours > 0) || hours > 24 * 365 * 100) throw new UsageError(`--retention expects hours > 0, got "${v}"`);
        options.retentionMs = Math.max(1, Math.round(hours * 3600_000));
        break;
      }
      case "--result-memory":
        options.maxResultMemoryBytes = integer(0) * 1024 * 1024;
        break;
      case "--quiet":
        quiet = true;
        break;
      default:
        throw new UsageError(`unexpected argument "${arg}"\n\n${SERVE_USAGE}`);
    }
  }
  return { options, quiet };
}

export interface ServeIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
}

/** Starts the service and resolves once it has stopped after SIGINT or SIGTERM. */
export async function serve(args: ServeArgs, io: ServeIo): Promise<void> {
  const log = args.quiet ? undefined : (line: string) => io.stderr(`rbp serve: ${line}\n`);
  let service: Awaited<ReturnType<typeof startLocalService>>;
  try {
    service = await startLocalService({ ...args.options, log });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "EADDRINUSE") throw new UsageError(`port ${args.options.port} is in use; choose another with --port (0 picks a free one)`);
    if (code === "EACCES") throw new UsageError(`not allowed to listen on ${args.options.host ?? "127.0.0.1"}:${args.options.port}`);
    if (error instanceof Error && error.message.startsWith("credentials file")) throw new UsageError(error.message);
    if (error instanceof DamagedStoreError) throw new UsageError(error.message);
    throw error;
  }
  const { url, credentials } = service;
  const lines = [
    `rbp serve: listening on ${url}`,
    `  version 3 API: ${url}/v3 (also ${url}/v3/prediction-engine)`,
    `  version 2 API: ${url}/v2/prediction-engine`,
  ];
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
