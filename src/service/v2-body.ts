/**
 * The v2 body of a completed job (docs/api.md section 5.1), made from the stored v3 `results`
 * JSON: parsed, flattened by `toV2Result`, and encoded. A large result is made in the offload
 * worker (offload.ts), so that a GET /v2/.../results of a 100 MB Grid does not stall every other
 * request while it is parsed and written; a small one here, by the same function.
 */
import { toJson } from "../api/json.js";
import { toV2Result, type V2ResultExtras } from "../api/v2-result.js";
import type { EngineResult } from "../engine/result.js";
import type { SingularityCell } from "../engine/singularity.js";

/** What the v2 body says of the job beside its results. */
export type V2ResultMeta = V2ResultExtras;

/**
 * The encoded v2 body of a completed job from its stored results.
 *
 * @example
 * v2ResultText(await service.resultJson(job), { job_id: 7, job_code: "d7db", censor_operator: "gte" }); // '{"job_id":7,...,"yhat":[...]}'
 */
export function v2ResultText(resultsJson: string, meta: V2ResultMeta): string {
  const result = JSON.parse(resultsJson) as EngineResult & { grid_singularity?: SingularityCell };
  const flat = toV2Result(result, meta);
  if (result.grid_singularity) flat.attribute_combi = [result.grid_singularity.attribute_combi];
  return toJson(flat);
}
