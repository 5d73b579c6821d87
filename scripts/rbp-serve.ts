/**
 * `rbp serve` as its own process, from the sources through tsx: how the service tests and
 * `npm run bench:service` start it. Resolves once the banner is printed, with the address and
 * the credentials it printed; rejects when the process exits first.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const RBP = fileURLToPath(new URL("../src/cli/rbp.ts", import.meta.url));

export interface ServeProcess {
  child: ChildProcess;
  /** stdout up to the banner's last line ("Press Ctrl+C to stop."). */
  stdout: string;
  /** stderr so far (the request log). */
  stderr(): string;
  url: string;
  /** The printed credentials; undefined when they come from a credentials file. */
  apiKey: string | undefined;
  accessId: string | undefined;
}

export interface SpawnSettings {
  /** Run under `ulimit -n N` (through bash): at most N open files in the process. */
  maxOpenFiles?: number;
}

/** Starts `rbp serve <args>` without the caller's CSA_API_KEY and CSA_ACCESS_ID, plus `env`. */
export function spawnServe(args: string[], env: NodeJS.ProcessEnv = {}, settings: SpawnSettings = {}): Promise<ServeProcess> {
  const { CSA_API_KEY: _key, CSA_ACCESS_ID: _accessId, ...inherited } = process.env;
  const command = [process.execPath, "--import", "tsx", RBP, "serve", ...args];
  const limit = settings.maxOpenFiles;
  const [file, ...argv] = limit === undefined ? command : ["bash", "-c", `ulimit -n ${Math.floor(limit)} && exec "$@"`, "rbp-serve", ...command];
  const child = spawn(file, argv, {
    cwd: ROOT,
    env: { ...inherited, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stderr!.on("data", (c) => (stderr += c));
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (c) => {
      stdout += c;
      if (!stdout.includes("Ctrl+C")) return;
      resolve({
        child,
        stdout,
        stderr: () => stderr,
        url: /listening on (\S+)/.exec(stdout)![1],
        apiKey: /^export CSA_API_KEY=(\S+)$/m.exec(stdout)?.[1],
        accessId: /^export CSA_ACCESS_ID=(\S+)$/m.exec(stdout)?.[1],
      });
    });
    child.on("exit", (code, signal) => reject(new Error(`rbp serve exited (${code ?? signal}): ${stderr}`)));
  });
}
