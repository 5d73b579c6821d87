/**
 * Where jobs, results and quota live. `MemoryPersistence` (the default) keeps results in memory
 * and forgets everything at exit; `DirPersistence` (`--data-dir`) keeps them in a directory so a
 * receipt saved in a notebook stays valid across restarts:
 *
 * ```
 * <dir>/state.json                 counters (next job and experiment ids) and quota used per org
 * <dir>/jobs/<job_id>.json         one job: status, org, code, failure, compact yhat/fit
 * <dir>/experiments/<id>.json      one experiment: its code, org and child job ids
 * <dir>/inputs/<ref>.json          the inputs of unfinished jobs (deleted once all are finished)
 * <dir>/results/<job_id>.json      the `results` JSON of a completed job, exactly as served
 * <dir>/local-credentials.json     generated local credentials (credentials.ts)
 * ```
 *
 * Every write is atomic: a temporary file in the same directory, fsync, rename (then a best-effort
 * fsync of the directory). Writes to one path are applied in order.
 *
 * Restart policy: jobs that were queued or running when the service stopped are queued again
 * from their saved inputs (they were paid for; the receipt stays valid); a job whose inputs are
 * gone fails with "interrupted by a restart".
 */
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Analysis } from "../api/options.js";
import type { Dataset } from "../engine/data.js";
import type { CensorOperator } from "../engine/options.js";

/** Inputs shared by the jobs of one POST (an experiment's rows share X, y and options). */
export interface JobInput {
  analysis: Analysis;
  data: Dataset;
  thetas: Float64Array[];
  /** Canonical engine options as the caller gave them (parseRequest's `options`). */
  options: Record<string, unknown>;
}

export type JobStatus = "queued" | "running" | "completed" | "failed";

export interface JobFailure {
  message: string;
  /**
   * LambdaError code (api-compat.md 2.2): 2 process job (time limit, crash), 3 prediction failed,
   * 5 X could not be loaded (a v2 POST naming an upload that is not there).
   */
  error_code: number;
  /** LambdaStatus of the stage that failed: 10 processing, 1 before processing (payload, X). */
  status_code: number;
}

/** Variants of an analysis a job may run (the v2 `/grid-singularity` endpoints: see singularity.ts). */
export type JobVariant = "grid_singularity";

/** A job as stored (and as kept in memory). */
export interface JobRecord {
  id: number;
  code: string;
  org: string;
  analysis: Analysis;
  status: JobStatus;
  created_at: string;
  started_at?: string;
  finished_at?: string;
  /** Notes from parsing the request (ignored keys ...), shown on the receipt. */
  warnings: string[];
  /** Set when theta was absent and the last row of X was used. */
  theta_source?: "last_row_of_X";
  experiment_id?: number;
  /** Row of theta this job predicts for (0 for a single job). */
  row: number;
  /** Key of the inputs (JobInput) this job reads. */
  input_ref: string;
  failure?: JobFailure;
  /** The censor operator the job runs with (resolved); v2 reports it as `most_eval`. */
  censor_operator?: CensorOperator;
  /** Set when the job runs a variant of its analysis (v2 `/grid-singularity`). */
  variant?: JobVariant;
  /** Compact yhat and fit (rounded like the results), for the experiment view. */
  compact?: { yhat: Array<number | null>; fit: Array<number | null> };
}

export interface ExperimentRecord {
  id: number;
  code: string;
  org: string;
  analysis: Analysis;
  job_ids: number[];
  created_at: string;
}

export interface ServiceState {
  version: 1;
  next_job_id: number;
  next_experiment_id: number;
  quota_used: Record<string, number>;
}

export interface Loaded {
  state: ServiceState | undefined;
  jobs: JobRecord[];
  experiments: ExperimentRecord[];
}

export interface Persistence {
  /** True when things survive a restart. */
  readonly durable: boolean;
  load(): Promise<Loaded>;
  /** Saves the state the getter returns when the write starts; calls made meanwhile share a write. */
  saveState(state: () => ServiceState): Promise<void>;
  saveJob(job: JobRecord): Promise<void>;
  saveExperiment(experiment: ExperimentRecord): Promise<void>;
  saveInput(ref: string, input: JobInput): Promise<void>;
  loadInput(ref: string): Promise<JobInput | undefined>;
  deleteInput(ref: string): Promise<void>;
  saveResult(jobId: number, json: string): Promise<void>;
  loadResult(jobId: number): Promise<string | undefined>;
  /** Waits for every write issued so far. */
  flush(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------

export class MemoryPersistence implements Persistence {
  readonly durable = false;
  private readonly results = new Map<number, string>();

  async load(): Promise<Loaded> {
    return { state: undefined, jobs: [], experiments: [] };
  }
  async saveState(): Promise<void> {}
  async saveJob(): Promise<void> {}
  async saveExperiment(): Promise<void> {}
  async saveInput(): Promise<void> {}
  async loadInput(): Promise<JobInput | undefined> {
    return undefined;
  }
  async deleteInput(): Promise<void> {}
  async saveResult(jobId: number, json: string): Promise<void> {
    this.results.set(jobId, json);
  }
  async loadResult(jobId: number): Promise<string | undefined> {
    return this.results.get(jobId);
  }
  async flush(): Promise<void> {}
}

// ---------------------------------------------------------------------------------------------

export class DirPersistence implements Persistence {
  readonly durable = true;
  private readonly chains = new Map<string, Promise<void>>();
  private stateQueued: Promise<void> | undefined;

  private constructor(readonly dir: string) {}

  /** Creates the directory layout (and removes temporary files a crash left behind). */
  static async open(dir: string): Promise<DirPersistence> {
    for (const sub of ["jobs", "experiments", "inputs", "results"]) await mkdir(join(dir, sub), { recursive: true });
    for (const sub of ["", "jobs", "experiments", "inputs", "results"]) {
      for (const name of await readdir(join(dir, sub))) {
        if (name.endsWith(".tmp")) await rm(join(dir, sub, name), { force: true });
      }
    }
    return new DirPersistence(dir);
  }

  async load(): Promise<Loaded> {
    const state = await readJsonFile<ServiceState>(join(this.dir, "state.json"));
    const jobs = await this.readAll<JobRecord>("jobs");
    const experiments = await this.readAll<ExperimentRecord>("experiments");
    return { state, jobs: jobs.sort((a, b) => a.id - b.id), experiments: experiments.sort((a, b) => a.id - b.id) };
  }

  saveState(state: () => ServiceState): Promise<void> {
    // One write waiting at most: it reads the newest state when it starts.
    if (this.stateQueued) return this.stateQueued;
    const queued = this.chain(join(this.dir, "state.json"), (path) => {
      this.stateQueued = undefined;
      return writeFileAtomic(path, JSON.stringify(state(), null, 1));
    });
    this.stateQueued = queued;
    return queued;
  }

  saveJob(job: JobRecord): Promise<void> {
    const text = JSON.stringify(job);
    return this.chain(join(this.dir, "jobs", `${job.id}.json`), (path) => writeFileAtomic(path, text));
  }

  saveExperiment(experiment: ExperimentRecord): Promise<void> {
    const text = JSON.stringify(experiment);
    return this.chain(join(this.dir, "experiments", `${experiment.id}.json`), (path) => writeFileAtomic(path, text));
  }

  saveInput(ref: string, input: JobInput): Promise<void> {
    const text = JSON.stringify(encodeInput(input));
    return this.chain(this.inputPath(ref), (path) => writeFileAtomic(path, text));
  }

  async loadInput(ref: string): Promise<JobInput | undefined> {
    const raw = await readJsonFile<EncodedInput>(this.inputPath(ref));
    return raw === undefined ? undefined : decodeInput(raw);
  }

  deleteInput(ref: string): Promise<void> {
    return this.chain(this.inputPath(ref), (path) => rm(path, { force: true }));
  }

  saveResult(jobId: number, json: string): Promise<void> {
    return this.chain(join(this.dir, "results", `${jobId}.json`), (path) => writeFileAtomic(path, json));
  }

  async loadResult(jobId: number): Promise<string | undefined> {
    await this.chains.get(join(this.dir, "results", `${jobId}.json`));
    try {
      return await readFile(join(this.dir, "results", `${jobId}.json`), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  async flush(): Promise<void> {
    while (this.chains.size > 0) await Promise.all([...this.chains.values()]);
  }

  private inputPath(ref: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(ref)) throw new RangeError(`bad input ref ${ref}`);
    return join(this.dir, "inputs", `${ref}.json`);
  }

  /** Runs `write` after the writes already queued for `path`; a failure does not block later ones. */
  private chain(path: string, write: (path: string) => Promise<void>): Promise<void> {
    const before = this.chains.get(path) ?? Promise.resolve();
    const next = before.catch(() => {}).then(() => write(path));
    const settled = next.catch(() => {});
    this.chains.set(path, settled);
    void settled.then(() => {
      if (this.chains.get(path) === settled) this.chains.delete(path);
    });
    return next;
  }

  private async readAll<T>(sub: string): Promise<T[]> {
    const out: T[] = [];
    for (const name of await readdir(join(this.dir, sub))) {
      if (!name.endsWith(".json")) continue;
      const value = await readJsonFile<T>(join(this.dir, sub, name));
      if (value !== undefined) out.push(value);
    }
    return out;
  }
}

async function readJsonFile<T>(path: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    // Atomic writes make this unlikely; a damaged file is skipped, not fatal.
    return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Atomic writes

function tempName(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
}

/** Writes `data` to `path` atomically: temp file in the same directory, fsync, rename. */
export async function writeFileAtomic(path: string, data: string, mode = 0o644): Promise<void> {
  const tmp = tempName(path);
  const handle = await open(tmp, "w", mode);
  try {
    await handle.writeFile(data, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true });
    throw error;
  }
  await syncDir(dirname(path));
}

export function writeFileAtomicSync(path: string, data: string, mode = 0o644): void {
  const tmp = tempName(path);
  const fd = openSync(tmp, "w", mode);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
}

/** Makes a rename durable where the platform allows opening a directory (not on Windows). */
async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, "r");
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // best effort
  }
}

// ---------------------------------------------------------------------------------------------
// Inputs on disk: typed arrays as plain arrays (NaN as null), tagged where options hold them.

interface EncodedInput {
  analysis: Analysis;
  rows: number;
  cols: number;
  y: number[];
  /** Row-major, null = missing. */
  X: Array<number | null>;
  thetas: number[][];
  options: unknown;
}

function encodeInput(input: JobInput): EncodedInput {
  return {
    analysis: input.analysis,
    rows: input.data.rows,
    cols: input.data.cols,
    y: Array.from(input.data.y),
    X: Array.from(input.data.X, (v) => (Number.isNaN(v) ? null : v)),
    thetas: input.thetas.map((t) => Array.from(t)),
    options: encodeValue(input.options),
  };
}

function decodeInput(raw: EncodedInput): JobInput {
  return {
    analysis: raw.analysis,
    data: {
      rows: raw.rows,
      cols: raw.cols,
      y: Float64Array.from(raw.y),
      X: Float64Array.from(raw.X, (v) => (v === null ? NaN : v)),
    },
    thetas: raw.thetas.map((t) => Float64Array.from(t)),
    options: decodeValue(raw.options) as Record<string, unknown>,
  };
}

function encodeValue(value: unknown): unknown {
  if (value instanceof Float64Array) return { $float64: Array.from(value, (v) => (Number.isFinite(v) ? v : null)) };
  if (Array.isArray(value)) return value.map(encodeValue);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, encodeValue(v)]));
  }
  return value;
}

function decodeValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeValue);
  if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>;
    if (Array.isArray(record.$float64) && Object.keys(record).length === 1) {
      return Float64Array.from(record.$float64 as Array<number | null>, (v) => (v === null ? NaN : v));
    }
    return Object.fromEntries(Object.entries(record).map(([k, v]) => [k, decodeValue(v)]));
  }
  return value;
}
