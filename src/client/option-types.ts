/**
 * The client's option inputs (v3 names). GENERATED from the option table (src/api/options.ts,
 * OPTION_TABLE) by `npm run gen:options`; do not edit. Plain literal unions, for tslab's TypeScript 5.0.
 */

export type RetainKey = "yhat_cells" | "adjusted_fit_cells" | "n_cells" | "weights_cells" | "k_cells" | "combi_cells" | "ysolo_cells" | "ysolo_distribution";

/** Options of every analysis. `null` means "the service's default", like leaving the key out. */
export interface CommonOptionsInput {
  /** One threshold or several (per-cent of the censor's range by default, see censor_unit). */
  threshold?: number | number[] | null;
  censor_unit?: "percent" | "score" | null;
  censor_operator?: "gt" | "gte" | "lt" | "lte" | null;
  /** `logistic` for logistic outcomes. */
  prediction_scale?: "response" | "logistic" | null;
  adj_fit_multiplier?: "identity" | "K" | "log" | null;
  inv_method?: "gaussian" | "cholesky" | "pseudoinverse" | null;
  include_linear_regression?: boolean | null;
}

export interface PsrOptionsInput extends CommonOptionsInput {
  /** PSR evaluates one censor: `both` is refused. */
  censor_type?: "relevance" | "similarity" | null;
  missing_moments?: "pairwise" | "complete" | null;
  /** A K x K inverse covariance to use instead of computing one. */
  cov_inv?: number[][] | null;
}

export interface MaxFitOptionsInput extends CommonOptionsInput {
  censor_type?: "relevance" | "similarity" | "both" | null;
  missing_moments?: "pairwise" | "complete" | null;
  /** A K x K inverse covariance to use instead of computing one. */
  cov_inv?: number[][] | null;
  objective?: "fit" | "adjusted_fit" | "kfit" | null;
  inner_parallel?: "auto" | "off" | null;
}

export interface GridOptionsInput extends CommonOptionsInput {
  censor_type?: "relevance" | "similarity" | "both" | null;
  objective?: "fit" | "adjusted_fit" | "kfit" | null;
  inner_parallel?: "auto" | "off" | null;
  /** Smallest combination size (`k` in v2). */
  min_k?: number | null;
  max_k?: number | null;
  /** The only legal sizes; replaces min_k and max_k. */
  allowed_k?: number[] | null;
  /** 0/1 mask of length K: attributes in every combination. Not with attribute_combi. */
  required_attributes?: number[] | null;
  /** 0/1 rows of length K, disjoint: blocks switched on and off together. Not with attribute_combi. */
  attribute_groups?: number[][] | null;
  /** 0/1 rows of length K: exactly these combinations. */
  attribute_combi?: number[][] | null;
  max_iter?: number | null;
  seed?: number | null;
  retain_grid_objects?: boolean | RetainKey[] | null;
}
