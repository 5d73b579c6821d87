/**
 * What each walkthrough notebook must show once executed: at least `charts` plotly charts
 * (outputs with application/vnd.plotly.v1+json, which the browser check then finds drawn), at
 * least `tables` HTML tables (text/html outputs holding a <table>), and `strings` somewhere in its
 * outputs (a string, or a pattern). `quotes` are the numbers (and words) the prose quotes from an
 * output: each must be in a markdown cell and in the executed outputs, so the prose cannot drift
 * from what the notebook computes. `stderr` lists the stderr lines a notebook means to show (any
 * other stderr output fails it).
 *
 * Exercises are not listed here: every numbered walkthrough has at least two cells tagged
 * `exercise`, each followed by a cell tagged `check`, and its solutions in
 * notebooks/solutions/<name>.json (scripts/notebooks/lib.ts checks both runs).
 */
export interface Expectation {
  /** What the notebook teaches, in a line (printed by the runner). */
  about: string;
  charts: number;
  tables: number;
  strings?: Array<string | RegExp>;
  /** Text the prose quotes from an output: in a markdown cell and in the outputs. */
  quotes?: string[];
  stderr?: Array<string | RegExp>;
}

export const EXPECTATIONS: Record<string, Expectation> = {
  "01-relevance-by-hand": {
    about: "relevance by hand on 34 cars, checked against the helper: moments, Mahalanobis, similarity, informativeness, relevance, one PSR, fit, MaxFit, Grid, the cars of 1977 out of sample",
    charts: 4,
    tables: 9,
    strings: [/informativeness of θ +[\d.]+ +[\d.]+ +[\d.e-]+ +yes/, /forecast ŷ = Σ wᵢ yᵢ +[\d.]+ +[\d.]+ +[\d.e-]+ +yes/, /ŷ_grid +[\d.]+ +[\d.]+ +[\d.e-]+ +yes/, "by hand     relevance       0.25  20.2497\nrbp.maxfit  relevance       0.25  20.2497"],
    quotes: ["34 cars", "17 of 34", "24 cells", "28 cars of 1977", "2.16", "2.07", "5.77"],
  },
  "02-psr-thresholds": {
    about: "PSR across thresholds: relevance, weights, threshold 0 = regression, the explore slider, censored weights, censor type, operator, unit, a backtest against regression and the mean",
    charts: 7,
    tables: 7,
    strings: ["yhat and fit across thresholds", "one panel per threshold", "weight of every day not kept", "similarity censor: yhat", "Out of sample:", "mean of the past"],
    quotes: ["1,459", "292", "1.000497", "5.84", "1.75", "2.11", "5.6"],
  },
  "03-maxfit": {
    about: "how MaxFit picks: every candidate, the objectives, ties, the pick depending on theta, a backtest of 2000 and 2005 against regression and the mean",
    charts: 4,
    tables: 6,
    strings: ["← MaxFit's pick", "What each objective picks", "3 of 3 rows done", "Out of sample: 124 country-years"],
    quotes: ["0.3167", "0.3399", "0.07082", "0.04092", "0.017016", "0.014631", "3.2", "3.16", "9.88", "124 country-years"],
  },
  "04-grid": {
    about: "a Grid from rows to forecast: spec, progress, headline, show(), observations, a backtest of 1980-1982 against regression and the mean, defaults, quota, report",
    charts: 4,
    tables: 7,
    strings: ["Grid prediction of Miles_per_Gallon", "Impact on Fit and Impact on Prediction", "linear regression", "Out of sample: 85 cars of 1980-1982", "report written to notebooks/reports/04-grid.html"],
    quotes: ["5.08", "4.38", "11", "0.549216"],
  },
  "05-grid-constraints": {
    about: "min_k, max_k, allowed_k, required_attributes, attribute_groups, attribute_combi, max_iter: combinations and forecasts",
    charts: 4,
    tables: 1,
    strings: [
      /every combination \(default\) +63 /,
      /sizes 2 to 3 \(min_k, max_k\) +35 /,
      /sizes 1 and 6 only \(allowed_k\) +7 /,
      /Weight always in \(required_attributes\) +32 /,
      /as blocks \(attribute_groups\) +15 /,
      /three chosen combinations \(attribute_combi\) +3 /,
      /a sample of 20 \(max_iter, seed\) +20 /,
      "quota used by the refused requests: 0",
    ],
  },
  "06-experiment": {
    about: "31 rows of theta in one call: an experiment, its table and chart; rbp.backtest against regression and persistence, rows labelled by date",
    charts: 3,
    tables: 3,
    strings: [
      "31 of 31 rows completed, 0 failed",
      "quota used by this call: 31 units",
      "31 jobs in 31 requests on the local service",
      "mean absolute error",
      /persistence +\d+\.\d\d/,
      "hit rate",
      "Next-day maximum temperature, January 2015",
      "first row: 2015-01-01",
      // Rows labelled by their dates (index: "date"), in the table and the one row's title.
      /<td[^>]*>2015-01-31<\/td>/,
      /PSR prediction of tomorrow_max for 2015-01-\d\d/,
    ],
  },
  "07-fields-large-results": {
    about: "single fields of a 200,000-row PSR, a field above 4 MiB, free reads, a large result as table and WebGL chart",
    charts: 1,
    tables: 1,
    strings: ["insights/relevance: shape [200000]", "FieldTooLargeError", "quota used by these reads: 0", "(scattergl)", "20,000 observations"],
  },
  "08-api-v2": {
    about: "the same Grid through API v3 and v2, option names side by side, both wire formats",
    charts: 1,
    tables: 0,
    strings: ["(API v2)", "version 2 names on version 3", "censor_type/options.eval_type", "POST v2 → 200", "marginal_contribution_to_conviction", "POST v3 → 200", "stand-in service stopped"],
  },
  "09-missing-data": {
    about: "missing outcomes, attributes and theta; pairwise and complete moments; Grid per combination; predicting missing outcomes",
    charts: 5,
    tables: 2,
    strings: ["dropped 8 rows with no Miles_per_Gallon", "relevance —, weight 0", "composite weight", "every circumstance needs a number", "8 of 8 rows done"],
  },
  "10-hosted-service": {
    about: "RBP_BASE_URL, CSA_API_KEY, CSA_ACCESS_ID against a stand-in hosted-like service on loopback: quota, errors, back to local",
    charts: 3,
    tables: 1,
    strings: ["mode: hosted", "hosted service", "the message contains the key: false", "the plan's quota is spent", "RBP_BASE_URL", "stand-in stopped"],
  },
};
