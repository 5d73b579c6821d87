/**
 * Adaptive polling for `wait` and `waitExperiment`.
 *
 * Schedule: the first read at once (a job submitted earlier may be done already), then delays of
 * `initialDelayMs` (10 ms), growing by `factor` (1.5) per poll up to `maxDelayMs` (2 s): 10, 15,
 * 23, 34, 51, 76, 114, 171, 256, 384, 577, 865, 1297, 1946, 2000, 2000, ... ms. The overshoot
 * (completion to notice) is then at most about a third of the job's run time, capped at 2 s, and
 * a job of a few milliseconds is noticed within about 10 ms; a one-minute job costs ~40 reads.
 * Reads are free of quota and sequential per wait (the next one starts after the answer).
 *
 * Retry-After on a 202 (the local service sends 1 s): read as the server's pace for jobs that are
 * not quick. It is a floor on the delay only once the job has been running longer than the
 * Retry-After itself, and never raises the delay above `maxDelayMs`. So the first second of a
 * job is polled on our fast schedule (at most ~10 reads), and a long job is polled no faster than
 * the server asks (nor slower than the cap). Honouring it from the first poll would make every
 * quick job take at least a second, which is what this client is meant to beat; a server that
 * really needs relief answers 429 or 503, whose Retry-After is binding (see below).
 *
 * During a wait:
 * - 429 (RateLimitError) on a read: wait the Retry-After it gives (else the cap), then go on;
 * - a connection error or a 5xx that survived the transport's own retries: go on after the cap
 *   delay, up to 3 such failures in a row;
 * - the caller's signal: AbortError at once (the request in flight is aborted too);
 * - `timeoutMs`: TimeoutError (phase "wait") after a last read at the deadline; the job goes on.
 */
import { sleep } from "./abort.js";
import { AbortError, ApiError, ConnectionError, RateLimitError, TimeoutError } from "./errors.js";
import type { JobStatus, PollOptions } from "./types.js";

export type Schedule = Required<PollOptions>;

/** The delay after `previous` (undefined: after the first read). */
export function nextDelay(previous: number | undefined, schedule: Schedule): number {
  if (previous === undefined) return Math.min(schedule.initialDelayMs, schedule.maxDelayMs);
  return Math.min(schedule.maxDelayMs, previous * schedule.factor);
}

/** The delay to sleep after a 202 that carried `retryAfterMs`, `elapsedMs` into the wait. */
export function withRetryAfter(delay: number, retryAfterMs: number | undefined, elapsedMs: number, schedule: Schedule): number {
  if (retryAfterMs === undefined || elapsedMs < retryAfterMs) return delay;
  return Math.min(schedule.maxDelayMs, Math.max(delay, retryAfterMs));
}

export type PollCheck<T> = { done: true; value: T; status: JobStatus } | { done: false; status: JobStatus; retryAfterMs?: number };

export interface PollLoop<T> {
  /** One read; `timeoutMs` is the budget for its request. */
  check(timeoutMs: number | undefined, signal: AbortSignal | undefined): Promise<PollCheck<T>>;
  schedule: Schedule;
  signal?: AbortSignal;
  /** Budget of the whole wait; undefined: none. */
  timeoutMs?: number;
  /** Called after every read. */
  onPoll?(status: JobStatus, elapsedMs: number, polls: number): void;
  /** For messages, e.g. "job 12". */
  what: string;
  jobId?: number;
}

const MAX_FAILURES_IN_A_ROW = 3;
/** The last read at the deadline gets at least this much time. */
const LAST_READ_MS = 250;

export async function pollUntil<T>(loop: PollLoop<T>): Promise<T> {
  const started = performance.now();
  const deadline = loop.timeoutMs === undefined ? undefined : started + loop.timeoutMs;
  let delay: number | undefined;
  let polls = 0;
  let failures = 0;
  const timedOut = () =>
    new TimeoutError(`${loop.what} still running after ${loop.timeoutMs} ms of waiting; it goes on in the service: call wait() again to keep waiting`, {
      timeoutMs: loop.timeoutMs ?? 0,
      phase: "wait",
      jobId: loop.jobId,
      attempts: polls,
      code: "wait_timeout",
    });
  const aborted = () => new AbortError(`waiting for ${loop.what} was aborted by the caller`, { attempts: polls });

  for (;;) {
    if (loop.signal?.aborted) throw aborted();
    const left = deadline === undefined ? undefined : Math.max(LAST_READ_MS, deadline - performance.now());
    let check: PollCheck<T> | undefined;
    let pause: number | undefined;
    try {
      check = await loop.check(left, loop.signal);
      failures = 0;
    } catch (error) {
      if (error instanceof AbortError) throw aborted();
      if (error instanceof TimeoutError && deadline !== undefined && performance.now() >= deadline - 1) throw timedOut();
      if (error instanceof RateLimitError) {
        pause = error.retryAfterMs ?? loop.schedule.maxDelayMs;
      } else if (transient(error) && ++failures < MAX_FAILURES_IN_A_ROW) {
        pause = loop.schedule.maxDelayMs;
      } else {
        throw error;
      }
    }
    polls++;
    const elapsed = performance.now() - started;
    if (check !== undefined) {
      loop.onPoll?.(check.status, elapsed, polls);
      if (check.done) return check.value;
      delay = nextDelay(delay, loop.schedule);
      pause = withRetryAfter(delay, check.retryAfterMs, elapsed, loop.schedule);
    }
    if (deadline !== undefined) {
      const remaining = deadline - performance.now();
      if (remaining <= 0) throw timedOut();
      pause = Math.min(pause!, remaining);
    }
    try {
      await sleep(pause!, loop.signal);
    } catch {
      throw aborted();
    }
  }
}

function transient(error: unknown): boolean {
  if (error instanceof ConnectionError || error instanceof TimeoutError) return true;
  return error instanceof ApiError && error.status !== undefined && error.status >= 500;
}
