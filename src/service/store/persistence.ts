/**
 * Where the embedded store (embedded.ts) keeps what must survive a restart. `MemoryPersistence` (the
 * default) keeps nothing; `DirPersistence` (`--data-dir`) keeps it in a directory (0700, files
 * 0600, like the credentials file):
 *
 * ```
 * <dir>/state.json               version, id counters, retention watermarks, units of expired jobs
 * <dir>/batches/<first_id>.json  one accepted request (its charge): org, analysis, warnings, the
 *                                experiment's id and code, each row's job id and code. Written once.
 * <dir>/inputs/<ref>.json        X, y, theta rows and options of a request with unfinished jobs
 * <dir>/outcomes/<job_id>.json   the terminal state of one job (completed | failed), written once
 * <dir>/results/<job_id>.json    the `results` JSON of a completed job, exactly as served
 * <dir>/local-credentials.json   generated local credentials (credentials.ts)
 * ```
 *
 * A request is stored once however many theta rows it has (one batch file and one input file),
 * never once per row; per-job files are written only as jobs finish. Every write is atomic (a
 * temporary file in the same directory, fsync, rename, fsync of the directory), and a failed
 * write removes its temporary file. At most `MAX_OPEN_FILES` file operations run at once, so
 * one request cannot exhaust the process's file descriptors.
 *
 * Crash consistency: the batch file IS the charge. Quota used by an organisation is derived at
 * start-up from the batches that exist plus `expired_units` (jobs removed by retention), so it
 * can never drift from the jobs. A job with no outcome file is queued again at start-up.
 * A file that cannot be parsed stops start-up with a message naming it and what to do: nothing
 * is silently reset.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, fsyncSync, openSync, renameSync, rmSync, statSync, writeSync } from "node:fs";
import { chmod, mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import type { Analysis } from "../../api/options.js";
import type { CensorOperator } from "../../engine/options.js";
import { DamagedStoreError, storeErrorCode, type StorageBusyError } from "./errors.js";
import { errorCode, fileOutageCause, type StoreOutage } from "../outage.js";
import { decodeValue, encodeValue, type ExperimentRecord, type JobFailure, type JobInput, type JobRecord, type JobVariant } from "./records.js";

/** One accepted request as stored: everything its jobs share, once, and each row's id and code. */
export interface BatchRecord {
  first_job_id: number;
  org: string;
  analysis: Analysis;
  created_at: string;
  warnings: string[];
  input_ref: string;
  theta_source?: "last_row_of_X";
  censor_operator?: CensorOperator;
  variant?: JobVariant;
  experiment?: { id: number; code: string };
  /** Row i is job `jobs[i]`. */
  jobs: Array<{ id: number; code: string }>;
  /** Set for a job recorded as failed at its creation (v2: the uploaded X is not there). */
  failure?: JobFailure;
}

/** The terminal state of a job. */
export interface Outcome {
  status: "completed" | "failed";
  started_at?: string;
  finished_at: string;
  failure?: JobFailure;
  compact?: JobRecord["compact"];
}

/** A job file of the first data-dir layout (jobs/<id>.json), read once to migrate it. */
type V1Job = JobRecord;

export interface ServiceState {
  version: 2;
  next_job_id: number;
  next_experiment_id: number;
  /** Jobs (and experiments) with a lower id were removed by retention. */
  expired_below_job: number;
  expired_below_experiment: number;
  /** Units of removed jobs, per organisation (still counted as used). */
  expired_units: Record<string, number>;
}

export interface Loaded {
  state: ServiceState | undefined;
  batches: BatchRecord[];
  outcomes: Map<number, Outcome>;
  /** Refs of the input files present (an input no unfinished job reads is removed). */
  inputRefs: string[];
}

export interface Persistence {
  /** True when things survive a restart. */
  readonly durable: boolean;
  load(): Promise<Loaded>;
  saveState(state: ServiceState): Promise<void>;
  saveBatch(batch: BatchRecord): Promise<void>;
  /** One request as saved (undefined when it is not there). */
  loadBatch(firstJobId: number): Promise<BatchRecord | undefined>;
  deleteBatch(firstJobId: number): Promise<void>;
  saveOutcome(jobId: number, outcome: Outcome): Promise<void>;
  loadOutcome(jobId: number): Promise<Outcome | undefined>;
  saveInput(ref: string, input: JobInput): Promise<void>;
  loadInput(ref: string): Promise<JobInput | undefined>;
  deleteInput(ref: string): Promise<void>;
  saveResult(jobId: number, json: string): Promise<void>;
  loadResult(jobId: number): Promise<string | undefined>;
  /** Removes a job's outcome and result. */
  deleteJob(jobId: number): Promise<void>;
  /** Waits for every write issued so far. */
  flush(): Promise<void>;
  /** Where uploaded X matrices are kept, when this persistence has a directory (uploads.ts). */
  readonly uploadsDir?: string;
  /** Optional: why the files cannot be used (the store's `outage`, contract.ts). */
  outage?(error?: unknown): StoreOutage | undefined;
}

/** File operations running at once in one data dir, at most. */
export const MAX_OPEN_FILES = 16;

// ---------------------------------------------------------------------------------------------

export class MemoryPersistence implements Persistence {
  readonly durable = false;
  async load(): Promise<Loaded> {
    return { state: undefined, batches: [], outcomes: new Map(), inputRefs: [] };
  }
  async saveState(): Promise<void> {}
  async saveBatch(): Promise<void> {}
  async loadBatch(): Promise<BatchRecord | undefined> {
    return undefined;
  }
  async loadOutcome(): Promise<Outcome | undefined> {
    return undefined;
  }
  async deleteBatch(): Promise<void> {}
  async saveOutcome(): Promise<void> {}
  async saveInput(): Promise<void> {}
  async loadInput(): Promise<JobInput | undefined> {
    return undefined;
  }
  async deleteInput(): Promise<void> {}
  async saveResult(): Promise<void> {}
  async loadResult(): Promise<string | undefined> {
    return undefined;
  }
  async deleteJob(): Promise<void> {}
  async flush(): Promise<void> {}
}

// ---------------------------------------------------------------------------------------------

const SUBDIRS = ["batches", "inputs", "outcomes", "results"] as const;
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/** Runs at most `limit` operations at once, the rest in arrival order. */
export class Limiter {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.running >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running++;
    try {
      return await task();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }
}

export class DirPersistence implements Persistence {
  readonly durable = true;
  private readonly chains = new Map<string, Promise<void>>();
  private readonly files = new Limiter(MAX_OPEN_FILES);

  readonly uploadsDir: string;

  protected constructor(readonly dir: string) {
    this.uploadsDir = join(dir, "uploads");
  }

  /**
   * Without `error`: is the directory still there (one stat)? With one: an OS error on a file
   * of this directory that says it cannot be used (gone, unreadable, read-only, out of files).
   */
  outage(error?: unknown): StoreOutage | undefined {
    const store = "the file store (--data-dir)";
    if (error === undefined) {
      try {
        if (statSync(this.dir).isDirectory()) return undefined;
        return { store, cause: "its directory is no longer a directory (ENOTDIR)", code: "ENOTDIR" };
      } catch (e) {
        const code = errorCode(e);
        return { store, cause: fileOutageCause(code) ?? `its directory cannot be read (${code ?? "unknown error"})`, ...(code ? { code } : {}) };
      }
    }
    const code = storeErrorCode(error) === "storage_busy" ? (error as StorageBusyError).reason : errorCode(error);
    const path = (error as { path?: unknown }).path;
    // ENOENT of a file of this directory is an outage only when the directory itself is gone.
    if ((code === "ENOENT" || code === "ENOTDIR") && (typeof path !== "string" || !path.startsWith(this.dir) || this.outage() === undefined)) return undefined;
    const cause = fileOutageCause(code);
    return cause === undefined ? undefined : { store, cause, ...(code ? { code } : {}) };
  }

  /**
   * Creates the directory layout (0700), tightens an existing one, removes temporary files a
   * crash left behind, and converts a data dir of the first layout (jobs/, experiments/).
   */
  static async open(dir: string): Promise<DirPersistence> {
    await mkdir(dir, { recursive: true, mode: DIR_MODE });
    await chmod(dir, DIR_MODE);
    for (const sub of SUBDIRS) {
      await mkdir(join(dir, sub), { recursive: true, mode: DIR_MODE });
      await chmod(join(dir, sub), DIR_MODE);
    }
    for (const sub of ["", ...SUBDIRS]) {
      for (const name of await readdir(join(dir, sub))) {
        if (name.endsWith(".tmp")) await rm(join(dir, sub, name), { force: true });
      }
    }
    const persistence = new DirPersistence(dir);
    if ((await readdir(dir)).includes("jobs")) await persistence.migrateFirstLayout();
    return persistence;
  }

  /**
   * Converts a data dir of the first layout (one file per job in jobs/, experiments/, state.json
   * version 1) to this one: one batch per input, an outcome per finished job. Inputs and results
   * keep their files. Quota used is then derived from the jobs, as always. The old files move to
   * `v1-backup/`. Safe to run again if interrupted (it rewrites the same files).
   */
  private async migrateFirstLayout(): Promise<void> {
    const advice = "restore it from a backup, or move it away (its job is then forgotten)";
    const jobs: V1Job[] = [];
    for (const name of (await readdir(join(this.dir, "jobs"))).filter((n) => n.endsWith(".json"))) {
      const job = await this.readDamaged<V1Job>(join(this.dir, "jobs", name), advice);
      if (job) jobs.push(job);
    }
    const codes = new Map<number, string>();
    const hasExperiments = (await readdir(this.dir)).includes("experiments");
    for (const name of hasExperiments ? (await readdir(join(this.dir, "experiments"))).filter((n) => n.endsWith(".json")) : []) {
      const experiment = await this.readDamaged<ExperimentRecord>(join(this.dir, "experiments", name), advice);
      if (experiment) codes.set(experiment.id, experiment.code);
    }
    const groups = new Map<string, V1Job[]>();
    for (const job of jobs.sort((a, b) => a.id - b.id)) groups.set(job.input_ref, [...(groups.get(job.input_ref) ?? []), job]);
    for (const group of groups.values()) {
      const head = group[0];
      const experimentId = head.experiment_id;
      await this.saveBatch({
        first_job_id: head.id,
        org: head.org,
        analysis: head.analysis,
        created_at: head.created_at,
        warnings: head.warnings,
        input_ref: head.input_ref,
        ...(head.theta_source ? { theta_source: head.theta_source } : {}),
        ...(head.censor_operator ? { censor_operator: head.censor_operator } : {}),
        ...(head.variant ? { variant: head.variant } : {}),
        ...(experimentId !== undefined && codes.has(experimentId) ? { experiment: { id: experimentId, code: codes.get(experimentId)! } } : {}),
        jobs: group.map((j) => ({ id: j.id, code: j.code })),
      });
      for (const job of group) {
        if (job.status !== "completed" && job.status !== "failed") continue;
        await this.saveOutcome(job.id, {
          status: job.status,
          ...(job.started_at ? { started_at: job.started_at } : {}),
          finished_at: job.finished_at ?? job.created_at,
          ...(job.failure ? { failure: job.failure } : {}),
          ...(job.compact ? { compact: job.compact } : {}),
        });
      }
    }
    const old = await this.readDamaged<{ version?: number; next_job_id?: number; next_experiment_id?: number }>(
      join(this.dir, "state.json"),
      "restore it from a backup, or move it away",
    );
    const maxJob = jobs.reduce((m, j) => Math.max(m, j.id), 0);
    const maxExperiment = [...codes.keys()].reduce((m, id) => Math.max(m, id), 0);
    const backup = join(this.dir, "v1-backup");
    await mkdir(backup, { recursive: true, mode: DIR_MODE });
    if (old?.version === 1) await rename(join(this.dir, "state.json"), join(backup, "state.json"));
    await this.saveState({
      version: 2,
      next_job_id: Math.max(old?.next_job_id ?? 1, maxJob + 1),
      next_experiment_id: Math.max(old?.next_experiment_id ?? 1, maxExperiment + 1),
      expired_below_job: 1,
      expired_below_experiment: 1,
      expired_units: {},
    });
    await rename(join(this.dir, "jobs"), join(backup, `jobs-${Date.now()}`));
    if (hasExperiments) await rename(join(this.dir, "experiments"), join(backup, `experiments-${Date.now()}`));
    await syncDir(this.dir);
  }

  async load(): Promise<Loaded> {
    const state = await this.readDamaged<ServiceState>(
      join(this.dir, "state.json"),
      "it holds the id counters, the retention watermarks and the quota units of expired jobs. Restore it from a backup; " +
        "or move it away to start with ids counted from the saved requests and without the units of expired jobs",
    );
    if (state !== undefined && state.version !== 2) {
      throw new DamagedStoreError(
        `${join(this.dir, "state.json")} has version ${String(state.version)}; this rbp reads version 2. Start it on a new --data-dir`,
      );
    }
    const batches: BatchRecord[] = [];
    for (const name of await readdir(join(this.dir, "batches"))) {
      if (!name.endsWith(".json")) continue;
      const batch = await this.readDamaged<BatchRecord>(
        join(this.dir, "batches", name),
        "it records an accepted, paid request. Restore it from a backup; or move it away, and its jobs and their quota units are forgotten",
      );
      if (batch) batches.push(batch);
    }
    batches.sort((a, b) => a.first_job_id - b.first_job_id);
    const outcomes = new Map<number, Outcome>();
    for (const name of await readdir(join(this.dir, "outcomes"))) {
      if (!name.endsWith(".json")) continue;
      const outcome = await this.readDamaged<Outcome>(
        join(this.dir, "outcomes", name),
        "it records how one job ended. Restore it from a backup; or move it away, and the job runs again (charged once)",
      );
      if (outcome) outcomes.set(Number(name.slice(0, -5)), outcome);
    }
    const inputRefs = (await readdir(join(this.dir, "inputs"))).filter((n) => n.endsWith(".json")).map((n) => n.slice(0, -5));
    return { state, batches, outcomes, inputRefs };
  }

  saveState(state: ServiceState): Promise<void> {
    const text = JSON.stringify(state, null, 1);
    return this.write(join(this.dir, "state.json"), text);
  }

  saveBatch(batch: BatchRecord): Promise<void> {
    return this.write(this.batchPath(batch.first_job_id), JSON.stringify(batch));
  }

  deleteBatch(firstJobId: number): Promise<void> {
    return this.remove(this.batchPath(firstJobId));
  }

  loadBatch(firstJobId: number): Promise<BatchRecord | undefined> {
    return this.read<BatchRecord>(this.batchPath(firstJobId));
  }

  loadOutcome(jobId: number): Promise<Outcome | undefined> {
    return this.read<Outcome>(join(this.dir, "outcomes", `${jobId}.json`));
  }

  /** Reads a JSON file after the writes queued for it, within the open-files bound. */
  private async read<T>(path: string): Promise<T | undefined> {
    await this.chains.get(path);
    return this.files.run(() => readJsonFile<T>(path));
  }

  saveOutcome(jobId: number, outcome: Outcome): Promise<void> {
    return this.write(join(this.dir, "outcomes", `${jobId}.json`), JSON.stringify(outcome));
  }

  saveInput(ref: string, input: JobInput): Promise<void> {
    return this.write(this.inputPath(ref), JSON.stringify(encodeInput(input)));
  }

  async loadInput(ref: string): Promise<JobInput | undefined> {
    const path = this.inputPath(ref);
    await this.chains.get(path);
    const raw = await this.files.run(() => readJsonFile<EncodedInput>(path));
    return raw === undefined ? undefined : decodeInput(raw);
  }

  deleteInput(ref: string): Promise<void> {
    return this.remove(this.inputPath(ref));
  }

  saveResult(jobId: number, json: string): Promise<void> {
    return this.write(join(this.dir, "results", `${jobId}.json`), json);
  }

  async loadResult(jobId: number): Promise<string | undefined> {
    const path = join(this.dir, "results", `${jobId}.json`);
    await this.chains.get(path);
    return this.files.run(async () => {
      try {
        return await readFile(path, "utf8");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw error;
      }
    });
  }

  async deleteJob(jobId: number): Promise<void> {
    await this.remove(join(this.dir, "results", `${jobId}.json`));
    await this.remove(join(this.dir, "outcomes", `${jobId}.json`));
  }

  async flush(): Promise<void> {
    while (this.chains.size > 0) await Promise.all([...this.chains.values()]);
  }

  private batchPath(firstJobId: number): string {
    if (!Number.isSafeInteger(firstJobId)) throw new RangeError(`bad batch id ${firstJobId}`);
    return join(this.dir, "batches", `${firstJobId}.json`);
  }

  private inputPath(ref: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(ref)) throw new RangeError(`bad input ref ${ref}`);
    return join(this.dir, "inputs", `${ref}.json`);
  }

  private write(path: string, text: string): Promise<void> {
    return this.chain(path, () => this.files.run(() => writeFileAtomic(path, text, FILE_MODE)));
  }

  private remove(path: string): Promise<void> {
    return this.chain(path, () => this.files.run(() => rm(path, { force: true })));
  }

  /** Runs `write` after the writes already queued for `path`; a failure does not block later ones. */
  private chain(path: string, write: () => Promise<void>): Promise<void> {
    const before = this.chains.get(path) ?? Promise.resolve();
    const next = before.catch(() => {}).then(write);
    const settled = next.catch(() => {});
    this.chains.set(path, settled);
    void settled.then(() => {
      if (this.chains.get(path) === settled) this.chains.delete(path);
    });
    return next;
  }

  /** Reads a JSON file; a file that exists but cannot be parsed stops start-up with `advice`. */
  private async readDamaged<T>(path: string, advice: string): Promise<T | undefined> {
    try {
      return await readJsonFile<T>(path);
    } catch (error) {
      if (error instanceof SyntaxError || (error as NodeJS.ErrnoException).code === "EISDIR") {
        throw new DamagedStoreError(`${path} is damaged (${(error as Error).message}); the service will not start on it: ${advice}.`);
      }
      throw error;
    }
  }
}

/** Reads and parses a JSON file; undefined when it does not exist; a SyntaxError when damaged. */
async function readJsonFile<T>(path: string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
  return JSON.parse(text) as T;
}

// ---------------------------------------------------------------------------------------------
// Atomic writes

function tempName(path: string): string {
  return join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`);
}

/**
 * Writes `data` to `path` atomically: temp file in the same directory, fsync, rename, fsync of
 * the directory. On any failure (a full disk) the temp file is removed and the error rethrown.
 */
export async function writeFileAtomic(path: string, data: string, mode = FILE_MODE): Promise<void> {
  const tmp = tempName(path);
  try {
    const handle = await open(tmp, "w", mode);
    try {
      await handle.writeFile(data, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
  } catch (error) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw error;
  }
  await syncDir(dirname(path));
}

export function writeFileAtomicSync(path: string, data: string, mode = FILE_MODE): void {
  const tmp = tempName(path);
  try {
    const fd = openSync(tmp, "w", mode);
    try {
      writeSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
  chmodSync(path, mode);
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
