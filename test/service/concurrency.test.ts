/**
 * Concurrency over loopback HTTP: 200 POSTs fired at once (single jobs of the three analyses and
 * experiments of 2 and 3 theta rows) against an organisation whose plan has 150 units.
 *
 * The mix is chosen so that the outcome is exact whatever order the POSTs arrive in: 150 of them
 * are single jobs (1 unit), so while any unit is left some single job can still take it; hence
 * the plan is always spent to exactly 150, never more. What is checked:
 * - quota used = 150 = the sum of the costs of the accepted POSTs; GET /quota agrees;
 * - every refused POST is a 429 `quota_exceeded` with `required` > `remaining`, and its
 *   `remaining` never below what is finally left (0); nothing else is refused;
 * - no job lost, none made twice: the accepted receipts name exactly the job ids 1..150 (ids are
 *   drawn only after a POST is paid for), each with its own code;
 * - every accepted job completes (200 with results), every experiment completes with all its rows,
 *   and a single job's result equals the gold value of its analysis;
 * - meanwhile a second organisation, with its own plan, is not affected.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorBodySchema } from "../../src/api/schemas.js";
import type { LocalService } from "../../src/service/index.js";
import { Client, close, gold, goldCase, quickstart, start, tempDir, type Reply, writeCredentials } from "./helpers.js";

const QUOTA = 150;
const KEYS = { busy: "concurrency-key-busy-0000", calm: "concurrency-key-calm-1111" };
const dir = tempDir();
let service: LocalService;
let busy: Client;
let calm: Client;

beforeAll(async () => {
  const file = writeCredentials(dir.path, [
    { name: "busy", api_key: KEYS.busy, plan: { quota: QUOTA }, users: [{ access_id: "u1" }, { access_id: "u2" }] },
    { name: "calm", api_key: KEYS.calm, plan: { quota: 10 }, users: [{ access_id: "c1" }] },
  ]);
  ({ service } = await start({ credentialsFile: file, workers: 2 }));
  busy = new Client(service.url, KEYS.busy, "u1");
  calm = new Client(service.url, KEYS.calm, "c1");
});
afterAll(async () => {
  await service?.close();
  dir.remove();
});

/** The options of each analysis and the published yhat for them (quickstart gold vectors). */
const GOLD = {
  psr: { options: goldCase("psr thresholds sweep").options, yhat: goldCase("psr thresholds sweep").expect.yhat },
  maxfit: { options: goldCase("maxfit default").options, yhat: goldCase("maxfit default").expect.yhat },
  grid: { options: {}, yhat: goldCase("grid default").expect.yhat },
};

interface Planned {
  analysis: "psr" | "maxfit" | "grid";
  rows: number;
  body: Record<string, unknown>;
}

/** 150 single jobs, 30 experiments of 2 rows, 20 of 3: 200 POSTs asking for 270 units. */
function plan(): Planned[] {
  const analyses = ["psr", "maxfit", "grid"] as const;
  const thetas = [gold.inputs.theta, gold.inputs.X[0], gold.inputs.X[3]];
  const out: Planned[] = [];
  const body = (analysis: Planned["analysis"], theta?: number[][]) => quickstart({ options: GOLD[analysis].options, ...(theta ? { theta } : {}) });
  for (let i = 0; i < 150; i++) out.push({ analysis: analyses[i % 3], rows: 1, body: body(analyses[i % 3]) });
  for (let i = 0; i < 30; i++) out.push({ analysis: analyses[i % 3], rows: 2, body: body(analyses[i % 3], thetas.slice(0, 2)) });
  for (let i = 0; i < 20; i++) out.push({ analysis: analyses[i % 3], rows: 3, body: body(analyses[i % 3], thetas) });
  // Interleave deterministically so experiments and single jobs race each other.
  return out
    .map((p, i) => ({ p, k: (i * 7919) % out.length }))
    .sort((x, y) => x.k - y.k)
    .map((x) => x.p);
}

describe("200 concurrent POSTs against a plan of 150 units", () => {
  it("spends exactly 150 units, refuses the rest with 429, loses no job, and completes every accepted one", async () => {
    const planned = plan();
    expect(planned).toHaveLength(200);
    expect(planned.reduce((s, p) => s + p.rows, 0)).toBe(270);

    // a second organisation posts at the same time
    const calmPosts = Array.from({ length: 5 }, () => calm.post("/v3/psr", quickstart()));
    const replies: Reply[] = await Promise.all(planned.map((p, i) => busy.as(KEYS.busy, i % 2 === 0 ? "u1" : "u2").post(`/v3/${p.analysis}`, p.body)));
    const calmReplies = await Promise.all(calmPosts);

    const accepted = replies.map((r, i) => ({ r, p: planned[i] })).filter(({ r }) => r.status === 200);
    const refused = replies.map((r, i) => ({ r, p: planned[i] })).filter(({ r }) => r.status !== 200);
    const spent = accepted.reduce((s, { p }) => s + p.rows, 0);
    expect(spent).toBe(QUOTA);
    expect(accepted.length + refused.length).toBe(200);

    const quota = (await busy.get("/v3/quota")).body;
    expect(quota).toEqual({ quota: QUOTA, used: QUOTA, remaining: 0, unit: "prediction_task" });

    for (const { r, p } of refused) {
      expect(r.status, JSON.stringify(r.body)).toBe(429);
      expect(ErrorBodySchema.safeParse(r.body).success).toBe(true);
      expect(r.body).toMatchObject({ error: "quota_exceeded", status_code: 429, quota: QUOTA, required: p.rows, unit: "prediction_task" });
      expect(r.body.required).toBeGreaterThan(r.body.remaining);
      expect(r.body.remaining).toBeGreaterThanOrEqual(quota.remaining);
      expect(r.body.used + r.body.remaining).toBe(QUOTA);
    }
    // at least the single jobs beyond the 150th were refused; experiments were both taken and refused
    expect(refused.length).toBeGreaterThanOrEqual(50);
    expect(accepted.some(({ p }) => p.rows > 1)).toBe(true);
    expect(refused.some(({ p }) => p.rows > 1)).toBe(true);

    // receipts: every paid-for job has a receipt, ids 1..150 exactly once, codes distinct
    const receipts: Array<{ job_id: number; job_code: string; analysis: string; experiment: boolean }> = [];
    const experiments: Array<{ experiment_id: number; experiment_code: string; n_rows: number }> = [];
    for (const { r, p } of accepted) {
      if (p.rows === 1) {
        expect(r.body).toEqual({ job_id: expect.any(Number), job_code: expect.stringMatching(/^[0-9a-f]{16}$/) });
        receipts.push({ ...r.body, analysis: p.analysis, experiment: false });
      } else {
        expect(r.body.n_rows).toBe(p.rows);
        expect(r.body.jobs.map((j: { row: number }) => j.row)).toEqual([...Array(p.rows).keys()]);
        experiments.push(r.body);
        for (const j of r.body.jobs) receipts.push({ job_id: j.job_id, job_code: j.job_code, analysis: p.analysis, experiment: true });
      }
    }
    // (the other organisation's 5 jobs took ids from the same sequence)
    const calmIds = calmReplies.map((r) => r.body.job_id as number);
    expect([...receipts.map((j) => j.job_id), ...calmIds].sort((x, y) => x - y)).toEqual(Array.from({ length: QUOTA + 5 }, (_, i) => i + 1));
    expect(new Set(receipts.map((j) => j.job_code)).size).toBe(QUOTA);
    expect(new Set(experiments.map((e) => e.experiment_id)).size).toBe(experiments.length);

    // every accepted job completes; single jobs give the gold yhat of their analysis
    const results = await Promise.all(receipts.map((j) => busy.poll(`/v3/results/${j.job_id}/${j.job_code}`, 45_000)));
    results.forEach((res, i) => {
      expect(res.status, JSON.stringify(res.body).slice(0, 300)).toBe(200);
      expect(res.body).toMatchObject({ job_id: receipts[i].job_id, status: "completed" });
      if (!receipts[i].experiment) close(res.body.results.yhat, GOLD[receipts[i].analysis as Planned["analysis"]].yhat);
    });
    for (const e of experiments) {
      const parent = await busy.get(`/v3/experiments/${e.experiment_id}/${e.experiment_code}`);
      expect(parent.status).toBe(200);
      expect(parent.body).toMatchObject({ status: "completed", n_rows: e.n_rows, n_completed: e.n_rows, n_failed: 0 });
    }

    // nothing was spent after the storm, and the other organisation kept its own plan
    expect((await busy.get("/v3/quota")).body.used).toBe(QUOTA);
    expect(calmReplies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect((await calm.get("/v3/quota")).body).toMatchObject({ used: 5, remaining: 5 });
    for (const r of calmReplies) expect((await calm.poll(`/v3/results/${r.body.job_id}/${r.body.job_code}`)).status).toBe(200);
    // a last POST is refused with what remains
    const last = await busy.post("/v3/psr", quickstart());
    expect(last.status).toBe(429);
    expect(last.body).toMatchObject({ remaining: 0, required: 1 });
  }, 60_000);
});
