/**
 * The notebook's embedded connection in process (the default) against the same connection over
 * loopback HTTP (`local: { inProcess: false }`): the same calls give the same Predictions (result,
 * receipt, notes, everything `toJSON` shows but the clock), the same quota, the same errors, and the
 * same progress line (the statuses it shows, in order, but "running", which a read sees or not by
 * timing on either path; and its final text but the clock).
 */
import { afterAll, describe, expect, it } from "vitest";
import { connect, disconnect, grid, psr, PredictionError, type AnyPrediction, type ProgressEvent } from "../../src/notebook/index.js";
import { quickstartRows, quickstartTheta } from "./helpers.js";

const RANDOM = new Set(["job_code", "experiment_code", "created_at", "started_at", "finished_at", "elapsedMs", "startedAt"]);
function mask(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(mask);
  if (typeof value !== "object" || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, RANDOM.has(k) ? "*" : mask(v)]));
}

/** What a user sees of a call: the prediction (or the error), and the progress line's statuses and final text without the clock. */
async function seen(call: (progress: (e: ProgressEvent) => void) => Promise<AnyPrediction>): Promise<unknown> {
  const statuses: string[] = [];
  let last = "";
  const progress = (e: ProgressEvent) => {
    // "running" shows up when a read happens to see the job running (on either path): timing, not contract.
    if (e.status !== "running" && statuses[statuses.length - 1] !== e.status) statuses.push(e.status);
    if (e.final) last = e.text.replace(/\d+(\.\d+)? ?(ms|s)\b/g, "<time>");
  };
  try {
    const p = await call(progress);
    const rows = "rows" in p ? p.rows.map((r) => mask({ ...r.toJSON(), result: r.result })) : undefined;
    return { prediction: mask({ ...p.toJSON(), ...("result" in p ? { result: p.result } : {}), rows }), statuses, last };
  } catch (error) {
    const e = error as PredictionError;
    expect(e).toBeInstanceOf(PredictionError);
    return { error: { kind: e.kind, message: e.message, field: e.field, status: e.status, jobId: e.jobId, hint: e.hint }, statuses, last };
  }
}

async function session(inProcess: boolean): Promise<unknown[]> {
  const connection = await connect({ hosted: false, env: {}, envFile: false, fresh: true, local: { quota: 12, workers: 2, inProcess } });
  const rows = quickstartRows();
  const spec = { y: "Points", index: "Name" };
  const out: unknown[] = [];
  out.push(await seen((progress) => grid(rows, { ...spec, theta: quickstartTheta() }, {}, { progress })));
  out.push(await seen((progress) => grid(rows, spec, { max_iter: 20 }, { progress })));
  out.push(await seen((progress) => psr(rows, { ...spec, theta: [0, 1, 2] }, { threshold: [0, 0.8] }, { progress })));
  // The engine refuses: a constant attribute makes every covariance singular for PSR.
  const constant = rows.map((r) => ({ ...r, Age: 30, Experience: 30 }));
  out.push(await seen((progress) => psr(constant, { ...spec, X: ["Age", "Experience"], theta: { Age: 30, Experience: 30 } }, {}, { progress })));
  // Over the plan: 12 units, 6 used so far.
  out.push(await seen((progress) => psr(rows, { ...spec, theta: [0, 1, 2, 3, 4, 5, 6] }, {}, { progress })));
  out.push(mask(await connection.quota()));
  await disconnect();
  return out;
}

afterAll(() => disconnect());

describe("the embedded connection in process and over HTTP", () => {
  it("the same calls give the same predictions, errors, quota and progress line", async () => {
    const http = await session(false);
    const inProcess = await session(true);
    expect(inProcess).toHaveLength(http.length);
    http.forEach((expected, i) => expect(inProcess[i], `call ${i}`).toEqual(expected));
    // The session met a result, an experiment, a failed job and the quota's refusal.
    const kinds = http.map((o) => (o as { error?: { kind: string } }).error?.kind ?? "ok");
    expect(kinds).toEqual(["ok", "ok", "ok", "job-failed", "quota", "ok"]);
  }, 120_000);
});
