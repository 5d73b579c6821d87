/**
 * A real, throw-away PostgreSQL server for the PostgreSQL store's suites: Debian's `postgresql`
 * package (scripts/install-postgres.sh), `initdb` into a fresh temporary directory, `pg_ctl start`
 * on a free loopback port with its socket in that directory, and `stop()` removing it all. The
 * server refuses to run as root, so when the tests run as root the server runs as the `postgres`
 * system user (runuser). No mock of the database anywhere: every PostgreSQL test talks to this.
 *
 * @example
 * const pg = await startPostgres();
 * // ... new pg.Client({ connectionString: pg.url }) ...
 * await pg.restart();   // stop (fast) and start again on the same port and data
 * await pg.stop();
 */
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface PostgresServer {
  /** postgres://rbp@127.0.0.1:PORT/rbp */
  url: string;
  port: number;
  dir: string;
  /** Stops the server (`mode`: fast = disconnect clients cleanly, immediate = like a crash) and starts it again. */
  restart(mode?: "fast" | "immediate", downMs?: number): Promise<void>;
  /** Stops the server (`mode` as for restart), keeping its data; `start()` starts it again. */
  halt(mode?: "fast" | "immediate"): Promise<void>;
  /** Starts a halted server again, on the same port and data. */
  start(): Promise<void>;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** Where Debian puts the server binaries (the newest version when several are installed); PG_BIN overrides. */
export function postgresBin(): string | undefined {
  if (process.env.PG_BIN) return process.env.PG_BIN;
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? join(root, versions[0], "bin") : undefined;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

export async function startPostgres(): Promise<PostgresServer> {
  const bin = postgresBin();
  if (!bin) throw new Error("PostgreSQL server not installed: run `bash scripts/install-postgres.sh` (Debian package postgresql)");
  const asRoot = userInfo().uid === 0;
  // The server refuses root: run it as Debian's postgres system user.
  const sys = asRoot
    ? await run("id", ["-u", "postgres"]).then(async (u) => ({ uid: Number(u.stdout), gid: Number((await run("id", ["-g", "postgres"])).stdout) }))
    : undefined;
  const as = (cmd: string, args: string[]) => (asRoot ? run("runuser", ["-u", "postgres", "--", cmd, ...args]) : run(cmd, args));

  const dir = mkdtempSync(join(tmpdir(), "rbp-pg-"));
  chmodSync(dir, 0o700);
  if (sys) chownSync(dir, sys.uid, sys.gid);
  const data = join(dir, "data");
  const port = await freePort();
  const pwfile = join(dir, "pw");
  writeFileSync(pwfile, "rbp\n");
  if (sys) chownSync(pwfile, sys.uid, sys.gid);
  await as(join(bin, "initdb"), ["-D", data, "-U", "rbp", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-instructions"]);
  // Tests only: no fsync (the OS is not crashing here), small footprint, loopback and our own socket dir.
  writeFileSync(
    join(data, "postgresql.auto.conf"),
    [
      `port = ${port}`,
      `listen_addresses = '127.0.0.1'`,
      `unix_socket_directories = '${dir}'`,
      "fsync = off",
      "full_page_writes = off",
      "shared_buffers = 32MB",
      "max_connections = 100",
      "log_min_messages = warning",
      "",
    ].join("\n"),
  );
  if (sys) chownSync(join(data, "postgresql.auto.conf"), sys.uid, sys.gid);
  const log = join(dir, "server.log");
  const start = () => as(join(bin, "pg_ctl"), ["-D", data, "-l", log, "-w", "-t", "60", "start"]);
  const stopServer = (mode: string) => as(join(bin, "pg_ctl"), ["-D", data, "-m", mode, "-w", "-t", "60", "stop"]);
  await start();
  await as(join(bin, "createdb"), ["-h", "127.0.0.1", "-p", String(port), "-U", "rbp", "rbp"]);
  let stopped = false;
  return {
    url: `postgres://rbp@127.0.0.1:${port}/rbp`,
    port,
    dir,
    async restart(mode = "fast", downMs = 0) {
      await stopServer(mode);
      if (downMs > 0) await new Promise((r) => setTimeout(r, downMs));
      await start();
    },
    async halt(mode = "fast") {
      await stopServer(mode);
    },
    async start() {
      await start();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopServer("fast").catch(() => stopServer("immediate").catch(() => undefined));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Worker processes

const RBP = fileURLToPath(new URL("../src/cli/rbp.ts", import.meta.url));
const ROOT = fileURLToPath(new URL("..", import.meta.url));

export interface WorkerProcess {
  child: ChildProcess;
  /** The lease owner name it printed (host:pid:random). */
  owner: string;
  stderr(): string;
  /** SIGTERM and wait for the exit. */
  stop(): Promise<void>;
}

/** Starts `rbp worker --database url <args>` as its own process; resolves once it is running. */
export function spawnWorker(url: string, args: string[] = []): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", RBP, "worker", "--database", url, ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr!.on("data", (c) => (stderr += c));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (c) => {
      stdout += c;
      const owner = /rbp worker (\S+) running/.exec(stdout)?.[1];
      if (owner === undefined) return;
      resolve({
        child,
        owner,
        stderr: () => stderr,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
          await exited;
        },
      });
    });
    child.once("exit", (code, signal) => reject(new Error(`rbp worker exited (${code ?? signal}): ${stderr}`)));
  });
}
