/**
 * `npm run bench:kernel`: three Jupyter kernels for TypeScript side by side, in one run, over the
 * wire protocol (test/kernel/wire-client.ts, ZeroMQ on loopback):
 *
 * - rbp: the rbp kernel (`rbp kernel install --kind rbp`: node dist/kernel/main.js; build first);
 * - tslab: plain tslab 1.0.22 (`rbp kernel install`: node tslab/bin/tslab kernel);
 * - deno: Deno's kernel (`deno jupyter --kernel`, from .tools/deno: bash scripts/install-deno.sh,
 *   or RBP_DENO=/path/to/deno).
 *
 * For each, printed:
 * 1. start: from spawning the process to its first kernel_info_reply (the first idle), median of
 *    `--starts` starts (default 5);
 * 2. first cell: the first `1 + 1` after start (a kernel that loads its compiler lazily pays here);
 * 3. trivial cell: `1 + 1` run again and again, execute_request to its idle status, median (and
 *    p90) of `--cells` runs (default 50) after 5 warm-up runs (the rbp kernel keeps the check and
 *    compilation of a cell run again with the same code); then distinct trivial cells (`<i> + 2`,
 *    each new), median of as many, which the rbp kernel type-checks each;
 * 4. completion: complete_request on `Math.ma` to its reply, the first one and the median of
 *    `--completions` (default 20);
 * and the ratios of each figure to Deno's (lower is faster). Kernels run one at a time; the
 * machine's load shows in the figures, so compare within one run.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { KernelClient } from "../test/kernel/wire-client.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const OUT = join(ROOT, "test-output", "bench-kernel");

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const v = i >= 0 ? Number(process.argv[i + 1]) : NaN;
  return Number.isFinite(v) && v > 0 ? Math.floor(v) : fallback;
}

const STARTS = flag("--starts", 5);
const CELLS = flag("--cells", 50);
const COMPLETIONS = flag("--completions", 20);

interface Kernel {
  name: string;
  argv: string[];
  version: string;
}

function kernels(): { found: Kernel[]; missing: string[] } {
  const found: Kernel[] = [];
  const missing: string[] = [];
  const main = join(ROOT, "dist", "kernel", "main.js");
  if (existsSync(main))
    found.push({ name: "rbp", argv: [process.execPath, main, "--config-path", "{connection_file}"], version: `TypeScript ${pkg("typescript")}` });
  else missing.push(`rbp: ${main} is not built (npm run build)`);
  const tslab = join(dirname(createRequire(import.meta.url).resolve("tslab/package.json")), "bin", "tslab");
  found.push({ name: "tslab", argv: [process.execPath, tslab, "kernel", "--config-path", "{connection_file}"], version: `tslab ${pkg("tslab")}` });
  const deno = process.env.RBP_DENO ?? join(ROOT, ".tools", "deno", "node_modules", "deno", "deno");
  if (existsSync(deno)) {
    const v = spawnSync(deno, ["--version"], { encoding: "utf8" }).stdout.split("\n")[0] ?? "deno";
    found.push({ name: "deno", argv: [deno, "jupyter", "--kernel", "--conn", "{connection_file}"], version: v.trim() });
  } else missing.push(`deno: no ${deno} (bash scripts/install-deno.sh, or RBP_DENO)`);
  return { found, missing };
}

function pkg(name: string): string {
  const file = createRequire(import.meta.url).resolve(`${name}/package.json`);
  return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
}

const median = (xs: number[]) => quantile(xs, 0.5);
function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  return s[lo] + (s[Math.ceil(at)] - s[lo]) * (at - lo);
}

interface Figures {
  start: number;
  firstCell: number;
  cell: number;
  cellP90: number;
  newCell: number;
  firstCompletion: number;
  completion: number;
  matches: number;
}

async function start(k: Kernel): Promise<KernelClient> {
  const cwd = join(OUT, "cwd");
  mkdirSync(cwd, { recursive: true });
  const env = { ...process.env };
  for (const v of ["RBP_BASE_URL", "CSA_BASE_URL", "CSA_API_KEY", "CSA_ACCESS_ID"]) delete env[v];
  return KernelClient.start({ argv: k.argv, dir: join(OUT, "runtime"), cwd, env, timeoutMs: 120_000 });
}

async function timed<T>(f: () => Promise<T>): Promise<[number, T]> {
  const t = performance.now();
  const r = await f();
  return [performance.now() - t, r];
}

async function measure(k: Kernel): Promise<Figures> {
  const starts: number[] = [];
  for (let i = 0; i < STARTS - 1; i++) {
    const c = await start(k);
    starts.push(c.firstReplyAt - c.startedAt);
    await c.close();
  }
  const c = await start(k);
  starts.push(c.firstReplyAt - c.startedAt);
  try {
    const [firstCell, first] = await timed(() => c.execute("1 + 1"));
    if (first.reply.status !== "ok") throw new Error(`${k.name}: 1 + 1 failed: ${JSON.stringify(first.reply)}`);
    for (let i = 0; i < 5; i++) await c.execute("1 + 1");
    const cells: number[] = [];
    for (let i = 0; i < CELLS; i++) cells.push((await timed(() => c.execute("1 + 1")))[0]);
    const fresh: number[] = [];
    for (let i = 0; i < CELLS; i++) fresh.push((await timed(() => c.execute(`${i} + 2`)))[0]);
    const complete = () => c.request("complete_request", { code: "Math.ma", cursor_pos: 7 });
    const [firstCompletion, fc] = await timed(complete);
    const completions: number[] = [];
    for (let i = 0; i < COMPLETIONS; i++) completions.push((await timed(complete))[0]);
    return {
      start: median(starts),
      firstCell,
      cell: median(cells),
      cellP90: quantile(cells, 0.9),
      newCell: median(fresh),
      firstCompletion,
      completion: median(completions),
      matches: (fc.reply.content.matches as string[]).length,
    };
  } finally {
    await c.close();
  }
}

const ms = (v: number) => (v >= 100 ? `${v.toFixed(0)} ms` : `${v.toFixed(1)} ms`);

async function main(): Promise<void> {
  const { found, missing } = kernels();
  for (const m of missing) console.log(`skipped ${m}`);
  console.log(`bench:kernel: ${STARTS} starts, ${CELLS} trivial cells, ${COMPLETIONS} completions per kernel (node ${process.version})`);
  const results = new Map<string, Figures>();
  for (const k of found) {
    process.stdout.write(`  ${k.name} (${k.version}) ... `);
    const f = await measure(k);
    results.set(k.name, f);
    console.log("done");
  }
  const deno = results.get("deno");
  const rows: Array<[string, (f: Figures) => number]> = [
    ["start to first idle (median)", (f) => f.start],
    ["first cell after start", (f) => f.firstCell],
    ["same trivial cell (median)", (f) => f.cell],
    ["same trivial cell (p90)", (f) => f.cellP90],
    ["new trivial cell (median)", (f) => f.newCell],
    ["first completion", (f) => f.firstCompletion],
    ["completion (median)", (f) => f.completion],
  ];
  const names = [...results.keys()];
  const width = 30;
  console.log(
    `\n${"".padEnd(width)}${names.map((n) => n.padStart(12)).join("")}${
      deno !== undefined
        ? names
            .filter((n) => n !== "deno")
            .map((n) => `${n}/deno`.padStart(12))
            .join("")
        : ""
    }`,
  );
  for (const [label, get] of rows) {
    const values = names.map((n) => ms(get(results.get(n)!)).padStart(12)).join("");
    const ratios =
      deno !== undefined
        ? names
            .filter((n) => n !== "deno")
            .map((n) => `${(get(results.get(n)!) / get(deno)).toFixed(2)}x`.padStart(12))
            .join("")
        : "";
    console.log(`${label.padEnd(width)}${values}${ratios}`);
  }
  console.log(`${"completion matches".padEnd(width)}${names.map((n) => String(results.get(n)!.matches).padStart(12)).join("")}`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
