/**
 * Experiments the client groups itself (v2, which has none: one job per theta row). The parent
 * view is built by reading every row that is not known to be finished, a few at a time.
 */
import { GROUP_CONCURRENCY, mapLimit } from "../internal/group.js";
import { JobFailedError } from "./errors.js";
import type { CallOptions, ExperimentReceipt, ExperimentRow, ExperimentState, JobSnapshot } from "./types.js";
import { summarise, type JobRef } from "./wire.js";

export async function groupState(
  status: (job: JobRef, call: CallOptions) => Promise<JobSnapshot>,
  receipt: ExperimentReceipt,
  call: CallOptions,
  known: Map<number, ExperimentRow> = new Map(),
): Promise<ExperimentState> {
  const rows = await mapLimit(receipt.jobs, GROUP_CONCURRENCY, async (job): Promise<ExperimentRow> => {
    const cached = known.get(job.row);
    if (cached !== undefined && (cached.status === "completed" || cached.status === "failed")) return cached;
    const base = { row: job.row, job_id: job.job_id, job_code: job.job_code };
    let row: ExperimentRow;
    try {
      const snap = await status(job, call);
      row =
        snap.status === "completed"
          ? { ...base, status: "completed", yhat: snap.result.yhat, fit: snap.result.fit }
          : { ...base, status: snap.status, yhat: null, fit: null };
    } catch (error) {
      if (!(error instanceof JobFailedError)) throw error;
      row = {
        ...base,
        status: "failed",
        yhat: null,
        fit: null,
        message: error.reason,
        ...(error.errorCode !== undefined ? { error_code: error.errorCode } : {}),
      };
    }
    known.set(job.row, row);
    return row;
  });
  return summarise({ experiment_id: receipt.experiment_id, experiment_code: receipt.experiment_code }, rows);
}
