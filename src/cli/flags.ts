/**
 * The command line of `rbp serve` and `rbp worker`: flags in order, `--name value` or
 * `--name=value`, with readers for their values that refuse a bad one with a UsageError naming
 * the flag (and, for a missing value, the command's usage).
 */
import { UsageError } from "./predict.js";

/** One argument as a flag: its name, the argument as given, and readers for its value. */
export interface Flag {
  /** `--port` for `--port 80` and `--port=80`; the argument itself when it is no flag. */
  name: string;
  arg: string;
  /** The flag's value (inline after `=`, else the next argument). */
  value(): string;
  /** The value as a whole number >= min. */
  integer(min: number): number;
  /** The value as a decimal number >= min. */
  number(min: number): number;
}

/**
 * The flags of `args`, one at a time; reading a value consumes the next argument.
 *
 * @example
 * for (const flag of flags(["--port", "8765", "--quiet"], USAGE)) {
 *   if (flag.name === "--port") port = flag.integer(0); // 8765
 * }
 */
export function* flags(args: string[], usage: string): Generator<Flag> {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const inline = eq > 0 ? arg.slice(eq + 1) : undefined;
    const value = (): string => {
      const v = inline ?? args[++i];
      if (v === undefined || v === "") throw new UsageError(`${name} needs a value\n\n${usage}`);
      return v;
    };
    yield {
      name,
      arg,
      value,
      integer(min) {
        const v = value();
        if (!/^\d+$/.test(v) || Number(v) < min) throw new UsageError(`${name} expects an integer >= ${min}, got "${v}"`);
        return Number(v);
      },
      number(min) {
        const v = value();
        if (!/^\d+(\.\d+)?$/.test(v) || Number(v) < min) throw new UsageError(`${name} expects a number >= ${min}, got "${v}"`);
        return Number(v);
      },
    };
  }
}
