/**
 * `rbp kernel install`: registers a Jupyter kernel that runs this package's notebooks, for the
 * user's own Jupyter (JupyterLab, the classic Notebook, VS Code, nbconvert).
 *
 * The kernelspec is written directly (a `kernel.json` in `<dir>/kernels/<name>/`), so neither
 * IPython nor Python's jupyter_client is needed: tslab's own `tslab install` needs IPython. The
 * kernel's command line uses absolute paths (this Node and the tslab this package depends on), so
 * the kernel starts whatever PATH Jupyter was launched with.
 *
 * Kinds: `tslab` (the default) is tslab's TypeScript kernel; `rbp` is the rbp kernel (src/kernel:
 * the project's own TypeScript kernel, with the project's TypeScript, magics and rich display of a
 * cell's last value), registered as "TypeScript (rbp)" under the name `rbp`, with
 * `interrupt_mode: "signal"` (Jupyter sends SIGINT, which also stops a cell's synchronous busy
 * loop; an interrupt_request on the control channel is answered too). The table KERNEL_KINDS is
 * where other kinds go.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { UsageError } from "./predict.js";

export const DEFAULT_KERNEL_NAME = "rbp-tslab";

export const KERNEL_USAGE = `Usage: rbp kernel install [--kind tslab|rbp] [--name NAME] [--display-name TEXT]
                          [--user | --prefix DIR | --jupyter-path DIR]

Registers a Jupyter kernel for TypeScript notebooks that use rbp-notebook; then choose
"TypeScript (tslab)" in JupyterLab, or run: jupyter nbconvert --execute --to notebook NOTEBOOK.
No IPython is needed: the kernelspec (kernel.json) is written directly.
  --kind tslab          the kernel to register (default tslab: the tslab that rbp-notebook depends on)
  --kind rbp            the rbp kernel: rbp-notebook's own TypeScript kernel (TypeScript 5.9, cells
                        as one module, %magics such as %%grid, %rbp, %time, rich display of a
                        cell's last value); name rbp, shown as "TypeScript (rbp)"
  --name NAME           kernelspec name (default ${DEFAULT_KERNEL_NAME}, or rbp for --kind rbp);
                        letters, digits, ".", "_", "-"
  --display-name TEXT   the name Jupyter shows (default "TypeScript (tslab)" or "TypeScript (rbp)")
  --user                the user's Jupyter data directory (the default): "jupyter --data-dir",
                        else JUPYTER_DATA_DIR, else the platform's (~/.local/share/jupyter on Linux)
  --prefix DIR          DIR/share/jupyter/kernels/NAME (an environment's prefix)
  --jupyter-path DIR    DIR/kernels/NAME (a directory listed in JUPYTER_PATH)`;

/** A Jupyter kernelspec (kernel.json). */
export interface KernelSpec {
  argv: string[];
  display_name: string;
  language: string;
  interrupt_mode?: "signal" | "message";
  env?: Record<string, string>;
  metadata?: Record<string, unknown>;
}

export interface KernelKind {
  /** What the kind is, for messages. */
  describe: string;
  defaultDisplayName: string;
  /** The kernelspec name when --name is not given (default DEFAULT_KERNEL_NAME). */
  defaultName?: string;
  spec(displayName: string): KernelSpec;
}

/** The package.json of a dependency, resolved from this package (not from the working directory). */
function dependencyRoot(name: string): string {
  const require = createRequire(import.meta.url);
  try {
    return dirname(require.resolve(`${name}/package.json`));
  } catch {
    throw new UsageError(`${name} is not installed beside rbp-notebook; run npm install in the project that has rbp-notebook`);
  }
}

function packageVersion(root: string): string {
  return (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string }).version;
}

export const KERNEL_KINDS: Record<string, KernelKind> = {
  tslab: {
    describe: "tslab's TypeScript kernel",
    defaultDisplayName: "TypeScript (tslab)",
    spec(displayName) {
      const root = dependencyRoot("tslab");
      const bin = join(root, "bin", "tslab");
      if (!existsSync(bin)) throw new UsageError(`tslab has no launcher at ${bin}; reinstall it (npm install)`);
      // Loaded first: a kernel that cannot bind its ports exits instead of hanging (tslab-guard.ts).
      const guard = new URL("./tslab-guard.js", import.meta.url);
      if (!existsSync(guard)) throw new UsageError(`rbp-notebook is not built (no ${fileURLToPath(guard)}); run npm run build`);
      return {
        // config-path and {connection_file} are separate arguments (tslab issue #36).
        argv: [process.execPath, "--import", guard.href, bin, "kernel", "--config-path", "{connection_file}"],
        display_name: displayName,
        language: "typescript",
        interrupt_mode: "signal",
        metadata: { rbp_notebook: { kind: "tslab", tslab: packageVersion(root) } },
      };
    },
  },
  rbp: {
    describe: "the rbp kernel: rbp-notebook's own TypeScript kernel with magics",
    defaultDisplayName: "TypeScript (rbp)",
    defaultName: "rbp",
    spec(displayName) {
      const root = dependencyRoot("typescript");
      // dist/kernel/main.js beside this file's dist/cli/.
      const main = fileURLToPath(new URL("../kernel/main.js", import.meta.url));
      if (!existsSync(main)) throw new UsageError(`the rbp kernel is not built (no ${main}); run npm run build`);
      return {
        argv: [process.execPath, main, "--config-path", "{connection_file}"],
        display_name: displayName,
        language: "typescript",
        interrupt_mode: "signal",
        metadata: { rbp_notebook: { kind: "rbp", typescript: packageVersion(root) } },
      };
    },
  },
};

export type KernelLocation = { kind: "user" } | { kind: "prefix"; dir: string } | { kind: "jupyter-path"; dir: string };

export interface KernelInstallArgs {
  kind: string;
  name: string;
  displayName?: string;
  location: KernelLocation;
}

export function parseKernelArgs(args: string[]): KernelInstallArgs {
  const [sub, ...rest] = args;
  if (sub === undefined) throw new UsageError(`which kernel command? expected "install"\n\n${KERNEL_USAGE}`);
  if (sub !== "install") throw new UsageError(`unknown kernel command "${sub}"; expected "install"\n\n${KERNEL_USAGE}`);
  const out: KernelInstallArgs = { kind: "tslab", name: DEFAULT_KERNEL_NAME, location: { kind: "user" } };
  const chosen: string[] = [];
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i];
    const [name, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const value = () => {
      const v = inline ?? rest[++i];
      if (v === undefined || v === "") throw new UsageError(`${name} needs a value\n\n${KERNEL_USAGE}`);
      return v;
    };
    switch (name) {
      case "--kind": {
        const v = value();
        if (!Object.hasOwn(KERNEL_KINDS, v)) throw new UsageError(`unknown kernel kind "${v}"; expected one of ${Object.keys(KERNEL_KINDS).join(", ")}`);
        out.kind = v;
        break;
      }
      case "--name": {
        const v = value();
        // Jupyter's rule for kernelspec names (jupyter_client.kernelspec._is_valid_kernel_name).
        if (!/^[a-z0-9._-]+$/i.test(v)) throw new UsageError(`--name "${v}": a kernel name has only letters, digits, ".", "_" and "-"`);
        out.name = v.toLowerCase();
        break;
      }
      case "--display-name":
        out.displayName = value();
        break;
      case "--user":
        if (inline !== undefined) throw new UsageError(`--user takes no value`);
        chosen.push(name);
        out.location = { kind: "user" };
        break;
      case "--prefix":
        chosen.push(name);
        out.location = { kind: "prefix", dir: resolve(value()) };
        break;
      case "--jupyter-path":
        chosen.push(name);
        out.location = { kind: "jupyter-path", dir: resolve(value()) };
        break;
      default:
        throw new UsageError(`unexpected argument "${arg}"\n\n${KERNEL_USAGE}`);
    }
  }
  if (chosen.length > 1) throw new UsageError(`choose one of ${chosen.join(", ")}`);
  if (!rest.some((a) => a === "--name" || a.startsWith("--name="))) out.name = KERNEL_KINDS[out.kind].defaultName ?? DEFAULT_KERNEL_NAME;
  return out;
}

/** The user's Jupyter data directory: what `jupyter --data-dir` says, else jupyter_core's rule. */
export function userDataDir(env: NodeJS.ProcessEnv = process.env): { dir: string; from: string } {
  const run = spawnSync("jupyter", ["--data-dir"], { encoding: "utf8", timeout: 15_000, env });
  const line = run.status === 0 ? run.stdout.trim().split(/\r?\n/).pop() : undefined;
  if (line) return { dir: line, from: "jupyter --data-dir" };
  if (env.JUPYTER_DATA_DIR) return { dir: resolve(env.JUPYTER_DATA_DIR), from: "JUPYTER_DATA_DIR" };
  const home = homedir();
  if (process.platform === "darwin") return { dir: join(home, "Library", "Jupyter"), from: "the macOS default" };
  if (process.platform === "win32") return { dir: join(env.APPDATA ?? join(home, "AppData", "Roaming"), "jupyter"), from: "the Windows default" };
  const xdg = env.XDG_DATA_HOME ? resolve(env.XDG_DATA_HOME) : join(home, ".local", "share");
  return { dir: join(xdg, "jupyter"), from: env.XDG_DATA_HOME ? "XDG_DATA_HOME" : "the Linux default" };
}

/** The directory `kernels/` sits in, for a location. */
export function kernelsRoot(location: KernelLocation, env: NodeJS.ProcessEnv = process.env): { dir: string; from: string } {
  if (location.kind === "prefix") return { dir: join(location.dir, "share", "jupyter"), from: "--prefix" };
  if (location.kind === "jupyter-path") return { dir: location.dir, from: "--jupyter-path" };
  return userDataDir(env);
}

export interface KernelInstallResult {
  /** The kernelspec directory (holds kernel.json). */
  dir: string;
  file: string;
  spec: KernelSpec;
  replaced: boolean;
}

/** Writes the kernelspec; returns where. */
export function installKernel(args: KernelInstallArgs, env: NodeJS.ProcessEnv = process.env): KernelInstallResult & { from: string } {
  const kind = KERNEL_KINDS[args.kind];
  if (kind === undefined) throw new UsageError(`unknown kernel kind "${args.kind}"`);
  const spec = kind.spec(args.displayName ?? kind.defaultDisplayName);
  const root = kernelsRoot(args.location, env);
  const dir = join(root.dir, "kernels", args.name);
  const file = join(dir, "kernel.json");
  const replaced = existsSync(file);
  mkdirSync(dir, { recursive: true });
  writeFileSync(file, JSON.stringify(spec, null, 2) + "\n");
  return { dir, file, spec, replaced, from: root.from };
}

export function kernelCommand(args: KernelInstallArgs, io: { stdout: (s: string) => void }): void {
  const r = installKernel(args);
  const lines = [
    `rbp kernel: ${r.replaced ? "replaced" : "installed"} kernelspec "${args.name}" (${KERNEL_KINDS[args.kind].describe}) in ${r.dir}`,
    `  directory from ${r.from}`,
    `  starts: ${r.spec.argv.join(" ")}`,
    `  shown as "${r.spec.display_name}"; language ${r.spec.language}`,
  ];
  if (args.location.kind === "jupyter-path") lines.push(`  Jupyter finds it with JUPYTER_PATH=${args.location.dir}`);
  lines.push(`  The kernel runs this Node (${process.execPath}); run the command again after moving or upgrading Node.`);
  io.stdout(lines.join("\n") + "\n");
}
