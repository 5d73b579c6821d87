/**
 * The Grid's once-per-Grid passes over the rows and cells (standardising X, walk.ts; the
 * all-attribute model's rows, moments, informativeness and relevance, model.ts and moments.ts;
 * the insights' pass over the cells, insights.ts), in two implementations that give the same
 * bits: `jsBasis`, plain loops, and the WebAssembly of basis.wat, the very same scalar
 * operations in the same order.
 *
 * They run once per Grid, so a process that runs one Grid (the CLI) runs them cold: the plain
 * loops in V8's interpreter, several times slower than once compiled, while WebAssembly is
 * compiled code from its first call. The WebAssembly reads and writes only its own memory: each
 * call copies its inputs in and its outputs out (a copy of X is a small part of one pass over it).
 * Where WebAssembly or the memory cannot be had, the plain loops run.
 */
import { soloVote } from "../choices.js";
import { BASIS_WASM } from "./basis-wasm.js";
import { instantiate, type KernelChoice } from "./rows.js";

/** X (n rows of `stride` values), the columns of a model, its usable rows and their means of those columns. */
type ColumnRows = [X: Float64Array, n: number, stride: number, columns: ArrayLike<number>, usable: Uint8Array, mean: Float64Array];

export interface BasisKernels {
  readonly name: KernelChoice;
  /** Whether one of the values is NaN. */
  hasNaN(values: Float64Array): boolean;
  /** The index of the first infinite value, or -1. */
  firstInfinite(values: Float64Array): number;
  /**
   * X (n x k, row-major) standardised: each column's mean (row order), scale (sample sd, 0 for a
   * constant column), z (column-major, (x - mean) / scale, 0 for a constant column) and corr
   * (z's Gram matrix / (n - 1), k x k).
   */
  standardize(X: Float64Array, n: number, k: number, mean: Float64Array, scale: Float64Array, z: Float64Array, corr: Float64Array): void;
  /** usable[i] = 1 when row i of X (n rows of `stride`) has every one of `columns` present; their count. */
  usableRows(X: Float64Array, n: number, stride: number, columns: ArrayLike<number>, usable: Uint8Array): number;
  /**
   * The usable rows' count (returned), and when it is at least 2 their means of `columns` and
   * covariance (N - 1 denominator, k x k), a constant column's entries exactly 0.
   */
  completeMoments(X: Float64Array, n: number, stride: number, columns: ArrayLike<number>, usable: Uint8Array, mean: Float64Array, cov: Float64Array): number;
  /** infoX[i] = c' inverse c for c = x_i - mean over `columns` (linalg.ts quadraticForm's order), NaN on rows not usable. */
  informativeness(...args: [...rows: ColumnRows, inverse: Float64Array, infoX: Float64Array]): void;
  /** relevance[i] = (x_i - mean) . direction (NaN on rows not usable), similarity[i] = relevance[i] - 0.5 (infoX[i] + infoTheta). */
  relevance(
    ...args: [...rows: ColumnRows, direction: Float64Array, infoX: Float64Array, infoTheta: number, relevance: Float64Array, similarity: Float64Array]
  ): void;
  /**
   * The insights' sums over the cells (insights.ts): returns the weights' total; `out` (10 k)
   * gets fitSum, count, positiveWeight, weightedYhat and share, 2 k each, slot j summing the
   * valid cells whose combination holds attribute j and slot k + j those without it, in cell
   * order. has[q k + j]: whether combination q holds j; sizes[q]: its number of attributes.
   */
  insights(
    combination: Int32Array,
    weight: Float64Array,
    yhat: Float64Array,
    valid: Uint8Array,
    has: Uint8Array,
    sizes: Int32Array,
    k: number,
    ybar: number,
    out: Float64Array,
  ): number;
  /** composite[i] += composites[p][i] and used[i] |= useds[p][i], the partials p in order. */
  mergeRows(composites: readonly Float64Array[], useds: readonly Uint8Array[], composite: Float64Array, used: Uint8Array): void;
  /** The squared correlation of weights and y over the used rows (0 when either is constant). */
  compositeFit(weights: Float64Array, y: Float64Array, used: Uint8Array): number;
  /** Over the cells with a positive weight: its sum, its squares' and the weighted yhat; and the count of cells not valid: out[0..3]. */
  cellTotals(weights: Float64Array, yhats: Float64Array, valid: Uint8Array, out: Float64Array): void;
  /** votes[i] = soloVote(weights[i], y[i], ybar, count) (choices.ts) where mask[i] is not NaN, NaN where it is. */
  soloVotes(weights: Float64Array, y: Float64Array, mask: Float64Array, ybar: number, count: number, votes: Float64Array): void;
  /** Over the values not NaN, in order: their number, mean and the means of the 2nd, 3rd and 4th powers of their deviations: out[0..4]. */
  soloMoments(votes: Float64Array, out: Float64Array): void;
}

/**
 * Row a of a Gram matrix from its diagonal on, divided by `divisor` and mirrored: both triangles
 * of columns' (n each) Gram matrix / divisor into out (k x k). Each sum over the rows in order.
 */
function covarianceOf(columns: Float64Array, n: number, k: number, divisor: number, out: Float64Array): void {
  for (let a = 0; a < k; a++) {
    const xa = a * n;
    for (let b = a; b < k; b++) {
      const xb = b * n;
      let sum = 0;
      for (let m = 0; m < n; m++) sum += columns[xa + m] * columns[xb + m];
      out[a * k + b] = sum;
    }
    for (let b = a; b < k; b++) {
      const v = out[a * k + b] / divisor;
      out[a * k + b] = v;
      out[b * k + a] = v;
    }
  }
}

/** The passes as plain loops: the reference the WebAssembly is held to, and what runs without it. */
export const jsBasis: BasisKernels = {
  name: "js",
  hasNaN(values) {
    for (let v = 0; v < values.length; v++) if (values[v] !== values[v]) return true;
    return false;
  },
  firstInfinite(values) {
    for (let v = 0; v < values.length; v++) if (values[v] === Infinity || values[v] === -Infinity) return v;
    return -1;
  },
  standardize(X, N, K, mean, scale, z, corr) {
    // Row by row (X is row-major), each column's sums still taken in row order.
    const sum = new Float64Array(K);
    for (let i = 0; i < N; i++) for (let j = 0; j < K; j++) sum[j] += X[i * K + j];
    for (let j = 0; j < K; j++) mean[j] = sum[j] / N;
    const ss = new Float64Array(K);
    const constant = new Uint8Array(K).fill(1);
    for (let i = 0; i < N; i++) {
      for (let j = 0; j < K; j++) {
        const v = X[i * K + j];
        const d = v - mean[j];
        ss[j] += d * d;
        if (v !== X[j]) constant[j] = 0;
      }
    }
    // A constant column has no scale: mark it so every combination holding it is singular.
    for (let j = 0; j < K; j++) scale[j] = constant[j] ? 0 : Math.sqrt(ss[j] / (N - 1));
    for (let i = 0; i < N; i++) {
      for (let j = 0; j < K; j++) z[j * N + i] = constant[j] ? 0 : (X[i * K + j] - mean[j]) / scale[j];
    }
    covarianceOf(z, N, K, N - 1, corr);
  },
  usableRows(X, n, stride, columns, usable) {
    let count = 0;
    for (let i = 0; i < n; i++) {
      let ok = 1;
      for (let a = 0; a < columns.length; a++) {
        const v = X[i * stride + columns[a]];
        if (v !== v) {
          ok = 0;
          break;
        }
      }
      usable[i] = ok;
      count += ok;
    }
    return count;
  },
  completeMoments(X, n, stride, columns, usable, mean, cov) {
    const k = columns.length;
    mean.fill(0);
    let count = 0;
    for (let i = 0; i < n; i++) {
      if (!usable[i]) continue;
      count++;
      for (let a = 0; a < k; a++) mean[a] += X[i * stride + columns[a]];
    }
    if (count < 2) return count;
    for (let a = 0; a < k; a++) mean[a] /= count;
    // The used rows' centred values column by column; each entry of the covariance is then the
    // sum of its products over the rows in order.
    const centred = new Float64Array(k * count);
    for (let i = 0, m = 0; i < n; i++) {
      if (!usable[i]) continue;
      for (let a = 0; a < k; a++) centred[a * count + m] = X[i * stride + columns[a]] - mean[a];
      m++;
    }
    covarianceOf(centred, count, k, count - 1, cov);
    // A constant column must have variance exactly 0: rounding in its mean leaves ~1e-31
    // otherwise, which the scale-invariant singularity test cannot tell from an attribute in tiny units.
    for (let a = 0; a < k; a++) {
      let first = NaN;
      let constant = true;
      for (let i = 0; i < n && constant; i++) {
        if (!usable[i]) continue;
        const v = X[i * stride + columns[a]];
        if (v !== v) continue;
        if (first !== first) first = v;
        else if (v !== first) constant = false;
      }
      if (!constant) continue;
      for (let b = 0; b < k; b++) cov[b * k + a] = cov[a * k + b] = 0;
    }
    return count;
  },
  informativeness(X, n, stride, columns, usable, mean, inverse, infoX) {
    const k = columns.length;
    const centred = new Float64Array(k);
    for (let i = 0; i < n; i++) {
      if (!usable[i]) {
        infoX[i] = NaN;
        continue;
      }
      for (let a = 0; a < k; a++) centred[a] = X[i * stride + columns[a]] - mean[a];
      let q = 0;
      for (let a = 0, row = 0; a < k; a++, row += k) {
        let inner = 0;
        for (let b = 0; b < k; b++) inner += inverse[row + b] * centred[b];
        q += centred[a] * inner;
      }
      infoX[i] = q;
    }
  },
  relevance(X, n, stride, columns, usable, mean, direction, infoX, infoTheta, relevance, similarity) {
    const k = columns.length;
    for (let i = 0; i < n; i++) {
      let s = NaN;
      if (usable[i]) {
        s = 0;
        for (let a = 0; a < k; a++) s += (X[i * stride + columns[a]] - mean[a]) * direction[a];
      }
      relevance[i] = s;
      similarity[i] = s - 0.5 * (infoX[i] + infoTheta);
    }
  },
  insights(combination, weights, yhats, valid, has, sizes, k, ybar, out) {
    const C = weights.length;
    let total = 0;
    for (let c = 0; c < C; c++) total += weights[c];
    out.fill(0, 0, 10 * k);
    // Slot offsets of fitSum, count, positiveWeight, weightedYhat and share in out.
    const count = 2 * k;
    const positive = 4 * k;
    const weighted = 6 * k;
    const share = 8 * k;
    for (let c = 0; c < C; c++) {
      if (!valid[c]) continue;
      const q = combination[c];
      const weight = weights[c];
      const row = q * k;
      if (weight > 0) {
        const yhat = weight * yhats[c];
        const part = ((weight / total) * (yhats[c] - ybar)) / sizes[q];
        for (let j = 0; j < k; j++) {
          const slot = (1 - has[row + j]) * k + j;
          out[slot] += weight;
          out[count + slot]++;
          out[positive + slot] += weight;
          out[weighted + slot] += yhat;
          out[share + slot] += part;
        }
      } else {
        for (let j = 0; j < k; j++) {
          const slot = (1 - has[row + j]) * k + j;
          out[slot] += weight;
          out[count + slot]++;
        }
      }
    }
    return total;
  },
  mergeRows(composites, useds, composite, used) {
    const n = composite.length;
    for (let p = 0; p < composites.length; p++) {
      const part = composites[p];
      const usedPart = useds[p];
      for (let i = 0; i < n; i++) {
        composite[i] += part[i];
        used[i] |= usedPart[i];
      }
    }
  },
  compositeFit(weights, y, used) {
    let n = 0;
    let mw = 0;
    let my = 0;
    for (let i = 0; i < y.length; i++) {
      if (!used[i]) continue;
      n++;
      mw += weights[i];
      my += y[i];
    }
    mw /= n;
    my /= n;
    let sxy = 0;
    let sxx = 0;
    let syy = 0;
    for (let i = 0; i < y.length; i++) {
      if (!used[i]) continue;
      const dw = weights[i] - mw;
      const dy = y[i] - my;
      sxy += dw * dy;
      sxx += dw * dw;
      syy += dy * dy;
    }
    return sxx > 0 && syy > 0 ? (sxy * sxy) / (sxx * syy) : 0;
  },
  cellTotals(weights, yhats, valid, out) {
    let total = 0;
    let squares = 0;
    let weightedYhat = 0;
    let invalidCells = 0;
    for (let c = 0; c < weights.length; c++) {
      const a = weights[c];
      if (!valid[c]) invalidCells++;
      if (!(a > 0)) continue;
      total += a;
      squares += a * a;
      weightedYhat += a * yhats[c];
    }
    out[0] = total;
    out[1] = squares;
    out[2] = weightedYhat;
    out[3] = invalidCells;
  },
  soloVotes(weights, y, mask, ybar, count, votes) {
    for (let i = 0; i < y.length; i++) votes[i] = mask[i] === mask[i] ? soloVote(weights[i], y[i], ybar, count) : NaN;
  },
  soloMoments(votes, out) {
    let n = 0;
    let mean = 0;
    for (let i = 0; i < votes.length; i++) {
      const v = votes[i];
      if (v !== v) continue;
      n++;
      mean += v;
    }
    mean /= n;
    let m2 = 0;
    let m3 = 0;
    let m4 = 0;
    for (let i = 0; i < votes.length; i++) {
      const v = votes[i];
      if (v !== v) continue;
      const d = v - mean;
      const d2 = d * d;
      m2 += d2;
      m3 += d2 * d;
      m4 += d2 * d2;
    }
    out[0] = n;
    out[1] = mean;
    out[2] = m2 / n;
    out[3] = m3 / n;
    out[4] = m4 / n;
  },
};

/** The rows of a model's columns and their means, as basis.wat's passes take them (pointers and sizes). */
type ModelRows = [X: number, n: number, stride: number, columns: number, k: number, usable: number, mean: number];

/** The exports of basis.wat (pointers are byte offsets into its memory). */
interface BasisExports {
  hasNaN(p: number, n: number): number;
  firstInfinite(p: number, n: number): number;
  standardize(X: number, n: number, k: number, mean: number, scale: number, z: number, corr: number, sum: number, ss: number, constant: number): void;
  usableRows(X: number, n: number, stride: number, columns: number, k: number, usable: number): number;
  completeMoments(X: number, n: number, stride: number, columns: number, k: number, usable: number, mean: number, centred: number, cov: number): number;
  informativeness(...args: [...rows: ModelRows, inverse: number, centred: number, rows: number, infoX: number]): void;
  relevance(...args: [...rows: ModelRows, direction: number, infoX: number, infoTheta: number, relevance: number, similarity: number]): void;
  insights(
    combination: number,
    weights: number,
    yhats: number,
    valid: number,
    C: number,
    has: number,
    sizes: number,
    k: number,
    ybar: number,
    out: number,
    terms: number,
  ): number;
  mergeRows(parts: number, usedParts: number, P: number, n: number, composite: number, used: number): void;
  compositeFit(w: number, y: number, used: number, n: number): number;
  cellTotals(weights: number, yhats: number, valid: number, C: number, out: number): void;
  soloVotes(w: number, y: number, mask: number, ybar: number, count: number, n: number, votes: number): void;
  soloMoments(votes: number, n: number, out: number): void;
}

type Made = NonNullable<ReturnType<typeof instantiate>>;
/** The part of WebAssembly.Memory the passes use beside its buffer (typed without the DOM's or Node's globals). */
type GrowingMemory = Made["memory"] & { grow(pages: number): number };

const PAGE = 65536;
/** The memory to start with: a Grid's calls at N=1,000, K=10 need about 250 kB; more grows it. */
const INITIAL_BYTES = 1 << 20;

const padded = (bytes: number) => Math.ceil(bytes / 8) * 8;
/** The insights' scratch (basis.wat `insights`): the terms of 64 cells, 40 bytes each. */
const INSIGHT_TERMS = 64 * 40;

/**
 * basis.wat on a memory of its own, which grows (a new instance) when a call needs more; each
 * call lays its arrays out from offset 0, copies the inputs in and the outputs out. A call whose
 * memory cannot be had runs the plain loops.
 */
class WasmBasis implements BasisKernels {
  readonly name = "wasm";
  private buffer: ArrayBuffer;
  private exports: BasisExports;
  private capacity: number;
  /** The next free byte of the call being laid out. */
  private top = 0;

  private readonly memory: GrowingMemory;

  constructor(made: Made) {
    this.memory = made.memory as GrowingMemory;
    this.buffer = made.memory.buffer;
    this.exports = made.exports as BasisExports;
    this.capacity = this.buffer.byteLength;
  }

  /**
   * Room for `bytes` from offset 0: the memory grows (at least doubling: a Grid's calls need
   * about the same, and a new instance would compile its calls' wrappers again), or false when it
   * cannot (the caller runs the plain loops).
   */
  private room(bytes: number): boolean {
    this.top = 0;
    if (bytes <= this.capacity) return true;
    try {
      this.memory.grow(Math.ceil(Math.max(bytes - this.capacity, this.capacity) / PAGE));
    } catch (error) {
      if (error instanceof RangeError) return false;
      throw error;
    }
    this.buffer = this.memory.buffer;
    this.capacity = this.buffer.byteLength;
    return true;
  }

  /** The offset of the next n doubles, holding `from` when given. */
  private f64(n: number, from?: ArrayLike<number>): number {
    const at = this.top;
    this.top += padded(8 * n);
    if (from) new Float64Array(this.buffer, at, n).set(from);
    return at;
  }

  private i32(n: number, from: ArrayLike<number>): number {
    const at = this.top;
    this.top += padded(4 * n);
    new Int32Array(this.buffer, at, n).set(from);
    return at;
  }

  private u8(n: number, from?: Uint8Array): number {
    const at = this.top;
    this.top += padded(n);
    if (from) new Uint8Array(this.buffer, at, n).set(from);
    return at;
  }

  private out(at: number, to: Float64Array, n: number): void {
    to.set(new Float64Array(this.buffer, at, n));
  }

  readonly hasNaN: BasisKernels["hasNaN"] = (values) => {
    if (!this.room(padded(8 * values.length))) return jsBasis.hasNaN(values);
    return this.exports.hasNaN(this.f64(values.length, values), values.length) === 1;
  };

  readonly firstInfinite: BasisKernels["firstInfinite"] = (values) => {
    if (!this.room(padded(8 * values.length))) return jsBasis.firstInfinite(values);
    return this.exports.firstInfinite(this.f64(values.length, values), values.length);
  };

  readonly standardize: BasisKernels["standardize"] = (X, n, k, mean, scale, z, corr) => {
    if (!this.room(padded(8 * n * k) * 2 + padded(8 * k) * 4 + padded(8 * k * k) + padded(k))) return jsBasis.standardize(X, n, k, mean, scale, z, corr);
    const x = this.f64(n * k, X.subarray(0, n * k));
    const m = this.f64(k);
    const s = this.f64(k);
    const zz = this.f64(n * k);
    const c = this.f64(k * k);
    this.exports.standardize(x, n, k, m, s, zz, c, this.f64(k), this.f64(k), this.u8(k));
    this.out(m, mean, k);
    this.out(s, scale, k);
    this.out(zz, z, n * k);
    this.out(c, corr, k * k);
  };

  /** Offsets of the last `rows` call's X, columns and usable. */
  private x = 0;
  private cols = 0;
  private u = 0;

  /** Lays out X, columns and usable (its values when `given`). */
  private rows(X: Float64Array, n: number, stride: number, columns: ArrayLike<number>, usable: Uint8Array, given: boolean): void {
    this.x = this.f64(n * stride, X.subarray(0, n * stride));
    this.cols = this.i32(columns.length, columns);
    this.u = this.u8(n, given ? usable : undefined);
  }

  private static rowBytes(n: number, stride: number, k: number): number {
    return padded(8 * n * stride) + padded(4 * k) + padded(n);
  }

  readonly usableRows: BasisKernels["usableRows"] = (X, n, stride, columns, usable) => {
    if (!this.room(WasmBasis.rowBytes(n, stride, columns.length))) return jsBasis.usableRows(X, n, stride, columns, usable);
    this.rows(X, n, stride, columns, usable, false);
    const count = this.exports.usableRows(this.x, n, stride, this.cols, columns.length, this.u);
    usable.set(new Uint8Array(this.buffer, this.u, n));
    return count;
  };

  readonly completeMoments: BasisKernels["completeMoments"] = (X, n, stride, columns, usable, mean, cov) => {
    const k = columns.length;
    if (!this.room(WasmBasis.rowBytes(n, stride, k) + padded(8 * k) + padded(8 * k * n) + padded(8 * k * k))) {
      return jsBasis.completeMoments(X, n, stride, columns, usable, mean, cov);
    }
    this.rows(X, n, stride, columns, usable, true);
    const m = this.f64(k);
    const centred = this.f64(k * n);
    const c = this.f64(k * k);
    const count = this.exports.completeMoments(this.x, n, stride, this.cols, k, this.u, m, centred, c);
    this.out(m, mean, k);
    this.out(c, cov, k * k);
    return count;
  };

  readonly informativeness: BasisKernels["informativeness"] = (X, n, stride, columns, usable, mean, inverse, infoX) => {
    const k = columns.length;
    const pairs = (n + 1) >> 1;
    if (!this.room(WasmBasis.rowBytes(n, stride, k) + padded(8 * k) + padded(8 * k * k) + 16 * k * pairs + padded(4 * n) + padded(8 * n))) {
      return jsBasis.informativeness(X, n, stride, columns, usable, mean, inverse, infoX);
    }
    this.rows(X, n, stride, columns, usable, true);
    const m = this.f64(k, mean);
    const inv = this.f64(k * k, inverse.subarray(0, k * k));
    // The usable rows' centred values two by two (k pairs of lanes each), and their indices.
    const centred = this.f64(2 * k * pairs);
    const rows = this.top;
    this.top += padded(4 * n);
    const info = this.f64(n);
    this.exports.informativeness(this.x, n, stride, this.cols, k, this.u, m, inv, centred, rows, info);
    this.out(info, infoX, n);
  };

  readonly relevance: BasisKernels["relevance"] = (X, n, stride, columns, usable, mean, direction, infoX, infoTheta, relevance, similarity) => {
    const k = columns.length;
    if (!this.room(WasmBasis.rowBytes(n, stride, k) + padded(8 * k) * 2 + padded(8 * n) * 3)) {
      return jsBasis.relevance(X, n, stride, columns, usable, mean, direction, infoX, infoTheta, relevance, similarity);
    }
    this.rows(X, n, stride, columns, usable, true);
    const m = this.f64(k, mean);
    const d = this.f64(k, direction);
    const info = this.f64(n, infoX.subarray(0, n));
    const r = this.f64(n);
    const s = this.f64(n);
    this.exports.relevance(this.x, n, stride, this.cols, k, this.u, m, d, info, infoTheta, r, s);
    this.out(r, relevance, n);
    this.out(s, similarity, n);
  };

  readonly insights: BasisKernels["insights"] = (combination, weight, yhat, valid, has, sizes, k, ybar, out) => {
    const C = weight.length;
    const Q = sizes.length;
    if (!this.room(padded(4 * C) + padded(8 * C) * 2 + padded(C) + padded(Q * k) + padded(4 * Q) + padded(80 * k) + INSIGHT_TERMS)) {
      return jsBasis.insights(combination, weight, yhat, valid, has, sizes, k, ybar, out);
    }
    const cc = this.i32(C, combination);
    const w = this.f64(C, weight);
    const y = this.f64(C, yhat);
    const v = this.u8(C, valid);
    const h = this.u8(Q * k, has);
    const s = this.i32(Q, sizes);
    const o = this.f64(10 * k);
    const terms = this.f64(INSIGHT_TERMS / 8);
    const total = this.exports.insights(cc, w, y, v, C, h, s, k, ybar, o, terms);
    this.out(o, out, 10 * k);
    return total;
  };

  readonly mergeRows: BasisKernels["mergeRows"] = (composites, useds, composite, used) => {
    const n = composite.length;
    const P = composites.length;
    if (!this.room((P + 1) * (padded(8 * n) + padded(n)))) return jsBasis.mergeRows(composites, useds, composite, used);
    // The partials' rows one after another: n doubles apart, and n bytes apart for used.
    const parts = this.top;
    this.top += P * 8 * n;
    for (let p = 0; p < P; p++) new Float64Array(this.buffer, parts + 8 * n * p, n).set(composites[p].subarray(0, n));
    const usedParts = this.top;
    this.top += padded(P * n);
    for (let p = 0; p < P; p++) new Uint8Array(this.buffer, usedParts + n * p, n).set(useds[p].subarray(0, n));
    const c = this.f64(n, composite);
    const u = this.u8(n, used);
    this.exports.mergeRows(parts, usedParts, P, n, c, u);
    this.out(c, composite, n);
    used.set(new Uint8Array(this.buffer, u, n));
  };

  readonly compositeFit: BasisKernels["compositeFit"] = (weights, y, used) => {
    const n = y.length;
    if (!this.room(padded(8 * n) * 2 + padded(n))) return jsBasis.compositeFit(weights, y, used);
    return this.exports.compositeFit(this.f64(n, weights.subarray(0, n)), this.f64(n, y), this.u8(n, used.subarray(0, n)), n);
  };

  readonly cellTotals: BasisKernels["cellTotals"] = (weights, yhats, valid, out) => {
    const C = weights.length;
    if (!this.room(padded(8 * C) * 2 + padded(C) + 32)) return jsBasis.cellTotals(weights, yhats, valid, out);
    const o = this.f64(4);
    this.exports.cellTotals(this.f64(C, weights), this.f64(C, yhats.subarray(0, C)), this.u8(C, valid.subarray(0, C)), C, o);
    this.out(o, out, 4);
  };

  readonly soloVotes: BasisKernels["soloVotes"] = (weights, y, mask, ybar, count, votes) => {
    const n = y.length;
    if (!this.room(padded(8 * n) * 4)) return jsBasis.soloVotes(weights, y, mask, ybar, count, votes);
    const v = this.f64(n);
    this.exports.soloVotes(this.f64(n, weights.subarray(0, n)), this.f64(n, y), this.f64(n, mask.subarray(0, n)), ybar, count, n, v);
    this.out(v, votes, n);
  };

  readonly soloMoments: BasisKernels["soloMoments"] = (votes, out) => {
    const n = votes.length;
    if (!this.room(padded(8 * n) + 40)) return jsBasis.soloMoments(votes, out);
    const o = this.f64(5);
    this.exports.soloMoments(this.f64(n, votes), n, o);
    this.out(o, out, 5);
  };
}

let shared: BasisKernels | null = null;

/**
 * The passes: the WebAssembly ones (one set per thread) unless asked for "js" or WebAssembly is
 * missing here.
 *
 * @example
 * const kernels = basisKernels();
 * if (kernels.hasNaN(data.X)) console.log("X has gaps");
 */
export function basisKernels(choice: KernelChoice = "wasm"): BasisKernels {
  if (choice === "js") return jsBasis;
  if (!shared) {
    const made = instantiate(BASIS_WASM, INITIAL_BYTES);
    shared = made ? new WasmBasis(made) : jsBasis;
  }
  return shared;
}
