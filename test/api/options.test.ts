import { describe, expect, it } from "vitest";
import { InvalidInputError } from "../../src/engine/errors.js";
import { RETAIN_KEYS, resolveGridOptions, resolveMaxFitOptions, resolvePsrOptions } from "../../src/engine/options.js";
import {
  normalizeOptions,
  toV2Options,
  toV3Options,
  type Analysis,
  type Dialect,
  type GivenGridOptions,
  type GivenMaxFitOptions,
  type GivenPsrOptions,
} from "../../src/api/options.js";

function norm(analysis: Analysis, raw: Record<string, unknown>, dialect: Dialect = "v3") {
  return normalizeOptions(analysis, raw, dialect);
}

function fieldOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidInputError);
    return (e as InvalidInputError).field;
  }
  throw new Error("expected an InvalidInputError");
}

describe("v2 / legacy names map to engine names", () => {
  it.each<[Analysis, Record<string, unknown>, Record<string, unknown>]>([
    ["maxfit", { eval_type: "similarity" }, { censor_type: "similarity" }],
    ["grid", { eval_type: "all" }, { censor_type: "both" }],
    ["psr", { is_threshold_percent: true }, { censor_unit: "percent" }],
    ["psr", { is_threshold_percent: false }, { censor_unit: "score" }],
    ["psr", { most_eval: true }, { censor_operator: "gte" }],
    ["psr", { most_eval: false }, { censor_operator: "lte" }],
    ["grid", { k: 2 }, { min_k: 2 }],
    ["grid", { _seed: 7 }, { seed: 7 }],
    ["psr", { _output_scale: "default" }, { prediction_scale: "response" }],
    ["psr", { _output_scale: "logistic" }, { prediction_scale: "logistic" }],
    ["psr", { verify_missing_data: true }, { missing_moments: "complete" }],
    ["maxfit", { verify_missing_data: false }, { missing_moments: "pairwise" }],
    ["maxfit", { _inner_parallel: "off" }, { inner_parallel: "off" }],
    ["grid", { _inner_parallel: false }, { inner_parallel: "off" }],
    ["grid", { _retain_grid_objects: true }, { retain: [...RETAIN_KEYS] }],
    ["grid", { _retain_grid_objects: false }, { retain: [] }],
    ["grid", { _retain_grid_objects: ["yhat_cells", "n_cells"] }, { retain: ["yhat_cells", "n_cells"] }],
    ["grid", { _is_retain_all_grid_objects: true }, { retain: [...RETAIN_KEYS] }],
    ["grid", { _is_retain_all_grid_objects: false }, { retain: [] }],
  ])("%s %j -> %j", (analysis, raw, expected) => {
    const { options, warnings } = norm(analysis, raw, "v2");
    expect(options).toEqual(expected);
    expect(warnings).toEqual([]);
  });

  it("v2 names are read in v3 too, and v3 names in v2 (section 4.6)", () => {
    expect(norm("psr", { most_eval: false }, "v3").options).toEqual({ censor_operator: "lte" });
    expect(norm("grid", { min_k: 2, censor_type: "similarity" }, "v2").options).toEqual({ min_k: 2, censor_type: "similarity" });
  });

  it("null means default: the key is dropped without a warning", () => {
    const { options, warnings } = norm("grid", { threshold: null, eval_type: null, k: null, cov_inv: null, foo: null }, "v2");
    expect(options).toEqual({});
    expect(warnings).toEqual([]);
  });
});

describe("value aliases (case-insensitive)", () => {
  it.each<[Analysis, string, unknown, unknown]>([
    ["psr", "censor_operator", "greater_than", "gt"],
    ["psr", "censor_operator", "GT", "gt"],
    ["psr", "censor_operator", ">", "gt"],
    ["psr", "censor_operator", "less_than", "lt"],
    ["psr", "censor_operator", "<", "lt"],
    ["psr", "censor_operator", "Greater_Than_Or_Equal_To", "gte"],
    ["psr", "censor_operator", ">=", "gte"],
    ["psr", "censor_operator", "less_than_or_equal_to", "lte"],
    ["psr", "censor_operator", "<=", "lte"],
    ["psr", "prediction_scale", "Default", "response"],
    ["psr", "prediction_scale", "LOGISTIC", "logistic"],
    ["psr", "adj_fit_multiplier", "k", "K"],
    ["psr", "adj_fit_multiplier", "K", "K"],
    ["psr", "adj_fit_multiplier", "k_multiplier", "K"],
    ["psr", "adj_fit_multiplier", "1", "identity"],
    ["psr", "adj_fit_multiplier", "none", "identity"],
    ["psr", "adj_fit_multiplier", "Identity", "identity"],
    ["psr", "adj_fit_multiplier", "logarithmic", "log"],
    ["psr", "inv_method", "LU", "gaussian"],
    ["psr", "inv_method", "chol", "cholesky"],
    ["psr", "inv_method", "pinv", "pseudoinverse"],
    ["maxfit", "inner_parallel", "sequential", "off"],
    ["maxfit", "inner_parallel", "seq", "off"],
    ["maxfit", "inner_parallel", "0", "off"],
    ["maxfit", "inner_parallel", 0, "off"],
    ["maxfit", "inner_parallel", "False", "off"],
    ["maxfit", "inner_parallel", "AUTO", "auto"],
    ["psr", "missing_moments", "Complete", "complete"],
    ["maxfit", "objective", "K_FIT", "kfit"],
    ["maxfit", "objective", "Adjusted_Fit", "adjusted_fit"],
    ["maxfit", "censor_type", "BOTH", "both"],
    ["psr", "censor_type", "Similarity", "similarity"],
    ["psr", "censor_unit", "SCORE", "score"],
  ])("%s %s %j -> %j", (analysis, key, value, expected) => {
    expect(norm(analysis, { [key]: value }).options).toEqual({ [key]: expected });
  });

  it("an unknown value is rejected naming the key the caller wrote", () => {
    expect(fieldOf(() => norm("psr", { censor_operator: "ge" }))).toBe("options.censor_operator");
    expect(fieldOf(() => norm("maxfit", { eval_type: "relevant" }, "v2"))).toBe("options.eval_type");
    expect(fieldOf(() => norm("psr", { _output_scale: "probit" }, "v2"))).toBe("options._output_scale");
    expect(fieldOf(() => norm("psr", { is_threshold_percent: "yes" }, "v2"))).toBe("options.is_threshold_percent");
    expect(fieldOf(() => norm("psr", { adj_fit_multiplier: 1 }))).toBe("options.adj_fit_multiplier");
  });

  it("the expected text lists the canonical values", () => {
    try {
      norm("psr", { inv_method: "qr" });
      expect.unreachable();
    } catch (e) {
      expect((e as InvalidInputError).expected).toMatch(/"gaussian", "cholesky", "pseudoinverse"/);
      expect((e as Error).message).toMatch(/got "qr"/);
    }
  });
});

describe("conflicting spellings", () => {
  it.each<[Analysis, Record<string, unknown>, string]>([
    ["maxfit", { censor_type: "relevance", eval_type: "similarity" }, "options.censor_type/options.eval_type"],
    ["maxfit", { eval_type: "similarity", censor_type: "relevance" }, "options.censor_type/options.eval_type"],
    ["grid", { k: 2, min_k: 3 }, "options.min_k/options.k"],
    ["psr", { censor_unit: "percent", is_threshold_percent: false }, "options.censor_unit/options.is_threshold_percent"],
    ["psr", { censor_operator: "gt", most_eval: true }, "options.censor_operator/options.most_eval"],
    ["psr", { prediction_scale: "logistic", _output_scale: "default" }, "options.prediction_scale/options._output_scale"],
    ["psr", { missing_moments: "pairwise", verify_missing_data: true }, "options.missing_moments/options.verify_missing_data"],
    ["grid", { seed: 1, _seed: 2 }, "options.seed/options._seed"],
    ["maxfit", { inner_parallel: "auto", _inner_parallel: "off" }, "options.inner_parallel/options._inner_parallel"],
    ["grid", { retain_grid_objects: "yhat_cells", retain_all: true }, "options.retain_grid_objects/options.retain_all"],
  ])("%s %j names both keys", (analysis, raw, field) => {
    expect(fieldOf(() => norm(analysis, raw))).toBe(field);
  });

  it("agreeing spellings (after aliases and case) are not a conflict", () => {
    expect(norm("maxfit", { censor_type: "SIMILARITY", eval_type: "similarity" }).options).toEqual({ censor_type: "similarity" });
    expect(norm("psr", { censor_operator: ">=", most_eval: true }).options).toEqual({ censor_operator: "gte" });
    expect(norm("grid", { retain_grid_objects: "n_cells,yhat_cells", _retain_grid_objects: ["yhat_cells", "n_cells"] }).options).toEqual({
      retain: ["n_cells", "yhat_cells"],
    });
  });

  it("k = 1 with any min_k is not a conflict (section 4.3)", () => {
    expect(norm("grid", { k: 1, min_k: 3 }, "v2").options).toEqual({ min_k: 3 });
    expect(norm("grid", { min_k: 3, k: 1 }, "v3").options).toEqual({ min_k: 3 });
    expect(norm("grid", { k: 1 }, "v2").options).toEqual({ min_k: 1 });
  });

  it("the v2 client's k = 1 does not collide with allowed_k", () => {
    const { options } = norm("grid", { k: 1, allowed_k: [1, 3] }, "v2");
    expect(options).toEqual({ allowed_k: [1, 3] });
    expect(resolveGridOptions(options as GivenGridOptions, 4).allowed_k).toEqual([1, 3]);
    // but an explicit k != 1 with allowed_k is left for the engine to reject
    expect(fieldOf(() => resolveGridOptions(norm("grid", { k: 2, allowed_k: [1, 3] }).options as GivenGridOptions, 4))).toBe("options.min_k");
  });

  it("a false retain flag (client default) gives way to a retain list", () => {
    expect(norm("grid", { _is_retain_all_grid_objects: false, _retain_grid_objects: ["k_cells"] }, "v2").options).toEqual({
      retain: ["k_cells"],
    });
    expect(norm("grid", { retain_all: false, retain_grid_objects: "all" }).options).toEqual({ retain: [...RETAIN_KEYS] });
  });
});

describe("unknown and foreign keys are ignored with warnings", () => {
  it("unknown key", () => {
    const { options, warnings } = norm("grid", { foo: 1, threshold: 0.5 });
    expect(options).toEqual({ threshold: [0.5] });
    expect(warnings).toEqual(['ignored option "foo" (not a grid option)']);
  });

  it("grid keys sent to psr (a GridOptions passed to predict_psr)", () => {
    const { options, warnings } = norm("psr", { k: 1, _seed: 3, max_iter: 1000, attribute_combi: null, eval_type: "relevance" }, "v2");
    expect(options).toEqual({ censor_type: "relevance" });
    expect(warnings).toEqual([
      'ignored option "k" (not a psr option)',
      'ignored option "_seed" (not a psr option)',
      'ignored option "max_iter" (not a psr option)',
    ]);
  });

  it("search keys on psr and cov_inv on grid are foreign; cov_inv null is fine", () => {
    expect(norm("psr", { objective: "fit" }).warnings).toEqual(['ignored option "objective" (not a psr option)']);
    expect(
      norm("grid", {
        cov_inv: [
          [1, 0],
          [0, 1],
        ],
      }).warnings,
    ).toEqual(['ignored option "cov_inv" (not a grid option)']);
    expect(norm("grid", { cov_inv: null }).warnings).toEqual([]);
  });

  it("grid + missing-data options: silent in v2, a warning in v3", () => {
    const v2 = norm("grid", { verify_missing_data: true, missing_moments: "complete" }, "v2");
    expect(v2).toEqual({ options: {}, notes: [], warnings: [] });
    const v3 = norm("grid", { missing_moments: "complete" }, "v3");
    expect(v3.options).toEqual({});
    expect(v3.warnings).toHaveLength(1);
    expect(v3.warnings[0]).toMatch(/^ignored option "missing_moments"/);
  });

  it("engine options this engine does not implement get their own note", () => {
    expect(norm("grid", { adjust_impact_for_missing: true }).warnings).toEqual([
      'ignored option "adjust_impact_for_missing" (accepted but not implemented by this engine)',
    ]);
  });
});

describe("thresholds", () => {
  it("a number becomes a one-element list", () => {
    expect(norm("psr", { threshold: 0.3 }).options).toEqual({ threshold: [0.3] });
    expect(norm("psr", { threshold: [0, 0.4] }).options).toEqual({ threshold: [0, 0.4] });
  });

  it("bad thresholds name the element", () => {
    expect(fieldOf(() => norm("psr", { threshold: [0.1, "x"] }))).toBe("options.threshold[1]");
    expect(fieldOf(() => norm("psr", { threshold: [] }))).toBe("options.threshold");
  });

  it("threshold_range [min, max] with stepsize expands to min..max inclusive", () => {
    expect(norm("maxfit", { threshold: null, threshold_range: [0, 0.8], stepsize: 0.2 }, "v2").options).toEqual({
      threshold: [0, 0.2, 0.4, 0.6, 0.8],
    });
    expect(norm("grid", { threshold_range: [0.1, 0.35], stepsize: 0.05 }, "v2").options).toEqual({
      threshold: [0.1, 0.15, 0.2, 0.25, 0.3, 0.35],
    });
    expect(norm("psr", { threshold_range: [0.5, 0.5], stepsize: 0.1 }, "v2").options).toEqual({ threshold: [0.5] });
  });

  it("a longer threshold_range is an explicit list and stepsize is ignored", () => {
    const { options, warnings } = norm("grid", { threshold: null, threshold_range: [0, 0.2, 0.5, 0.8], stepsize: 0.2 }, "v2");
    expect(options).toEqual({ threshold: [0, 0.2, 0.5, 0.8] });
    expect(warnings).toEqual(['ignored option "stepsize" (threshold_range is an explicit list)']);
  });

  it("threshold wins over threshold_range", () => {
    const { options, warnings } = norm("grid", { threshold: [0.5], threshold_range: [0, 0.8], stepsize: 0.2 }, "v2");
    expect(options).toEqual({ threshold: [0.5] });
    expect(warnings).toHaveLength(2);
  });

  it("bad ranges and steps are rejected", () => {
    expect(fieldOf(() => norm("grid", { threshold_range: [0.8, 0], stepsize: 0.2 }))).toBe("options.threshold_range");
    expect(fieldOf(() => norm("grid", { threshold_range: [0, 0.8], stepsize: 0 }))).toBe("options.stepsize");
    expect(fieldOf(() => norm("grid", { threshold_range: [0, 1000], stepsize: 1e-6 }))).toBe("options.stepsize");
  });
});

describe("retain variants", () => {
  it.each<[string, unknown, string[]]>([
    ["retain_grid_objects", true, [...RETAIN_KEYS]],
    ["retain_grid_objects", "true", [...RETAIN_KEYS]],
    ["retain_grid_objects", "ALL", [...RETAIN_KEYS]],
    ["retain_grid_objects", "false", []],
    ["retain_grid_objects", "none", []],
    ["retain_grid_objects", "yhat_cells, N_CELLS", ["yhat_cells", "n_cells"]],
    ["retain_grid_objects", ["combi_cells", "combi_cells", "ysolo_distribution"], ["combi_cells", "ysolo_distribution"]],
    ["retain_all", true, [...RETAIN_KEYS]],
    ["retain_all", false, []],
    ["_retain_grid_objects", ["ysolo_cells"], ["ysolo_cells"]],
  ])("%s %j", (key, value, expected) => {
    expect(norm("grid", { [key]: value }).options).toEqual({ retain: expected });
  });

  it("xi_solo_cells is accepted, dropped and reported", () => {
    const { options, warnings } = norm("grid", { _retain_grid_objects: ["yhat_cells", "xi_solo_cells"] }, "v2");
    expect(options).toEqual({ retain: ["yhat_cells"] });
    expect(warnings).toEqual(['ignored retain key "xi_solo_cells" in "_retain_grid_objects" (not produced by this engine)']);
  });

  it("an unknown retain key or type is rejected", () => {
    expect(fieldOf(() => norm("grid", { retain_grid_objects: "yhat_cells,bogus" }))).toBe("options.retain_grid_objects[1]");
    expect(fieldOf(() => norm("grid", { retain_grid_objects: 3 }))).toBe("options.retain_grid_objects");
    expect(fieldOf(() => norm("grid", { retain_all: "yes" }))).toBe("options.retain_all");
  });
});

describe("PSR and censor_type both (G8)", () => {
  it("v2 PSR eval_type both computes with relevance and warns", () => {
    const { options, warnings } = norm("psr", { eval_type: "both" }, "v2");
    expect(options).toEqual({ censor_type: "relevance" });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/eval_type "both"/);
    expect(resolvePsrOptions(options as GivenPsrOptions, 3).censor_type).toBe("relevance");
  });

  it("eval_type both gives way to an explicit censor_type", () => {
    expect(norm("psr", { eval_type: "both", censor_type: "similarity" }, "v2").options).toEqual({ censor_type: "similarity" });
  });

  it("censor_type both on PSR is passed on for the engine to reject", () => {
    const { options } = norm("psr", { censor_type: "both" });
    expect(options).toEqual({ censor_type: "both" });
    expect(fieldOf(() => resolvePsrOptions(options as GivenPsrOptions, 3))).toBe("options.censor_type");
  });

  it("eval_type both stays both for maxfit and grid", () => {
    expect(norm("maxfit", { eval_type: "both" }, "v2")).toEqual({ options: { censor_type: "both" }, notes: [], warnings: [] });
    expect(norm("grid", { eval_type: "both" }, "v2")).toEqual({ options: { censor_type: "both" }, notes: [], warnings: [] });
  });
});

describe("other value checks", () => {
  it("integers", () => {
    expect(fieldOf(() => norm("grid", { k: 1.5 }, "v2"))).toBe("options.k");
    expect(fieldOf(() => norm("grid", { _seed: -1 }, "v2"))).toBe("options._seed");
    expect(fieldOf(() => norm("grid", { max_iter: 0 }))).toBe("options.max_iter");
  });

  it("cov_inv nested rows become a row-major Float64Array", () => {
    const { options } = normalizeOptions(
      "psr",
      {
        cov_inv: [
          [2, 1],
          [1, 3],
        ],
      },
      "v3",
    );
    expect(options.cov_inv).toEqual(Float64Array.from([2, 1, 1, 3]));
    expect(fieldOf(() => norm("psr", { cov_inv: [[2, 1], [1]] }))).toBe("options.cov_inv");
    expect(
      fieldOf(() =>
        norm("psr", {
          cov_inv: [
            [2, "a"],
            [1, 3],
          ],
        }),
      ),
    ).toBe("options.cov_inv[0][1]");
  });

  it("allowed_k as a single number becomes a list", () => {
    expect(norm("grid", { allowed_k: 2 }).options).toEqual({ allowed_k: [2] });
  });
});

describe("round trips through the client's reverse maps", () => {
  const psr: GivenPsrOptions = {
    threshold: [0, 0.25],
    censor_type: "similarity",
    censor_unit: "score",
    censor_operator: "lte",
    prediction_scale: "logistic",
    adj_fit_multiplier: "identity",
    inv_method: "pseudoinverse",
    include_linear_regression: false,
    missing_moments: "complete",
    cov_inv: Float64Array.from([2, 0.5, 0.5, 1]),
  };
  const maxfit: GivenMaxFitOptions = {
    threshold: [0.1, 0.9],
    censor_type: "both",
    censor_unit: "percent",
    censor_operator: "gt",
    prediction_scale: "response",
    adj_fit_multiplier: "log",
    inv_method: "cholesky",
    missing_moments: "pairwise",
    objective: "adjusted_fit",
    inner_parallel: "off",
  };
  const grid: GivenGridOptions = {
    threshold: [0.2],
    censor_type: "relevance",
    censor_operator: "gte",
    adj_fit_multiplier: "K",
    min_k: 2,
    max_k: 3,
    attribute_combi: undefined,
    required_attributes: [1, 0, 0, 0],
    attribute_groups: [[0, 1, 1, 0]],
    max_iter: 50,
    seed: 9,
    objective: "fit",
    inner_parallel: "auto",
    retain: ["yhat_cells", "k_cells"],
  };
  const cases: Array<[Analysis, Record<string, unknown>]> = [
    ["psr", psr],
    ["maxfit", maxfit],
    ["grid", grid],
  ];
  const dropUndefined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

  it.each(cases)("%s through v2 names", (analysis, options) => {
    const wire = JSON.parse(JSON.stringify(toV2Options(analysis, options)));
    const back = normalizeOptions(analysis, wire, "v2");
    expect(back.warnings).toEqual([]);
    expect(back.options).toEqual(dropUndefined(options));
  });

  it.each(cases)("%s through v3 names", (analysis, options) => {
    const wire = JSON.parse(JSON.stringify(toV3Options(analysis, options)));
    const back = normalizeOptions(analysis, wire, "v3");
    expect(back.warnings).toEqual([]);
    expect(back.options).toEqual(dropUndefined(options));
  });

  it("toV2Options writes the v2 spellings", () => {
    expect(toV2Options("psr", psr)).toEqual({
      threshold: [0, 0.25],
      eval_type: "similarity",
      is_threshold_percent: false,
      most_eval: false,
      _output_scale: "logistic",
      adj_fit_multiplier: "1",
      inv_method: "pseudoinverse",
      include_linear_regression: false,
      verify_missing_data: true,
      cov_inv: [
        [2, 0.5],
        [0.5, 1],
      ],
    });
    const g = toV2Options("grid", grid);
    expect(g).toMatchObject({ k: 2, _seed: 9, most_eval: true, _retain_grid_objects: ["yhat_cells", "k_cells"], _inner_parallel: "auto" });
    expect(g).not.toHaveProperty("min_k");
    expect(toV2Options("grid", { retain: [] })).toEqual({ _retain_grid_objects: false });
    expect(toV2Options("grid", { retain: [...RETAIN_KEYS] })).toEqual({ _retain_grid_objects: true });
    // strict operators have no v2 spelling
    expect(toV2Options("maxfit", maxfit)).toMatchObject({ censor_operator: "gt" });
    expect(toV2Options("maxfit", maxfit)).not.toHaveProperty("most_eval");
  });

  it("fully resolved defaults survive the round trip too", () => {
    const resolved = {
      psr: resolvePsrOptions({}, 3),
      maxfit: resolveMaxFitOptions({}, 3),
      grid: resolveGridOptions({}, 3),
    };
    for (const analysis of ["psr", "maxfit", "grid"] as const) {
      const wire = JSON.parse(JSON.stringify(toV2Options(analysis, resolved[analysis])));
      const back = normalizeOptions(analysis, wire, "v2").options;
      const again =
        analysis === "psr"
          ? resolvePsrOptions(back as GivenPsrOptions, 3)
          : analysis === "maxfit"
            ? resolveMaxFitOptions(back as GivenMaxFitOptions, 3)
            : resolveGridOptions(back as GivenGridOptions, 3);
      expect(again).toEqual(resolved[analysis]);
    }
  });
});
