/**
 * A job submitted through the lane's endpoint (the embedded service's own process) is read back
 * without parsing its JSON: the worker posts the result decoded before it writes the text, and the
 * endpoint's read that waits for the job answers it once (`parsed`), at once when the text is not
 * written yet (then with the envelope the route answers once the store has it, a bound on the
 * text's length and its strings); later reads, and HTTP, wait for the stored text, and what they
 * answer is the same envelope and the text JSON.parse reads as that result. On one worker and
 * spread over two (the Grid's lead encodes), and a small Grid run inline (service/inline.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRequest, type ParsedRequest } from "../../src/api/request.js";
import { startLocalService, type LocalService } from "../../src/service/index.js";
import { inlineRuns, runsInline } from "../../src/service/inline.js";

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
    ["a small Grid run inline, one worker helping", 700, 10, "grid"],
  ] as const) {
    it(`${label}: the first read answers the parsed result, equal to the stored text's`, async () => {
      const endpoint = service.lane!.endpoint;
      const { y, X } = data(rows, cols);
      const body = { access_id: ACCESS, y, X, ...(analysis === "psr" ? { theta: X[0], options: { threshold: [0.5] } } : {}) };
      const request = parseRequest(analysis, body, "v3") as ParsedRequest;
      const inline = inlineRuns.count;
      const submitted = await endpoint.submit(request);
      expect(submitted.status).toBe(200);
      const { job_id, job_code } = submitted.body as { job_id: number; job_code: string };
      let reply = await endpoint.job(job_id, job_code, 60_000);
      while (reply.status === 202) reply = await endpoint.job(job_id, job_code, 60_000);
      expect(reply.status).toBe(200);
      expect(reply.parsed).toBeDefined();
      expect(inlineRuns.count).toBe(inline + (runsInline(request) ? 1 : 0));
      // The Grid's text takes a while to write after its result: the waiting read is answered before (PSR: either).
      if (analysis === "grid") expect(reply.results).toBeUndefined();
      const http = await fetch(`${service.url}/v3/results/${job_id}/${job_code}`, { headers: { "x-api-key": "decoded-key" } });
      expect(http.status).toBe(200);
      const again = await endpoint.job(job_id, job_code, 0);
      expect(again.status).toBe(200);
      expect(again.parsed).toBeUndefined();
      const text = again.results!;
      expect(JSON.parse(text)).toEqual(reply.parsed);
      expect(again.body).toEqual(reply.body);
      expect(await http.json()).toEqual({ ...(reply.body as object), results: reply.parsed });
      if (reply.results !== undefined) expect(reply.results).toBe(text);
      else {
        expect(reply.resultsBytesAtMost).toBeGreaterThanOrEqual(text.length);
        expect(JSON.parse(reply.scan!)).toEqual(expect.arrayContaining(["yhat", "fit"]));
      }
    });
  }
});
