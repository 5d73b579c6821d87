import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalService } from "../../src/service/index.js";
import { quickstart, start, type Client } from "./helpers.js";

describe("job times in v3 replies", () => {
  let service: LocalService;
  let client: Client;
  beforeAll(async () => ({ service, client } = await start()));
  afterAll(() => service.close());

  it("a completed envelope says when the job was created, started and finished, in that order", async () => {
    const before = Date.now();
    const done = await client.run("psr", quickstart());
    expect(done.status).toBe(200);
    const { created_at, started_at, finished_at } = done.body;
    const [created, started, finished] = [created_at, started_at, finished_at].map((t: string) => Date.parse(t));
    expect(created).toBeGreaterThanOrEqual(before - 1000);
    expect(created).toBeLessThanOrEqual(started);
    expect(started).toBeLessThanOrEqual(finished);
    expect(finished).toBeLessThanOrEqual(Date.now());
  });

  it("a failed job's 409 carries them too", async () => {
    const failed = await client.run("psr", quickstart({ X: (quickstart().X as number[][]).map((r) => [...r, 2 * r[0]]), theta: [24, 5, 81, 60, 11, 48] }));
    expect(failed.status).toBe(409);
    expect(Date.parse(failed.body.finished_at)).toBeGreaterThanOrEqual(Date.parse(failed.body.created_at));
  });
});
