/**
 * A job submitted through the lane's endpoint (the embedded service's own process) is read back
 * without parsing its JSON: the worker posts the result decoded beside its text, and the endpoint's
 * read answers it once (`parsed`), equal to what JSON.parse reads from the stored text; later reads
 * parse as before. On one worker and spread over two (the Grid's lead encodes).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRequest, type ParsedRequest } from "../../src/api/request.js";
import { startLocalService, type LocalService } from "../../src/service/index.js";

const ACCESS = "decoded-tester";
let service: LocalService;

beforeAll(async () => {
  service = await startLocalService({ port: 0, workers: 2, apiKey: "decoded-key", accessId: ACCESS, quota: 20 });
});
afterAll(() => service.close());

function data(rows: number, cols: number): { y: number[]; X: number[][] } {
  let s = 11;
  const next = () => (s = (s * 16807) % 2147483647) / 2147483647 - 0.5;
  const X = Array.from({ length: rows }, () => Array.from({ length: cols }, next));
  return { y: X.map((r) => r[0] - r[1] + next()), X };
}

describe("decoded results in process", () => {
  for (const [label, rows, cols, analysis] of [
    ["a PSR on one worker", 40, 3, "psr"],
    ["a Grid spread over two workers", 3000, 10, "grid"],
  ] as const) {
    it(`${label}: the first read answers the parsed result, equal to the stored text's`, async () => {
      const endpoint = service.lane!.endpoint;
      const { y, X } = data(rows, cols);
      const body = { access_id: ACCESS, y, X, ...(analysis === "psr" ? { theta: X[0], options: { threshold: [0.5] } } : {}) };
      const submitted = await endpoint.submit(parseRequest(analysis, body, "v3") as ParsedRequest);
      expect(submitted.status).toBe(200);
      const { job_id, job_code } = submitted.body as { job_id: number; job_code: string };
      let reply = await endpoint.job(job_id, job_code, 60_000);
      while (reply.status === 202) reply = await endpoint.job(job_id, job_code, 60_000);
      expect(reply.status).toBe(200);
      expect(reply.parsed).toBeDefined();
      expect(reply.parsed).toEqual(JSON.parse(reply.results!));
      const again = await endpoint.job(job_id, job_code, 0);
      expect(again.results).toBe(reply.results);
      expect(again.parsed).toBeUndefined();
    });
  }
});
