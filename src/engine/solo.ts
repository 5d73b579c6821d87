/**
 * The distribution of observation "votes" y_solo (docs/methodology.md section 5.7, our reading: each observation's
 * vote averages to the forecast). Statistics and the histogram are over usable rows only.
 */
import { basisKernels } from "./kernels/basis.js";
import { percentiles } from "./percentile.js";

export interface SoloStatistics {
  sigma: number;
  skewness: number;
  kurtosis: number;
  pearson_modality_index: number;
  bimodal_index: number;
}

export interface Histogram {
  bin_edges: number[];
  bin_centers: number[];
  bin_widths: number[];
  count: number[];
}

/** Votes per row (NaN where the row is unusable, i.e. its relevance is NaN). */
export function soloVotes(weights: Float64Array, y: Float64Array, relevance: Float64Array, ybar: number, count: number): Float64Array {
  const votes = new Float64Array(y.length);
  basisKernels().soloVotes(weights, y, relevance, ybar, count, votes);
  return votes;
}

/** Sample sd (ddof 1), moment skewness g1 and kurtosis b2, Pearson's b2 - g1^2 - 1, Sarle's bimodality coefficient. */
/** The values that are not NaN, in order (a plain loop: `filter` with a callback costs several times more). */
function presentOf(values: Float64Array): Float64Array {
  let n = 0;
  for (let i = 0; i < values.length; i++) if (values[i] === values[i]) n++;
  const out = new Float64Array(n);
  for (let i = 0, m = 0; i < values.length; i++) if (values[i] === values[i]) out[m++] = values[i];
  return out;
}

export function soloStatistics(votes: Float64Array): SoloStatistics {
  // The present votes' number, mean and central moments, each sum in order (basis.wat, or its plain twin).
  const moments = new Float64Array(5);
  basisKernels().soloMoments(votes, moments);
  const n = moments[0];
  const m2 = moments[2];
  const m3 = moments[3];
  const m4 = moments[4];
  const sigma = n > 1 ? Math.sqrt((m2 * n) / (n - 1)) : NaN;
  if (!(m2 > 0)) return { sigma, skewness: NaN, kurtosis: NaN, pearson_modality_index: NaN, bimodal_index: NaN };
  const g1 = m3 / m2 ** 1.5;
  const b2 = m4 / (m2 * m2);
  let bimodal = NaN;
  if (n > 3) {
    const G1 = (g1 * Math.sqrt(n * (n - 1))) / (n - 2);
    const G2 = (((n + 1) * (b2 - 3) + 6) * (n - 1)) / ((n - 2) * (n - 3));
    bimodal = (G1 * G1 + 1) / (G2 + (3 * (n - 1) ** 2) / ((n - 2) * (n - 3)));
  }
  return { sigma, skewness: g1, kurtosis: b2, pearson_modality_index: b2 - g1 * g1 - 1, bimodal_index: bimodal };
}

/** Maximum number of bins; Freedman-Diaconis widths can otherwise explode on long tails. */
const MAX_BINS = 50;

/**
 * Histogram of the votes within Tukey's fences (Q1 - 1.5 IQR, Q3 + 1.5 IQR), with
 * Freedman-Diaconis bin widths.
 */
export function soloHistogram(votes: Float64Array): Histogram {
  const present = presentOf(votes);
  const n = present.length;
  if (n === 0) return { bin_edges: [], bin_centers: [], bin_widths: [], count: [] };
  const quartiles = new Float64Array(2);
  percentiles(present, n, [0.25, 0.75], new Float64Array(n), quartiles);
  const iqr = quartiles[1] - quartiles[0];
  const low = quartiles[0] - 1.5 * iqr;
  const high = quartiles[1] + 1.5 * iqr;
  let keptCount = 0;
  for (let i = 0; i < n; i++) if (present[i] >= low && present[i] <= high) keptCount++;
  const kept = new Float64Array(keptCount);
  for (let i = 0, m = 0; i < n; i++) if (present[i] >= low && present[i] <= high) kept[m++] = present[i];
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < keptCount; i++) {
    const v = kept[i];
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const width = (2 * iqr) / Math.cbrt(kept.length);
  const bins = max > min && width > 0 ? Math.min(MAX_BINS, Math.max(1, Math.ceil((max - min) / width))) : 1;
  const span = max > min ? (max - min) / bins : 1;
  const start = max > min ? min : min - 0.5;
  // Plain loops: a Grid makes one histogram, in a process that may still run this code cold.
  const edges = new Array<number>(bins + 1);
  for (let b = 0; b <= bins; b++) edges[b] = start + b * span;
  const centers = new Array<number>(bins);
  for (let b = 0; b < bins; b++) centers[b] = edges[b] + span / 2;
  const count = new Array<number>(bins).fill(0);
  for (let i = 0; i < keptCount; i++) count[Math.min(bins - 1, Math.floor((kept[i] - start) / span))]++;
  return { bin_edges: edges, bin_centers: centers, bin_widths: new Array<number>(bins).fill(span), count };
}
