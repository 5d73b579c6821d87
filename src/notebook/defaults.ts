/**
 * `defaults(analysis)`: the options the service uses when a call leaves them out, in v3 names, so
 * a notebook can show them or start from them (`grid(df, spec, { ...defaults("grid"), seed: 7 })`).
 */
import { resolveOptions, toV3Options } from "../api/options.js";
import type { Analysis, OptionsInputFor } from "../client/index.js";

/** The service's default options of an analysis (v3 names). Grid sizes: min_k 1 and max_k K (all attributes) unless given. */
export function defaults<A extends Analysis>(analysis: A): OptionsInputFor[A] {
  if (analysis !== "psr" && analysis !== "maxfit" && analysis !== "grid") {
    throw new RangeError(`defaults: expected "psr", "maxfit" or "grid", got ${JSON.stringify(analysis)}`);
  }
  // K only matters for options that depend on it (cov_inv, min_k, max_k), which default to none.
  const out = toV3Options(analysis, resolveOptions(analysis, {}, 1) as never) as Record<string, unknown>;
  if (analysis === "grid" && Array.isArray(out.retain_grid_objects) && out.retain_grid_objects.length === 0) out.retain_grid_objects = false;
  return out as OptionsInputFor[A];
}
