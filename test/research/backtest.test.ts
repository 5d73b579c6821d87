/**
 * backtest(): each evaluation row predicted from the rows strictly before it, on the embedded
 * service (real HTTP on loopback, the worker pool), equal to the same rows run one by one; the
 * regression baseline equal to PSR at threshold 0 (linear regression); metrics by hand; the
 * hosted service's plan, confirmation and quota check before anything is submitted.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backtest, connect, disconnect, grid, psr, maxfit, type Connection, Prediction } from "../../src/notebook/index.js";
import { metricsOf, olsPredict, type BacktestRow } from "../../src/notebook/backtest.js";
import { startLocalService, type LocalService } from "../../src/service/index.js";
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
