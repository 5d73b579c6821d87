/**
 * backtest(): each evaluation row predicted from the rows strictly before it, on the embedded
 * service (its in-process lane: the real service, store and worker pool without HTTP), equal to
 * the same rows run one by one through rbp.psr/maxfit/grid over HTTP; one job and one unit per
 * row, each job readable over HTTP afterwards; a refused step or a short quota refuses the whole
 * backtest with nothing charged; the lane's result reader equal to the validating one; the
 * regression baseline equal to PSR at threshold 0 (linear regression) and, for an expanding
 * window, to OLS summed anew; metrics by hand; the hosted service's plan, confirmation and quota
 * check before anything is submitted.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { backtest, connect, disconnect, grid, psr, maxfit, Connection, Prediction, type ProgressEvent } from "../../src/notebook/index.js";
import { createClient, readSettings } from "../../src/client/index.js";
import { metricsOf, type BacktestRow } from "../../src/notebook/backtest-metrics.js";
import { olsPredict } from "../../src/engine/baseline.js";
import { startLocalService, type LocalService } from "../../src/service/index.js";
import { fromOwnV3Results, fromV3Results } from "../../src/api/result.js";
import { datasetFromRows, runAnalysis } from "../../src/engine/index.js";
import { encodeJson } from "../../src/service/encode.js";
import { ATTRIBUTES, weatherDays, type Day } from "./weather.js";

const quiet = { progress: "none" as const };
let days: Day[];

beforeAll(async () => {
  days = weatherDays().slice(0, 150);
  await connect({ hosted: false, env: {}, envFile: false, local: { workers: 2 } });
});
afterAll(async () => {
  await disconnect();
});

/** Plain arrays of rows [from, to) of the days. */
function arrays(from: number, to: number) {
  const rows = days.slice(from, to);
  return {
    y: rows.map((d) => d.tomorrow_max),
    X: rows.map((d) => ATTRIBUTES.map((a) => d[a as keyof Day] as number)),
    names: ATTRIBUTES,
    outcome: "tomorrow_max",
    rowLabels: rows.map((d) => d.date),
  };
}

describe("backtest", { timeout: 60_000 }, () => {
  it("a rolling window with step 3: every forecast equals the same row run one by one on the rows strictly before its step", async () => {
    const bt = await backtest(
      days,
      { y: "tomorrow_max", X: ATTRIBUTES, index: "date", lagged: "temp_max" },
      { analysis: "psr", options: { threshold: [0.8, 0] }, window: 60, step: 3, start: -10, progress: "none" },
    );
    expect(bt.rows).toHaveLength(10);
    expect(bt.plan).toMatchObject({ jobs: 10, requests: 4, units: 10, service: "local" });
    expect(bt.labels).toEqual(days.slice(-10).map((d) => d.date));
    for (const [j, row] of bt.rows.entries()) {
      const i = 140 + j;
      const stepStart = 140 + 3 * Math.floor(j / 3);
      expect(row.trainRows).toBe(60);
      expect(row.trainFrom).toBe(days[stepStart - 60].date);
      expect(row.trainTo).toBe(days[stepStart - 1].date);
      const one = (await psr(
        arrays(stepStart - 60, stepStart),
        { theta: Object.fromEntries(ATTRIBUTES.map((a) => [a, days[i][a as keyof Day] as number])) },
        { threshold: [0.8, 0] },
        quiet,
      )) as Prediction;
      expect(row.predicted).toBe(one.yhat);
      expect(row.actual).toBe(days[i].tomorrow_max);
      expect(row.persistence).toBe(days[i].temp_max);
      // The regression baseline is linear regression on the same rows: PSR at threshold 0.
      expect(Math.abs(row.regression! - one.calibrations[1].yhat!)).toBeLessThan(1e-5);
    }
    expect(bt.predictions).toHaveLength(10);
    expect(bt.metrics.map((m) => m.forecaster)).toEqual(["PSR", "linear regression (same window)", "persistence"]);
    expect(bt.metrics[2].hitRate).toBeNull();
    expect(bt.metrics[2].mae).toBeCloseTo(bt.rows.reduce((s, r) => s + Math.abs(r.persistence! - r.actual), 0) / 10, 12);
  });

  it("an expanding window with step 1 and MaxFit: one job per row, each on every row before it", async () => {
    const bt = await backtest(
      days,
      { y: "tomorrow_max", X: ATTRIBUTES, index: "date" },
      { analysis: "maxfit", start: "2012-05-20", end: "2012-05-23", progress: "none" },
    );
    expect(bt.plan).toMatchObject({ jobs: 4, requests: 4 });
    const first = days.findIndex((d) => d.date === "2012-05-20");
    for (const [j, row] of bt.rows.entries()) {
      expect(row.trainRows).toBe(first + j);
      const one = (await maxfit(
        arrays(0, first + j),
        { theta: Object.fromEntries(ATTRIBUTES.map((a) => [a, days[first + j][a as keyof Day] as number])) },
        {},
        quiet,
      )) as Prediction;
      expect(row.predicted).toBe(one.yhat);
      // The expanding window's equations are carried from step to step: the same numbers as summed anew.
      const a = arrays(0, first + j);
      expect(row.regression).toBe(
        olsPredict(
          a.y,
          a.X,
          ATTRIBUTES.map((n) => days[first + j][n as keyof Day] as number),
        ),
      );
      // Without a lagged column the direction is measured from the previous row's outcome.
      expect(row.reference).toBe(days[first + j - 1].tomorrow_max);
      expect(row.persistence).toBeNull();
    }
    expect(bt.metrics).toHaveLength(2);
    const frame = bt.toFrame({ as: "columns" }) as Record<string, unknown[]>;
    expect(frame.date).toEqual(["2012-05-20", "2012-05-21", "2012-05-22", "2012-05-23"]);
    expect(frame.predicted).toEqual(bt.predicted);
  });

  it("a Grid, rolling window of 40, calibration best: each forecast the Grid of the 40 rows before it", async () => {
    const bt = await backtest(
      days,
      { y: "tomorrow_max", X: ATTRIBUTES.slice(0, 4), index: "date" },
      { analysis: "grid", window: 40, start: -3, calibration: "best", progress: "none" },
    );
    expect(bt.rows).toHaveLength(3);
    for (const [j, row] of bt.rows.entries()) {
      const i = days.length - 3 + j;
      const a = arrays(i - 40, i);
      const one = (await grid(
        { ...a, X: a.X.map((x) => x.slice(0, 4)), names: ATTRIBUTES.slice(0, 4) },
        { theta: Object.fromEntries(ATTRIBUTES.slice(0, 4).map((n) => [n, days[i][n as keyof Day] as number])) },
        {},
        quiet,
      )) as Prediction;
      expect(row.predicted).toBe(one.yhat);
      expect(bt.predictions[j].impact).toEqual(one.impact);
    }
  });

  it("locally every window runs in the embedded service's lane: each Prediction as rbp.psr gives it, one job and one unit per row, each job readable over HTTP", async () => {
    const connection = await connect();
    const before = (await connection.quota()).used;
    const posts = vi.spyOn(connection.client, "submit");
    const bt = await backtest(days, { y: "tomorrow_max", X: ATTRIBUTES, index: "date" }, { options: { threshold: [0.8, 0.2] }, start: -4, progress: "none" });
    // Nothing went through HTTP.
    expect(posts).not.toHaveBeenCalled();
    posts.mockRestore();
    expect(bt.plan).toMatchObject({ jobs: 4, requests: 4, units: 4, service: "local" });
    expect((await connection.quota()).used - before).toBe(4);
    const ids = new Set(bt.predictions.map((p) => p.receipt.job_id));
    expect(ids.size).toBe(4);
    for (const [j, p] of bt.predictions.entries()) {
      const i = days.length - 4 + j;
      const one = (await psr(
        arrays(0, i),
        { theta: Object.fromEntries(ATTRIBUTES.map((a) => [a, days[i][a as keyof Day] as number])) },
        { threshold: [0.8, 0.2] },
        quiet,
      )) as Prediction;
      expect(p.result).toStrictEqual(one.result);
      expect(p.context).toStrictEqual({ ...one.context, rowLabels: days.slice(0, i).map((d) => d.date) });
      expect(p.thetaLabel).toBe(days[i].date);
      expect(p.request).toEqual({ ...one.request, theta: one.theta });
      // A real job of the service: its result read over HTTP is the same.
      expect(await connection.client.result(p.receipt)).toStrictEqual(p.result);
    }
  });

  it("locally a step the service would refuse refuses the whole backtest, naming the step and the field; nothing is charged", async () => {
    const connection = await connect();
    const before = (await connection.quota()).used;
    // The first steps have fewer rows than attributes: the POST of that step would be refused.
    await expect(backtest(days, { y: "tomorrow_max", X: ATTRIBUTES, index: "date" }, { minTrain: 3, start: 3, end: 12, progress: "none" })).rejects.toThrow(
      /the step from row 2012-01-04: X: expected more rows than columns \(N > K\)/,
    );
    await expect(
      backtest(days, { y: "tomorrow_max", X: ATTRIBUTES }, { options: { threshold: [2] } as never, start: -3, progress: "none" }),
    ).rejects.toMatchObject({ kind: "invalid-request", field: expect.stringMatching(/^options\.threshold/) });
    expect((await connection.quota()).used).toBe(before);
  });

  it("locally a job that fails on the service fails the backtest with its reason and row, as over HTTP", async () => {
    const constant = days.map((d) => ({ ...d, one: 1 }));
    const error = await backtest(constant, { y: "tomorrow_max", X: [...ATTRIBUTES, "one"], index: "date" }, { start: -2, progress: "none" }).catch(
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ kind: "job-failed", message: expect.stringMatching(/row 2012-05-2\d: .*singular/) });
  });

  it("locally a backtest the plan cannot pay for is refused whole before any job runs", async () => {
    try {
      const small = await connect({ hosted: false, env: {}, envFile: false, local: { workers: 2, quota: 5 } });
      await expect(backtest(days, { y: "tomorrow_max", X: ATTRIBUTES }, { start: -6, progress: "none" })).rejects.toMatchObject({
        kind: "quota",
        message: expect.stringMatching(/costs 6 units and the plan has 5 left/),
      });
      expect((await small.quota()).used).toBe(0);
    } finally {
      await connect({ hosted: false, env: {}, envFile: false, local: { workers: 2 }, fresh: true });
    }
  });

  it("the lane's reader of the service's own results gives what the validating reader gives (PSR, MaxFit, Grid)", () => {
    const a = arrays(0, 80);
    const data = datasetFromRows(a.y, a.X);
    const theta = Float64Array.from(a.X[79] as number[]);
    const cases: Array<["psr" | "maxfit" | "grid", Record<string, unknown>]> = [
      ["psr", { threshold: [0, 0.5] }],
      ["maxfit", {}],
      ["grid", {}],
    ];
    for (const [analysis, options] of cases) {
      const json = encodeJson(runAnalysis(analysis, data, theta, options as never), 6);
      expect(fromOwnV3Results(JSON.parse(json))).toStrictEqual(fromV3Results(JSON.parse(json)));
    }
  });

  it("bad settings are refused naming them, before anything is submitted", async () => {
    await expect(backtest(days, { y: "tomorrow_max", X: ATTRIBUTES }, { start: 3 })).rejects.toThrow(/start .* at least 8 \(minTrain\)/);
    await expect(backtest(days, { y: "tomorrow_max", X: ATTRIBUTES }, { step: 0 })).rejects.toThrow(/step must be a positive integer/);
    await expect(backtest(days, { y: "tomorrow_max", X: ATTRIBUTES, index: "date" }, { start: "2031-01-01" })).rejects.toThrow(
      /no row is labelled "2031-01-01"/,
    );
    await expect(backtest(days, { y: "tomorrow_max", X: ATTRIBUTES }, { window: 5 })).rejects.toThrow(/window \(5\) is smaller than minTrain/);
  });
});

describe("metrics and the regression baseline", { timeout: 60_000 }, () => {
  const row = (actual: number, reference: number | null): BacktestRow => ({
    label: "",
    position: 0,
    actual,
    predicted: null,
    regression: null,
    persistence: null,
    reference,
    trainRows: 0,
    trainFrom: "",
    trainTo: "",
  });

  it("MAE, RMSE, correlation and hit rate by hand", () => {
    const rows = [row(1, 0), row(2, 3), row(4, 4), row(3, 1)];
    const forecasts = [2, 2, 5, 1];
    const m = metricsOf("f", rows, (r) => forecasts[rows.indexOf(r)]);
    expect(m.n).toBe(4);
    expect(m.mae).toBeCloseTo((1 + 0 + 1 + 2) / 4, 12);
    expect(m.rmse).toBeCloseTo(Math.sqrt((1 + 0 + 1 + 4) / 4), 12);
    // Directions: up/up (hit), down/down (2 < 3: hit), unchanged actual (left out), up/flat (miss).
    expect(m.hitRate).toBeCloseTo(2 / 3, 12);
    const mf = 2.5;
    const ma = 2.5;
    const cov = forecasts.reduce((s, f, i) => s + (f - mf) * (rows[i].actual - ma), 0);
    const sf = forecasts.reduce((s, f) => s + (f - mf) ** 2, 0);
    const sa = rows.reduce((s, r) => s + (r.actual - ma) ** 2, 0);
    expect(m.correlation).toBeCloseTo(cov / Math.sqrt(sf * sa), 12);
  });

  it("OLS recovers an exact linear law, skips incomplete rows and says null when collinear", () => {
    const X = [
      [1, 2],
      [2, 1],
      [3, 5],
      [4, 4],
      [null, 1],
      [5, 0],
    ];
    const y = X.map((x) => (x[0] === null ? 999 : 3 + 2 * x[0] - x[1]!));
    expect(olsPredict(y, X, [10, 1])).toBeCloseTo(22, 9);
    expect(
      olsPredict(
        [1, 2, 3],
        [
          [1, 2],
          [2, 4],
          [3, 6],
        ],
        [1, 2],
      ),
    ).toBeNull();
  });
});

describe("against the hosted service", { timeout: 60_000 }, () => {
  let hosted: LocalService;
  let connection: Connection;
  const KEY = "backtest-hosted-key-7d2e";
  beforeAll(async () => {
    hosted = await startLocalService({ port: 0, apiKey: KEY, accessId: "analyst", workers: 1, quota: 12 });
    connection = await connect({ baseUrl: hosted.url, apiKey: KEY, accessId: "analyst", env: {}, envFile: false });
  });
  afterAll(async () => {
    await hosted.close();
  });

  it("says the jobs and units first; above the threshold it needs confirm: true; beyond the quota it refuses; nothing is charged", async () => {
    const log: string[] = [];
    const spec = { y: "tomorrow_max", X: ATTRIBUTES, index: "date" };
    await expect(backtest(days, spec, { start: -10, connection, confirmAbove: 5, log: (l) => log.push(l), progress: "none" })).rejects.toThrow(
      /would spend 10 quota units .* nothing was submitted/,
    );
    expect(log[0]).toMatch(/10 predictions in 10 requests: 10 jobs, 10 quota units on the hosted service/);
    await expect(backtest(days, spec, { start: -13, connection, confirm: true, log: () => undefined, progress: "none" })).rejects.toThrow(
      /needs 13 quota units but the plan has 12 left/,
    );
    expect((await connection.quota()).used).toBe(0);
    const bt = await backtest(days, spec, { start: -10, step: 5, connection, confirm: true, confirmAbove: 5, log: () => undefined, progress: "none" });
    expect(bt.plan).toMatchObject({ jobs: 10, requests: 2, units: 10, service: "hosted" });
    expect((await connection.quota()).used).toBe(10);
    expect(bt.predictions.every((p) => p.service === "hosted")).toBe(true);
  });
});

describe("one transport: the embedded lane and a remote service give the same backtest", { timeout: 60_000 }, () => {
  let remote: LocalService;
  let viaHttp: Connection;
  const KEY = "backtest-twin-key-41c9";
  beforeAll(async () => {
    await connect({ hosted: false, env: {}, envFile: false, local: { workers: 2 } });
    remote = await startLocalService({ port: 0, apiKey: KEY, accessId: "analyst", workers: 2 });
    // Beside the current (embedded) connection: a connection to another service by URL and key, as to a hosted one.
    const settings = readSettings({ baseUrl: remote.url, apiKey: KEY, accessId: "analyst", env: {}, envFile: false });
    viaHttp = new Connection("hosted", createClient({ settings }), settings);
  });
  afterAll(async () => {
    await viaHttp.close();
    await remote.close();
  });

  it("rows, metrics, Predictions and the progress line's counts agree, step by step and as experiments", async () => {
    const local = await connect();
    expect(local.lane).toBeDefined();
    expect(viaHttp.lane).toBeUndefined();
    const spec = { y: "tomorrow_max", X: ATTRIBUTES, index: "date", lagged: "temp_max" };
    for (const step of [1, 3]) {
      const run = async (on: Connection) => {
        const events: ProgressEvent[] = [];
        const bt = await backtest(days, spec, {
          options: { threshold: [0.8, 0] },
          start: -7,
          step,
          connection: on,
          log: () => undefined,
          progress: (e) => events.push(e),
        });
        return { bt, counts: events.map((e) => e.rows) };
      };
      const lane = await run(local);
      const client = await run(viaHttp);
      expect(lane.bt.plan).toEqual({ ...client.bt.plan, service: "local" });
      expect(lane.bt.rows).toStrictEqual(client.bt.rows);
      expect(lane.bt.metrics).toStrictEqual(client.bt.metrics);
      expect(lane.bt.predictions.map((p) => p.result)).toStrictEqual(client.bt.predictions.map((p) => p.result));
      expect(lane.bt.predictions.map((p) => p.title)).toEqual(client.bt.predictions.map((p) => p.title));
      // The same counts (steps end in any order; each adds its rows at once) and the same last line.
      const added = (counts: Array<ProgressEvent["rows"]>) => counts.map((c, k) => (c?.done ?? 0) - (counts[k - 1]?.done ?? 0)).sort();
      expect(added(lane.counts)).toEqual(added(client.counts));
      expect(lane.counts[lane.counts.length - 1]).toEqual({ done: 7, failed: 0, total: 7 });
      expect(client.counts[client.counts.length - 1]).toEqual({ done: 7, failed: 0, total: 7 });
    }
  });
});
