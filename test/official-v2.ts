/**
 * The flat v2 body the official Python client sends (docs/api.md section 3): the data as column
 * vectors and every option of its PredictionOptions at the top level, with the client's defaults.
 */
import { gold } from "./gold.js";

/** What the client sends with every analysis (PSR's `eval_type: "both"` included). */
const EVERY_ANALYSIS = {
  is_threshold_percent: true,
  most_eval: true,
  eval_type: "both",
  adj_fit_multiplier: "K",
  cov_inv: null,
  verify_missing_data: false,
  inv_method: "gaussian",
  _output_scale: "default",
};

/** What it adds for a Grid (GridOptions). */
const GRID = { _seed: 7, objective: "kfit", attribute_combi: null, max_iter: 1000, k: 1, _retain_grid_objects: false };

export interface Data {
  y: number[];
  X: Array<Array<number | null>>;
  theta: number[];
}

/** The official client's body for a PSR or a Grid on `data` (default: the quickstart 7x5), then `extra`. */
export function officialV2Body(analysis: "psr" | "grid", data: Data = gold.inputs, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    y: data.y.map((v) => [v]),
    X: data.X,
    theta: [data.theta],
    threshold: analysis === "grid" ? [0.0, 0.2, 0.5, 0.8] : [0.5],
    ...EVERY_ANALYSIS,
    ...(analysis === "grid" ? GRID : {}),
    ...extra,
  };
}
