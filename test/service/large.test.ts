/** A real result over 4 MiB: PSR weights of 120,000 rows; the field endpoint refuses it with 413. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalService } from "../../src/service/index.js";
import { Client, start, synthetic } from "./helpers.js";

let service: LocalService;
let client: Client;
beforeAll(async () => {
  ({ service, client } = await start({ workers: 1 }));
});
afterAll(() => service.close());

describe("4 MiB field limit", () => {
  it("413 for prediction_weights of N = 120,000 at two thresholds; its parts are served", async () => {
    const { y, X } = synthetic(120_000, 1, 3);
    const receipt = await client.post("/v3/psr", { y, X, theta: [0.1], options: { threshold: [0, 0.5] } });
    expect(receipt.status).toBe(200);
    const base = `/v3/jobs/${receipt.body.job_id}/${receipt.body.job_code}`;
    expect((await client.poll(`/v3/results/${receipt.body.job_id}/${receipt.body.job_code}`, 60_000)).status).toBe(200);

    const big = await client.get(`${base}/prediction_weights`);
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ error: "field_too_large", field: "prediction_weights", limit: 4 * 1024 * 1024, status_code: 413 });
    expect(big.body.bytes).toBeGreaterThan(4 * 1024 * 1024);
    expect(big.body.message).toContain("prediction_weights/weights");

    const weights = await client.get(`${base}/prediction_weights/weights`);
    expect(weights.status).toBe(200);
    expect(weights.body.shape).toEqual([120_000, 2]);
    expect(weights.body.json_path).toBe("$.results.prediction_weights.weights");
  }, 60_000);
});
