/**
 * The methodology choices the public record leaves open (docs/methodology.md, tags [G] and [I]).
 * Each lives here once, named after the question it answers, so that a better-founded answer
 * changes one function and nothing else.
 */
import type { AdjFitMultiplier } from "./options.js";

/** Section 5.4: kfit is documented only in words; the book's "fit scaled by K" is our reading. */
export function kfit(fit: number, k: number): number {
  return k * fit;
}

/** Section 5.3: the adjusted-fit multiplier m(K). `log` is ln K (so a one-attribute model gets 0). */
export function adjFitMultiplier(kind: AdjFitMultiplier, k: number): number {
  switch (kind) {
    case "identity":
      return 1;
    case "K":
      return k;
    case "log":
      return Math.log(k);
  }
}

/** Section 4: a partial sample needs at least this many observations; below it the calibration is invalid. */
export const MIN_RETAINED = 2;

/** Section 5.2: asymmetry is 0 when the complement has fewer than this many observations. */
export const MIN_COMPLEMENT_FOR_ASYMMETRY = 2;

/**
 * Section 5.5: only agreement + outlier influence = fit is confirmed. Our split takes the
 * diagonal of rho^2 = (sum_i a_i)^2 as outlier influence, a_i being observation i's share of rho.
 */
export function outlierInfluence(diagonalSum: number, denominator: number): number {
  return denominator > 0 ? diagonalSum / denominator : 0;
}

/**
 * Section 3: scores that are equal in exact arithmetic come out a few ulps apart in floating
 * point, so the censor reads two scores of one model as equal when they differ by at most this
 * share of the scores' size, max(1, max |score|) (scores are unit-free). Rounding in the scores is
 * below 1e-13 of that size on ordinary data, and distinct scores of decimal data lie further apart
 * than 1e-4 of it; the tolerance sits between the two. The rule that uses it is src/engine/cut.ts
 * (docs/ties.md).
 */
export const CUT_TIE_TOLERANCE = 1e-9;

/**
 * Section 3: for `censor_unit: "score"` the engine reports r_star_percent; we read it as the share
 * of scores strictly below the cut, a score within `width` of the cut being at it (cut.ts).
 */
export function shareBelow(scores: ArrayLike<number>, count: number, cut: number, width = 0): number {
  let below = 0;
  const boundary = cut - width;
  for (let i = 0; i < count; i++) if (scores[i] < boundary) below++;
  return count > 0 ? below / count : NaN;
}

/** Section 5.7: observation i's vote, y_solo_i = ybar + N (w_i - 1/N)(y_i - ybar); the votes average to yhat. */
export function soloVote(weight: number, y: number, ybar: number, count: number): number {
  return ybar + count * (weight - 1 / count) * (y - ybar);
}

/** Section 7.2: when every cell has zero adjusted fit the composite falls back to equal weights (yhat = ybar). */
export const EMPTY_COMPOSITE_FALLBACK = "equal-weights" as const;

/**
 * Section 6: MaxFit keeps the first maximum (relevance before similarity, thresholds in order), and
 * so does the singularity Grid's best cell (docs/ties.md). Two candidates that are equal in exact
 * arithmetic (threshold 0 keeps every row under both censors) differ in their last bits, so a later
 * candidate wins only by more than this relative margin; otherwise rounding, not the data, would
 * pick the censor.
 */
export const MAXFIT_TIE_TOLERANCE = 1e-12;

/** Whether a candidate's objective beats the best so far (see MAXFIT_TIE_TOLERANCE). */
export function beatsObjective(candidate: number, best: number): boolean {
  return candidate - best > MAXFIT_TIE_TOLERANCE * Math.max(1, Math.abs(best));
}

/**
 * The index of the first maximum of `objectives`, in their order, ties read by `beatsObjective`;
 * a non-finite objective is no candidate. -1 when there is none. MaxFit and the singularity Grid
 * both choose with it.
 *
 * @example
 * firstMaximum([0.5, NaN, 0.5 + 1e-16, 0.4]); // 0: the third equals the first up to rounding
 */
export function firstMaximum(objectives: ArrayLike<number>): number {
  let best = -1;
  for (let i = 0; i < objectives.length; i++) {
    const v = objectives[i];
    if (Number.isFinite(v) && (best < 0 || beatsObjective(v, objectives[best]))) best = i;
  }
  return best;
}
