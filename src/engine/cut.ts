/**
 * The censor's decision at its cut (docs/methodology.md section 3; the rule is written in docs/ties.md):
 * which rows a (censor, threshold) keeps when scores tie at the cut.
 *
 * Scores that are equal in exact arithmetic (integer-valued attributes make many) come out a few
 * ulps apart in floating point, whatever the formula, so a bare `score >= cut` lets rounding split
 * them. The rule, one for relevance and similarity, percent and score units and every operator:
 *
 * 1. the tie width of a censor's scores is CUT_TIE_TOLERANCE x max(1, max |score|) over its usable
 *    rows (`tieWidth`);
 * 2. in percent units, the linear-interpolation cut between two neighbouring order statistics is
 *    snapped to one of them when it lies within the width of it (`snapCut`): tied neighbours, or a
 *    rank that rounding put a hair off an integer;
 * 3. a score within the width of the cut is at the cut: `gte` and `lte` keep it, `gt` and `lt`
 *    drop it (`cutBoundary`).
 *
 * An inner loop calls `cutBoundary` once per cut and then compares each signed score with it:
 * `signedScore > boundary` for a strict test, `>=` otherwise.
 */
import { CUT_TIE_TOLERANCE } from "./choices.js";
import type { CensorOperator } from "./options.js";

/**
 * The width within which two scores of one censor are equal, from the scores' minimum and maximum.
 *
 * @example
 * tieWidth(-3.7, 8.75); // 8.75e-9
 */
export function tieWidth(min: number, max: number): number {
  const size = Math.max(1, Math.abs(min), Math.abs(max));
  return CUT_TIE_TOLERANCE * size;
}

/**
 * The cut between neighbouring order statistics `low` <= `high`, snapped to one of them when it is
 * within `width` of it (the lower one first).
 *
 * @example
 * snapCut(2, 2 + 1e-15, 2 + 2e-16, 1e-9); // 2: the neighbours are tied
 * snapCut(1, 3, 2, 1e-9); // 2: a true interpolation stays
 */
export function snapCut(low: number, high: number, cut: number, width: number): number {
  if (cut - low <= width) return low;
  if (high - cut <= width) return high;
  return cut;
}

/** The censor test `score OP cut`, rewritten on signed scores as `sign*score >= boundary` or `> boundary` (strict). */
export interface CutTest {
  sign: 1 | -1;
  strict: boolean;
}

/**
 * @example
 * cutTest("lt"); // { sign: -1, strict: true }
 */
export function cutTest(operator: CensorOperator): Readonly<CutTest> {
  return CUT_TESTS[operator];
}

/** The four tests, made once: a Grid asks for one per censor and combination. */
const CUT_TESTS: Record<CensorOperator, Readonly<CutTest>> = {
  gt: Object.freeze({ sign: 1, strict: true }),
  gte: Object.freeze({ sign: 1, strict: false }),
  lt: Object.freeze({ sign: -1, strict: true }),
  lte: Object.freeze({ sign: -1, strict: false }),
};

/**
 * The boundary a signed score is compared with: the signed cut moved by the tie width, outward for
 * `gte`/`lte` (a score at the cut is kept) and inward for `gt`/`lt` (it is dropped). Boundaries keep
 * the order of their cuts.
 *
 * @example
 * cutBoundary(5, 1e-9, cutTest("gte")); // 5 - 1e-9
 */
export function cutBoundary(cut: number, width: number, test: CutTest): number {
  return test.sign * cut + (test.strict ? width : -width);
}

/**
 * Whether `n` relevance scores whose squares sum to `sumSquares` are not all tied with 0 (`width`
 * the relevance tie width): a retained set, or its complement, whose relevance is all 0 in exact
 * arithmetic (theta at the attributes' mean) has no variance, and rounding noise must not give it one.
 *
 * @example
 * notAllZero(3e-32, 3, 1e-9); // false: noise
 * notAllZero(0.5, 3, 1e-9); // true
 */
export function notAllZero(sumSquares: number, n: number, width: number): boolean {
  return sumSquares > n * width * width;
}
