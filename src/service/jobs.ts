/**
 * The job store: jobs and experiments in memory (mirrored to the persistence layer), their
 * states, and the inputs of unfinished jobs.
 *
 * - job_id: integers from 1, increasing; job_code: 16 lower-case hex characters from
 *   crypto.randomBytes(8) (64 random bits), compared in constant time. Experiments have their own
 *   ids and codes of the same form.
 * - A job or experiment is found only with its organisation, its id and its code; anything else
 *   is "not found" (the caller cannot tell another organisation's job from a missing one).
 * - States: queued -> running -> completed | failed. A completed job's result JSON is saved
 *   before the job is marked completed, so a reader never sees "completed" without a result.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { Analysis } from "../api/options.js";
import type { CensorOperator } from "../engine/options.js";
import type {
  ExperimentRecord,
  JobFailure,
  JobInput,
  JobRecord,
  JobVariant,
  Loaded,
  Persistence,
  ServiceState,
} from "./persistence.js";

export type { ExperimentRecord as Experiment, JobFailure, JobInput, JobRecord as Job, JobStatus, JobVariant } from "./persistence.js";

export function newCode(): string {
  return randomBytes(8).toString("hex");
}

/** Constant-time comparison of a stored code with one from a URL. */
export function sameCode(stored: string, given: string): boolean {
  const a = Buffer.from(stored, "utf8");
  const b = Buffer.from(given, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}

export interface NewJobs {
  jobs: JobRecord[];
  experiment?: ExperimentRecord;
  input: JobInput;
}

export interface CreateSettings {
  warnings?: string[];
  thetaSource?: "last_row_of_X";
  /** The resolved censor operator, kept on each job (v2 `most_eval`). */
  censorOperator?: CensorOperator;
  variant?: JobVariant;
}

interface InputEntry {
  input: JobInput | Promise<JobInput | undefined> | undefined;
  /** Unfinished jobs reading it. */
  pending: number;
}

export class JobStore {
  private readonly jobs = new Map<number, JobRecord>();
  private readonly experiments = new Map<number, ExperimentRecord>();
  private readonly inputs = new Map<string, InputEntry>();
  private nextJobId = 1;
  private nextExperimentId = 1;

  constructor(private readonly persistence: Persistence) {}

  /** Takes in what a data dir held (jobs, experiments, counters); returns the unfinished jobs. */
  restore(loaded: Loaded): JobRecord[] {
    for (const job of loaded.jobs) this.jobs.set(job.id, job);
    for (const experiment of loaded.experiments) this.experiments.set(experiment.id, experiment);
    const maxJob = loaded.jobs.reduce((m, j) => Math.max(m, j.id), 0);
    const maxExperiment = loaded.experiments.reduce((m, e) => Math.max(m, e.id), 0);
    this.nextJobId = Math.max(loaded.state?.next_job_id ?? 1, maxJob + 1);
    this.nextExperimentId = Math.max(loaded.state?.next_experiment_id ?? 1, maxExperiment + 1);
    const unfinished = loaded.jobs.filter((j) => j.status === "queued" || j.status === "running");
    for (const job of unfinished) {
      job.status = "queued";
      delete job.started_at;
      const entry = this.inputs.get(job.input_ref) ?? { input: undefined, pending: 0 };
      entry.pending++;
      this.inputs.set(job.input_ref, entry);
    }
    return unfinished;
  }

  /** Counters for state.json. */
  counters(): Pick<ServiceState, "next_job_id" | "next_experiment_id"> {
    return { next_job_id: this.nextJobId, next_experiment_id: this.nextExperimentId };
  }

  /**
   * Creates one job per theta row (an experiment when there are several), in memory only;
   * `persistCreated` saves them. Nothing is scheduled here.
   */
  create(org: string, analysis: Analysis, input: JobInput, settings: CreateSettings = {}): NewJobs {
    const now = new Date().toISOString();
    const m = input.thetas.length;
    const experiment: ExperimentRecord | undefined =
      m > 1 ? { id: this.nextExperimentId++, code: newCode(), org, analysis, job_ids: [], created_at: now } : undefined;
    const inputRef = experiment ? `e${experiment.id}` : `j${this.nextJobId}`;
    const jobs: JobRecord[] = [];
    for (let row = 0; row < m; row++) {
      const job: JobRecord = {
        id: this.nextJobId++,
        code: newCode(),
        org,
        analysis,
        status: "queued",
        created_at: now,
        warnings: settings.warnings ?? [],
        ...(settings.thetaSource ? { theta_source: settings.thetaSource } : {}),
        ...(experiment ? { experiment_id: experiment.id } : {}),
        row,
        input_ref: inputRef,
        ...(settings.censorOperator ? { censor_operator: settings.censorOperator } : {}),
        ...(settings.variant ? { variant: settings.variant } : {}),
      };
      jobs.push(job);
      this.jobs.set(job.id, job);
      experiment?.job_ids.push(job.id);
    }
    if (experiment) this.experiments.set(experiment.id, experiment);
    this.inputs.set(inputRef, { input, pending: m });
    return { jobs, experiment, input };
  }

  /**
   * A job that failed before it could be queued (a v2 POST whose uploaded X is not there: the
   * vendor resolved the reference when the job ran, so the caller gets a receipt and then a failed
   * job, api-compat.md 2.3). In memory; `persistJob` saves it.
   */
  createFailed(org: string, analysis: Analysis, failure: JobFailure, settings: CreateSettings = {}): JobRecord {
    const now = new Date().toISOString();
    const id = this.nextJobId++;
    const job: JobRecord = {
      id,
      code: newCode(),
      org,
      analysis,
      status: "failed",
      created_at: now,
      finished_at: now,
      warnings: settings.warnings ?? [],
      row: 0,
      input_ref: `j${id}`,
      failure,
      ...(settings.censorOperator ? { censor_operator: settings.censorOperator } : {}),
      ...(settings.variant ? { variant: settings.variant } : {}),
    };
    this.jobs.set(id, job);
    return job;
  }

  async persistJob(job: JobRecord): Promise<void> {
    if (this.persistence.durable) await this.persistence.saveJob(job);
  }

  /** When the organisation's first job still known was created (undefined when it has none). */
  firstJobTime(org: string): Date | undefined {
    let first: string | undefined;
    for (const job of this.jobs.values()) if (job.org === org && (first === undefined || job.created_at < first)) first = job.created_at;
    return first === undefined ? undefined : new Date(first);
  }

  /** Saves new jobs: inputs first, then the jobs, then the experiment that lists them. */
  async persistCreated(created: NewJobs): Promise<void> {
    if (!this.persistence.durable) return;
    await this.persistence.saveInput(created.jobs[0].input_ref, created.input);
    await Promise.all(created.jobs.map((job) => this.persistence.saveJob(job)));
    if (created.experiment) await this.persistence.saveExperiment(created.experiment);
  }

  /** Forgets jobs whose POST was refused after they were created (their ids stay used). */
  discard(created: NewJobs): void {
    for (const job of created.jobs) this.jobs.delete(job.id);
    if (created.experiment) this.experiments.delete(created.experiment.id);
    this.inputs.delete(created.jobs[0].input_ref);
  }

  /** Forgets a job made by `createFailed` whose POST was refused after all. */
  discardJob(job: JobRecord): void {
    this.jobs.delete(job.id);
  }

  get(id: number): JobRecord | undefined {
    return this.jobs.get(id);
  }

  getExperiment(id: number): ExperimentRecord | undefined {
    return this.experiments.get(id);
  }

  /** The job with this id and code belonging to `org`, else undefined. */
  find(org: string, id: number, code: string): JobRecord | undefined {
    const job = this.jobs.get(id);
    if (!job || !sameCode(job.code, code) || job.org !== org) return undefined;
    return job;
  }

  findExperiment(org: string, id: number, code: string): ExperimentRecord | undefined {
    const experiment = this.experiments.get(id);
    if (!experiment || !sameCode(experiment.code, code) || experiment.org !== org) return undefined;
    return experiment;
  }

  /** The inputs of an unfinished job (read from the data dir after a restart). */
  async input(job: JobRecord): Promise<JobInput | undefined> {
    const entry = this.inputs.get(job.input_ref);
    if (!entry) return undefined;
    entry.input ??= this.persistence.loadInput(job.input_ref);
    return entry.input;
  }

  markRunning(job: JobRecord): void {
    if (job.status !== "queued") return;
    job.status = "running";
    job.started_at = new Date().toISOString();
  }

  /** Saves the result, then marks the job completed. */
  async complete(job: JobRecord, json: string, compact: JobRecord["compact"]): Promise<void> {
    await this.persistence.saveResult(job.id, json);
    job.status = "completed";
    job.compact = compact;
    job.finished_at = new Date().toISOString();
    await this.finish(job);
  }

  async fail(job: JobRecord, failure: JobFailure): Promise<void> {
    job.status = "failed";
    job.failure = failure;
    job.finished_at = new Date().toISOString();
    await this.finish(job);
  }

  private async finish(job: JobRecord): Promise<void> {
    const entry = this.inputs.get(job.input_ref);
    let release = false;
    if (entry && --entry.pending <= 0) {
      this.inputs.delete(job.input_ref);
      release = true;
    }
    await this.persistence.saveJob(job);
    if (release) await this.persistence.deleteInput(job.input_ref);
  }
}
