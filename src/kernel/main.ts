#!/usr/bin/env node
/**
 * Entry point of the rbp kernel, as a kernelspec starts it:
 *
 *     node <package>/dist/kernel/main.js --config-path {connection_file} [--history <file>]
 *
 * (`rbp kernel install --kind rbp` writes that kernelspec.) `--history <file>` (or the environment's
 * `RBP_KERNEL_HISTORY`) keeps the input history across sessions in a JSON-lines file.
 */
import { createExecutor } from "./execute.js";
import { startKernel } from "./kernel.js";

const USAGE = "usage: node dist/kernel/main.js --config-path <connection file> [--history <file>]";

/** The value of `--name <v>` or `--name=<v>`. */
function option(args: string[], name: string): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === name) return args[i + 1];
    if (a.startsWith(`${name}=`)) return a.slice(name.length + 1);
  }
  return undefined;
}

const args = process.argv.slice(2);
const path = option(args, "--config-path") ?? (args.length === 1 && !args[0].startsWith("-") ? args[0] : undefined);
if (path === undefined || path === "") {
  process.stderr.write(`rbp kernel: no connection file (Jupyter passes it)\n${USAGE}\n`);
  process.exitCode = 2;
} else {
  const historyFile = option(args, "--history") ?? (process.env.RBP_KERNEL_HISTORY || undefined);
  const executor = createExecutor({ cwd: process.cwd() });
  // The compiler loads in the background once the first kernel_info is answered (and, should a
  // cell come first, when that cell needs it).
  const ready = () => setImmediate(() => void executor.warm());
  startKernel(path, { executor, historyFile, ready }).catch((error: unknown) => {
    process.stderr.write(`rbp kernel: ${(error as Error).message}\n`);
    process.exit(1);
  });
}
