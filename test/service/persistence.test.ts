/**
 * --data-dir: jobs, results, experiments, quota and generated credentials survive a restart;
 * jobs interrupted by the stop run after it; files are written atomically.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LocalService } from "../../src/service/index.js";
import { Client, quickstart, start, tempDir } from "./helpers.js";

const dirs: Array<{ remove: () => void }> = [];
const services: LocalService[] = [];
afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.close()));
  for (const d of dirs.splice(0)) d.remove();
});

async function open(dataDir: string, options = {}): Promise<{ service: LocalService; client: Client }> {
  const started = await start({ dataDir, apiKey: undefined, ...options });
  services.push(started.service);
  return started;
}

describe("persistence with a data dir", () => {
  it("a receipt stays valid across a restart: results, experiments, quota, ids", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const first = await open(dir.path, { quota: 50 });
    const job = (await first.client.post("/v3/grid", quickstart())).body;
    const done = await first.client.poll(`/v3/results/${job.job_id}/${job.job_code}`);
    expect(done.status).toBe(200);
    const field = await first.client.get(`/v3/jobs/${job.job_id}/${job.job_code}/insights/Impact%20on%20Fit`);
    const experiment = (await first.client.post("/v3/psr", quickstart({ theta: [quickstart().theta, quickstart().theta] }))).body;
    const parent = await first.client.poll(`/v3/experiments/${experiment.experiment_id}/${experiment.experiment_code}`);
    expect(parent.status).toBe(200);
    const quota = (await first.client.get("/v3/quota")).body;
    expect(quota).toMatchObject({ quota: 50, used: 3 });
    await first.service.close();

    const second = await open(dir.path, { quota: 50 });
    // generated credentials were kept in the data dir, so the same key and access id work
    expect(second.service.credentials.apiKey).toBe(first.service.credentials.apiKey);
    expect(second.service.credentials.accessId).toBe(first.service.credentials.accessId);
    expect(await second.client.get(`/v3/results/${job.job_id}/${job.job_code}`)).toMatchObject({ status: 200, body: done.body });
    expect((await second.client.get(`/v3/jobs/${job.job_id}/${job.job_code}/insights/Impact%20on%20Fit`)).body).toEqual(field.body);
    expect((await second.client.get(`/v3/experiments/${experiment.experiment_id}/${experiment.experiment_code}`)).body).toEqual(parent.body);
    expect((await second.client.get("/v3/quota")).body).toEqual(quota);
    const next = (await second.client.post("/v3/psr", quickstart())).body;
    expect(next.job_id).toBeGreaterThan(experiment.jobs[1].job_id);
    expect((await second.client.get(`/v3/results/${job.job_id}/0000000000000000`)).status).toBe(404);

    // no temporary files left behind; inputs of finished jobs removed
    await second.client.poll(`/v3/results/${next.job_id}/${next.job_code}`);
    await second.service.close();
    for (const sub of ["", "batches", "results", "outcomes", "inputs"]) {
      expect(readdirSync(join(dir.path, sub)).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    }
    expect(readdirSync(join(dir.path, "inputs"))).toEqual([]);
  });

  it("jobs queued or running at a stop run after the restart", async () => {
    const dir = tempDir();
    dirs.push(dir);
    const first = await open(dir.path, { workers: 1 });
    const thetas = [quickstart().theta, quickstart().theta, quickstart().theta];
    const experiment = (await first.client.post("/v3/grid", quickstart({ theta: thetas }))).body;
    const single = (await first.client.post("/v3/maxfit", quickstart())).body;
    // the worker is still starting: nothing has finished yet
    expect((await first.client.get(`/v3/results/${single.job_id}/${single.job_code}`)).status).toBe(202);
    await first.service.close();

    const second = await open(dir.path, { workers: 1 });
    const parent = await second.client.poll(`/v3/experiments/${experiment.experiment_id}/${experiment.experiment_code}`);
    expect(parent.status).toBe(200);
    expect(parent.body.status).toBe("completed");
    expect((await second.client.poll(`/v3/results/${single.job_id}/${single.job_code}`)).status).toBe(200);
    expect((await second.client.get("/v3/quota")).body.used).toBe(4); // paid once, not again
  });

  it("without a data dir nothing survives", async () => {
    const first = await start({});
    const job = (await first.client.post("/v3/psr", quickstart())).body;
    await first.client.poll(`/v3/results/${job.job_id}/${job.job_code}`);
    await first.service.close();
    const second = await start({ apiKey: first.service.credentials.apiKey, accessId: first.service.credentials.accessId });
    services.push(second.service);
    expect((await second.client.get(`/v3/results/${job.job_id}/${job.job_code}`)).status).toBe(404);
  });
});
