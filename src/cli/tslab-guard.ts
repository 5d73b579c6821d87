/**
 * Loaded before plain tslab by the kernelspec `rbp kernel install` writes (`node --import
 * <this file> tslab kernel --config-path <connection file>`): when tslab cannot bind one of the
 * connection file's ports, the kernel process exits instead of living on without sockets.
 *
 * Why: jupyter_client picks five free ports, writes them to the connection file and closes them
 * before the kernel starts, so another process can take one first (Jupyter's port race; a busy
 * machine's outgoing connections use the same ephemeral ports). tslab 1.0.22 binds without
 * handling the failure, and its own `unhandledRejection` handler only logs it: the kernel then
 * never answers, and a front end waits until its start-up timeout ("Kernel didn't respond in 120
 * seconds"). A kernel process that exits is seen at once: Jupyter's restarter starts it again on
 * new ports, and nbclient reports "Kernel died before replying to kernel_info".
 *
 * Only a bind failure on the connection file's own addresses ends the process; anything else a
 * cell leaves unhandled is left to tslab, as before.
 */
import { address, CHANNELS, readConnection } from "../kernel/protocol/connection.js";

/**
 * The addresses a kernel binds for the connection file named after `--config-path` in `argv`
 * (the rbp kernel's own reading of it, kernel/protocol/connection.ts); none when there is no such
 * file or it is not a connection file (the guard then does nothing).
 *
 * @example
 * connectionAddresses(["node", "tslab", "kernel", "--config-path", "/run/kernel-1.json"]); // Set { "tcp://127.0.0.1:50123", ... }
 */
export function connectionAddresses(argv: readonly string[]): Set<string> {
  const at = argv.indexOf("--config-path");
  const path = at >= 0 ? argv[at + 1] : undefined;
  if (path === undefined) return new Set();
  try {
    const info = readConnection(path);
    return new Set(CHANNELS.map((channel) => address(info, channel)));
  } catch {
    return new Set();
  }
}

/**
 * Whether `reason` is the failure to bind one of `addresses` (zeromq's error: code EADDRINUSE and the address).
 *
 * @example
 * isBindFailure({ code: "EADDRINUSE", address: "tcp://127.0.0.1:50123" }, new Set(["tcp://127.0.0.1:50123"])); // true
 */
export function isBindFailure(reason: unknown, addresses: ReadonlySet<string>): boolean {
  if (typeof reason !== "object" || reason === null) return false;
  const { code, address } = reason as { code?: unknown; address?: unknown };
  return code === "EADDRINUSE" && typeof address === "string" && addresses.has(address);
}

const addresses = connectionAddresses(process.argv);
if (addresses.size > 0) {
  process.on("unhandledRejection", (reason) => {
    if (!isBindFailure(reason, addresses)) return;
    const { address } = reason as { address: string };
    process.stderr.write(
      `tslab kernel: cannot bind ${address} (EADDRINUSE: taken by another process since Jupyter chose it); exiting so that Jupyter can start the kernel on new ports\n`,
    );
    process.exit(1);
  });
}
