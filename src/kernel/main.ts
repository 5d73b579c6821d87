#!/usr/bin/env node
/**
 * Entry point of the rbp kernel, as a kernelspec starts it:
 *
 *     node <package>/dist/kernel/main.js --config-path {connection_file}
 *
 * (`rbp kernel install --kind rbp` writes that kernelspec.)
 */
import { startKernel } from "./kernel.js";

const USAGE = "usage: node dist/kernel/main.js --config-path <connection file>";

function configPath(args: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === "--config-path") return args[i + 1];
    if (a.startsWith("--config-path=")) return a.slice("--config-path=".length);
  }
  return args.length === 1 && !args[0].startsWith("-") ? args[0] : undefined;
}

const path = configPath(process.argv.slice(2));
if (path === undefined || path === "") {
  process.stderr.write(`rbp kernel: no connection file (Jupyter passes it)\n${USAGE}\n`);
  process.exitCode = 2;
} else {
  try {
    startKernel(path);
  } catch (error) {
    process.stderr.write(`rbp kernel: ${(error as Error).message}\n`);
    process.exitCode = 1;
  }
}
