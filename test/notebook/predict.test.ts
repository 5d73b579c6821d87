/**
 * grid / maxfit / psr on the embedded service (real HTTP on loopback), from danfo frames, row
 * objects and plain arrays: the numbers (quickstart gold vectors), the typed fields, attribute and
 * row names flowing into tables and charts, experiments with per-row progress, and the progress
 * events of a call.
 */
import type { MimeBundle } from "../../src/display/index.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import * as dfd from "danfojs";
import {
  connect,
  defaults,
  disconnect,
  grid,
  isExperiment,
  maxfit,
  psr,
  ExperimentPrediction,
  Prediction,
  type ProgressEvent,
} from "../../src/notebook/index.js";
import { PLOTLY_MIME, JUPYTER_DISPLAY, figureTitle } from "../../src/display/index.js";
import { NAMES, PEOPLE, gold, goldCase, near, quickstartFrame, quickstartRows, quickstartTheta } from "./helpers.js";

beforeAll(async () => {
  await connect({ hosted: false, env: {}, envFile: false, local: { workers: 2 } });
});
afterAll(async () => {
  await disconnect();
});

const quiet = { progress: "none" as const };

describe("grid", () => {
  it("from a danfo DataFrame: the published quickstart numbers, with names", async () => {
    const p = await grid(quickstartFrame(), { y: "Points", theta: quickstartTheta() }, {}, quiet);
    expect(p).toBeInstanceOf(Prediction);
    const expected = goldCase("grid default").expect;
    expect(near(p.yhat, expected.yhat)).toBe(true);
    expect(near(p.fit, expected.fit)).toBe(true);
    expect(near(p.adjustedFit, expected.adjusted_fit)).toBe(true);
    expect(p.analysis).toBe("grid");
    expect(p.k).toBe(5);
    expect(p.combinations).toBe(31);
    expect(p.outcome).toBe("Points");
    expect(p.attributes).toEqual(NAMES);
    expect(p.rowLabels).toEqual(PEOPLE);
    expect(p.observationCount).toBe(7);
    expect(p.theta).toEqual(gold.inputs.theta);
    expect(p.thresholds).toEqual([0, 0.2, 0.5, 0.8]);
    expect(p.weights).toHaveLength(7);
    expect(p.include).toBeUndefined();
    expect(p.relevance!.map((v) => Math.round(v! * 1e6) / 1e6)).toEqual(goldCase("scores").expect.relevance);
    expect(p.impact!.map((i) => i.attribute)).toEqual(NAMES);
    expect(p.receipt.job_id).toBeGreaterThan(0);
    expect(p.receipt.job_code).toMatch(/\S/);
    expect(p.title).toBe("Grid prediction of Points");
    expect(p.thetaLabel).toBe("theta");
    expect(p.calibrations).toHaveLength(1);
    expect(p.best.yhat).toBe(p.yhat);

    // Names reach the tables and charts.
    const table = p.table();
    expect(table.html).toContain("yhat (Points)");
    expect(table.html).toContain("Age, Experience, Height, Weight, Score");
    const obs = p.observations({ maxRows: 3 });
    expect(obs.html).toContain("Ann");
    expect(obs.text).toContain("… and 4 more rows");
    const impact = p.impactChart();
    expect(impact.data[0].y).toEqual([...NAMES].reverse());
    expect(p.weightsChart().data[0].x).toEqual(PEOPLE);
    expect(p.relevanceChart().layout.yaxis).toMatchObject({ title: { text: "Points" } });
    expect(p.charts().map(figureTitle)).toEqual([
      "Grid: Impact on Fit and Impact on Prediction by attribute",
      "Grid: weight of each observation",
      "Points against relevance",
    ]);
    // A Grid has no threshold chart: a readable usage error.
    expect(() => p.thresholdChart()).toThrow(/a Grid gives one composite prediction/);
  });

  it("without theta predicts for the last row of X, and says so", async () => {
    const p = await grid(quickstartRows(), { y: "Points" }, {}, quiet);
    expect(p.theta).toBeUndefined();
    expect(p.thetaLabel).toBe("the last row (6)");
    expect(p.receipt.theta_source).toBe("last_row_of_X");
    expect(p.title).toBe("Grid prediction of Points");
  });

  it("takes typed options and a title; notes on the data are kept", async () => {
    const rows: Array<Record<string, unknown>> = quickstartRows();
    rows.push({ Name: "Hal", Points: null, Age: 30, Experience: 2, Height: 70, Weight: 50, Score: 10 });
    const p = await grid(rows, { y: "Points", X: NAMES, theta: quickstartTheta(), title: "Two-attribute Grid" }, { max_k: 2, threshold: [0, 0.5] }, quiet);
    expect(p.title).toBe("Two-attribute Grid");
    expect(p.table().text).toMatch(/^Two-attribute Grid: N = 7 observations/);
    expect(p.table().html).toContain("<caption>Two-attribute Grid: N = 7");
    expect(p.options).toEqual({ max_k: 2, threshold: [0, 0.5] });
    expect(p.combinations).toBe(5 + 10);
    expect(p.notes).toContain("dropped 1 row with no Points");
    expect(p.observationCount).toBe(7);
  });
});

describe("psr and maxfit", () => {
  it("psr across thresholds from row objects: every calibration, the threshold chart", async () => {
    const options = { threshold: [0, 0.2, 0.5, 0.8], censor_type: "relevance" as const };
    const p = await psr(quickstartRows(), { y: "Points", theta: quickstartTheta() }, options, quiet);
    const expected = goldCase("psr thresholds sweep").expect;
    expect(p.calibrations.map((c) => c.threshold)).toEqual([0, 0.2, 0.5, 0.8]);
    p.calibrations.forEach((c, t) => {
      expect(near(c.yhat, expected.yhat[t])).toBe(true);
      expect(near(c.fit, expected.fit[t])).toBe(true);
      expect(c.censor).toBe("relevance");
    });
    expect(p.yhat).toBe(p.calibrations[0].yhat);
    expect(p.best.threshold).toBe(0.8);
    expect(p.include).toHaveLength(7);
    expect(p.combinations).toBeUndefined();
    const chart = p.thresholdChart();
    expect(chart.data.map((d) => d.name)).toEqual(["yhat", "fit"]);
    expect(chart.layout.yaxis).toMatchObject({ title: { text: "yhat (Points)" } });
    expect(() => p.impactChart()).toThrow(/come from a Grid/);
  });

  it("maxfit finds the published winner", async () => {
    const c = goldCase("maxfit default thresholds");
    const p = await maxfit(quickstartFrame(), { y: "Points", theta: quickstartTheta() }, { objective: "adjusted_fit" }, quiet);
    expect(near(p.yhat, c.expect.yhat)).toBe(true);
    expect(near(p.adjustedFit, c.expect.adjusted_fit)).toBe(true);
    expect(p.calibrations[0].threshold).toBe(0.8);
    expect(p.calibrations[0].censor).toBe("relevance");
  });

  it("plain arrays name their columns x1..xK and the outcome y", async () => {
    const { y, X } = gold.inputs;
    const p = await psr({ y, X }, { theta: 2 }, {}, quiet);
    expect(p.attributes).toEqual(["x1", "x2", "x3", "x4", "x5"]);
    expect(p.outcome).toBe("y");
    expect(p.thetaLabel).toBe("2");
    expect(p.theta).toEqual(X[2]);
  });
});

describe("experiments: several theta rows", () => {
  it("one Prediction per row, per-row progress, table and chart by row label", async () => {
    const events: ProgressEvent[] = [];
    const circumstances = new dfd.DataFrame(
      { Age: [24, 30, 35], Experience: [5, 2, 1], Height: [81, 75, 70], Weight: [60, 55, 50], Score: [11, 9, 20] },
      { index: ["rookie", "veteran", "captain"] },
    );
    const e = await psr(quickstartFrame(), { y: "Points", theta: circumstances }, { threshold: [0, 0.5] }, { progress: (ev) => events.push(ev) });
    expect(isExperiment(e)).toBe(true);
    if (!isExperiment(e)) return;
    expect(e).toBeInstanceOf(ExperimentPrediction);
    expect(e.rows).toHaveLength(3);
    expect(e.labels).toEqual(["rookie", "veteran", "captain"]);
    expect(e.failures).toEqual([]);
    expect(e.rows[0].theta).toEqual(gold.inputs.theta);
    expect(e.rows[0].title).toBe("PSR prediction of Points for rookie");
    expect(e.yhat).toEqual(e.rows.map((r) => r.yhat));
    expect(e.state.status).toBe("completed");
    expect(e.receipt.n_rows).toBe(3);
    // The same numbers as one job for that circumstance.
    const single = await psr(quickstartFrame(), { y: "Points", theta: quickstartTheta() }, { threshold: [0, 0.5] }, quiet);
    expect(e.rows[0].yhat).toBe(single.yhat);

    expect(e.table().html).toContain("veteran");
    const chart = e.chart();
    expect(chart.data[0].x).toEqual(["rookie", "veteran", "captain"]);
    expect(e.bundle()["text/html"]).toContain("rbp-figure");

    // Progress: rows done out of the total, one final event.
    expect(events[0].status).toBe("submitting");
    const withRows = events.filter((ev) => ev.rows !== undefined);
    expect(withRows.length).toBeGreaterThan(0);
    expect(withRows.every((ev) => ev.rows!.total === 3)).toBe(true);
    const final = events[events.length - 1];
    expect(final.final).toBe(true);
    expect(final.status).toBe("completed");
    expect(final.rows).toEqual({ done: 3, failed: 0, total: 3 });
    expect(final.experimentId).toBe(e.receipt.experiment_id);
    expect(final.text).toMatch(/^PSR · experiment \d+ · 3 of 3 rows done · completed in \d+\.\d\d s · local service$/);
    expect(events.filter((ev) => ev.final)).toHaveLength(1);
  });

  it("row positions make an experiment too, labelled by the frame's index", async () => {
    const e = await grid(quickstartFrame(), { y: "Points", theta: [0, 6] }, { max_k: 1 }, quiet);
    expect(isExperiment(e)).toBe(true);
    if (!isExperiment(e)) return;
    expect(e.labels).toEqual(["Ann", "Gus"]);
    expect(e.rows.every((r) => r.k === 5)).toBe(true);
  });
});

describe("a single call's progress events", () => {
  it("submitting, then the job's status, then one final line with the job id and service", async () => {
    const events: ProgressEvent[] = [];
    const p = await grid(quickstartRows(), { y: "Points", theta: quickstartTheta() }, {}, { progress: (e) => events.push(e) });
    expect(events[0]).toMatchObject({ analysis: "grid", status: "submitting", service: "local", final: false });
    expect(events.some((e) => e.jobId === p.receipt.job_id && !e.final)).toBe(true);
    const final = events[events.length - 1];
    expect(final).toMatchObject({ status: "completed", final: true, jobId: p.receipt.job_id });
    expect(final.text).toBe(`Grid · job ${p.receipt.job_id} · completed in ${(final.elapsedMs / 1000).toFixed(2)} s · local service`);
    expect(events.slice(0, -1).every((e) => !e.final)).toBe(true);
    expect(final.elapsedMs).toBeGreaterThanOrEqual(events[0].elapsedMs);
  });
});

describe("defaults(analysis)", () => {
  it("lists the service's defaults in v3 names", () => {
    expect(defaults("psr")).toMatchObject({
      threshold: [0.5],
      censor_type: "relevance",
      censor_unit: "percent",
      censor_operator: "gte",
      adj_fit_multiplier: "K",
      missing_moments: "pairwise",
    });
    expect(defaults("maxfit")).toMatchObject({ threshold: [0, 0.2, 0.5, 0.8], censor_type: "both", objective: "kfit" });
    const g = defaults("grid");
    expect(g).toMatchObject({ threshold: [0, 0.2, 0.5, 0.8], censor_type: "both", max_iter: 1000, seed: 42, retain_grid_objects: false });
    expect(g.min_k).toBeUndefined();
    expect(() => defaults("lasso" as never)).toThrow(RangeError);
  });

  it("are what the service uses: spelling them out gives the same prediction", async () => {
    const a = await grid(quickstartRows(), { y: "Points", theta: quickstartTheta() }, {}, quiet);
    const b = await grid(quickstartRows(), { y: "Points", theta: quickstartTheta() }, defaults("grid"), quiet);
    expect(b.yhat).toBe(a.yhat);
    expect(b.fit).toBe(a.fit);
  });
});

describe("the display symbol and JSON", () => {
  it("a prediction's bundle has its summary and charts; JSON has the typed fields", async () => {
    const p = await grid(quickstartFrame(), { y: "Points", theta: quickstartTheta() }, {}, quiet);
    const bundle = p[JUPYTER_DISPLAY]() as MimeBundle;
    expect(bundle["text/plain"]).toContain("Grid prediction of Points: yhat 3.28524, fit 0.08769, adjusted fit 1.05774, K 5, 31 combinations");
    expect(bundle["text/html"]).toContain("yhat (Points)");
    expect(bundle["text/html"]!.match(/class="rbp-figure"/g)).toHaveLength(3);
    const fig = p.weightsChart()[JUPYTER_DISPLAY]() as MimeBundle;
    expect(fig[PLOTLY_MIME]).toBeDefined();
    expect(Object.keys(p.weightsChart())).toEqual(["data", "layout", "config"]);
    const json = JSON.parse(JSON.stringify(p));
    expect(json).toMatchObject({ analysis: "grid", outcome: "Points", attributes: NAMES, k: 5, combinations: 31, service: "local" });
    expect(near(json.yhat, 3.285239)).toBe(true);
    expect(json.result.weights).toHaveLength(7);
  });
});
