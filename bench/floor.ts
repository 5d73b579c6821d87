/**
 * The floor of `npm run bench`: the least work a Grid cell needs per observation, so that the
 * engine's time can be printed as a multiple of what the machine does at best.
 *
 * A cell keeps the rows whose censor score passes its cut and fits the PSR weight on them; the
 * weight is affine in the kept relevance, so its fit follows from four sums over the kept rows
 * (count, sum r, sum r^2, sum r dy). The floor is one branch-free pass per cell over precomputed
 * scores that compares each score with the cell's cut and accumulates those four sums, then the
 * cell's fit from them. Everything else the engine does (scores per combination, the cuts'
 * percentiles, the complement for asymmetry, the composite weights) is left out: the floor is a
 * lower bound, not another implementation.
 *
 * `floorCells` is that pass in plain JavaScript, the language of most of the engine; `simdFloor`
 * is the same pass in WebAssembly SIMD (bench/floor.wat), the instructions of the engine's
 * hottest passes (src/engine/kernels/rows.wat): the lower of the two lower bounds.
 */
import { instantiate } from "../src/engine/kernels/rows.js";
import { FLOOR_WASM } from "./floor-wasm.js";

export interface FloorInput {
  relevance: Float64Array;
  scores: Float64Array;
  /** y - ybar */
  dy: Float64Array;
  /** The cuts cells cycle through. */
  cuts: Float64Array;
}

/**
 * Runs `cells` floor cells over the N rows of `input`; returns a checksum (the summed fits) so the
 * work cannot be optimised away.
 *
 * @example
 * floorCells(input, 8184); // the floor of the default N=1,000/K=10 Grid
 */
export function floorCells(input: FloorInput, cells: number): number {
  const { relevance, scores, dy, cuts } = input;
  const N = relevance.length;
  const T = cuts.length;
  let syy = 0;
  for (let i = 0; i < N; i++) syy += dy[i] * dy[i];
  let checksum = 0;
  for (let c = 0; c < cells; c++) {
    const cut = cuts[c % T];
    let n = 0;
    let s1 = 0;
    let s2 = 0;
    let sy = 0;
    for (let i = 0; i < N; i++) {
      const k = +(scores[i] >= cut);
      const kr = k * relevance[i];
      n += k;
      s1 += kr;
      s2 += kr * kr;
      sy += kr * dy[i];
    }
    const spread = s2 - (s1 * s1) / N;
    const rho = spread > 0 && syy > 0 ? sy / Math.sqrt(spread * syy) : 0;
    checksum += rho * rho + n * 1e-300;
  }
  return checksum;
}

/**
 * The floor in WebAssembly SIMD: `floorCells` with two rows per instruction. Returns a function of
 * the number of cells, with the input copied into the module's memory once.
 *
 * @example
 * const cells = simdFloor(input);
 * cells(8184); // the same work as floorCells(input, 8184)
 */
export function simdFloor(input: FloorInput): (cells: number) => number {
  // Assembled by `npm run gen:kernels`, not here: with wabt loaded, every loop timed in the
  // process ran about a quarter slower.
  const { relevance, scores, dy, cuts } = input;
  const N = relevance.length;
  const n = N + (N % 2);
  const made = instantiate(FLOOR_WASM, 8 * (3 * n + cuts.length));
  if (!made) throw new Error("the SIMD floor needs WebAssembly with SIMD");
  const { memory, exports } = made;
  const view = (k: number, length: number) => new Float64Array(memory.buffer, 8 * k * n, length);
  view(0, n).set(scores);
  if (n > N) view(0, n)[N] = NaN;
  view(1, n).set(relevance);
  view(2, n).set(dy);
  view(3, cuts.length).set(cuts);
  let syy = 0;
  for (let i = 0; i < N; i++) syy += dy[i] * dy[i];
  const run = (exports as { floorCells: (...args: number[]) => number }).floorCells;
  return (cells) => run(0, 8 * n, 16 * n, 24 * n, cuts.length, n, N, syy, cells);
}
