/**
 * An exact oracle for the censor decisions (docs/ties.md): rational arithmetic on BigInt, so that
 * scores that are equal are equal, and the rows a (censor, threshold) keeps are decided without
 * rounding. Decimal inputs (every double is read as the decimal it prints as) give rational moments,
 * inverse, scores and linear-interpolation cuts. From the exact kept set the calibration's numbers
 * follow exactly too, except for the square roots in rho and asymmetry, which are taken on 60-digit
 * fixed point. Test-only, and slow on purpose: no shortcut of the engine is shared.
 */
import type { CensorOperator, CensorType, CensorUnit, Objective } from "../../src/engine/options.js";

const gcd = (a: bigint, b: bigint): bigint => {
  if (a < 0n) a = -a;
  if (b < 0n) b = -b;
  while (b) [a, b] = [b, a % b];
  return a;
};

export class Q {
  readonly n: bigint;
  readonly d: bigint;
  constructor(n: bigint, d = 1n) {
    if (d === 0n) throw new RangeError("zero denominator");
    if (d < 0n) [n, d] = [-n, -d];
    const g = gcd(n, d) || 1n;
    this.n = n / g;
    this.d = d / g;
  }
  /** The decimal a double prints as (String(x)), exactly. */
  static of(x: number | string): Q {
    const s = String(x);
    const m = /^(-?)(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(s);
    if (!m) throw new RangeError(`not a decimal: ${s}`);
    const digits = BigInt((m[2] || "0") + (m[3] ?? ""));
    let exp = (m[4] ? Number(m[4]) : 0) - (m[3]?.length ?? 0);
    let n = m[1] === "-" ? -digits : digits;
    let d = 1n;
    if (exp >= 0) n *= 10n ** BigInt(exp);
    else d = 10n ** BigInt(-exp);
    return new Q(n, d);
  }
  add(o: Q): Q {
    return new Q(this.n * o.d + o.n * this.d, this.d * o.d);
  }
  sub(o: Q): Q {
    return new Q(this.n * o.d - o.n * this.d, this.d * o.d);
  }
  mul(o: Q): Q {
    return new Q(this.n * o.n, this.d * o.d);
  }
  div(o: Q): Q {
    return new Q(this.n * o.d, this.d * o.n);
  }
  neg(): Q {
    return new Q(-this.n, this.d);
  }
  cmp(o: Q): number {
    const l = this.n * o.d;
    const r = o.n * this.d;
    return l < r ? -1 : l > r ? 1 : 0;
  }
  sign(): number {
    return this.n < 0n ? -1 : this.n > 0n ? 1 : 0;
  }
  floor(): bigint {
    const q = this.n / this.d;
    return this.n < 0n && q * this.d !== this.n ? q - 1n : q;
  }
  /** Fixed point with SCALE digits. */
  fixed(): bigint {
    return (this.n * SCALE) / this.d;
  }
  toNumber(): number {
    return Number(this.fixed()) / Number(SCALE);
  }
}

const DIGITS = 60n;
const SCALE = 10n ** DIGITS;
const ZERO = new Q(0n);
const ONE = new Q(1n);
const q = (n: number) => new Q(BigInt(n));

function isqrt(v: bigint): bigint {
  if (v < 2n) return v;
  let x = BigInt(Math.floor(Math.sqrt(Number(v))));
  for (;;) {
    const next = (x + v / x) >> 1n;
    if (next === x || next === x + 1n) return x * x > v ? x - 1n : x;
    x = next;
  }
}
/** sqrt of a non-negative rational, in fixed point. */
const fixedSqrt = (r: Q): bigint => isqrt((r.n * SCALE * SCALE) / r.d);
const fixedToNumber = (v: bigint): number => Number(v) / Number(SCALE);

/** Exact scores of one model (complete rows, every row usable). Null when the covariance is singular. */
export interface ExactScores {
  relevance: Q[];
  similarity: Q[];
}

export function exactScores(X: number[][], theta: number[], columns: number[]): ExactScores | null {
  const N = X.length;
  const k = columns.length;
  const x = X.map((row) => columns.map((j) => Q.of(row[j])));
  const t = columns.map((j) => Q.of(theta[j]));
  const mean = columns.map((_, a) => x.reduce((s, row) => s.add(row[a]), ZERO).div(q(N)));
  const centred = x.map((row) => row.map((v, a) => v.sub(mean[a])));
  const cov = Array.from({ length: k }, (_, a) =>
    Array.from({ length: k }, (_, b) => centred.reduce((s, row) => s.add(row[a].mul(row[b])), ZERO).div(q(N - 1))),
  );
  const inv = invert(cov);
  if (!inv) return null;
  const ct = t.map((v, a) => v.sub(mean[a]));
  const direction = inv.map((row) => row.reduce((s, v, b) => s.add(v.mul(ct[b])), ZERO));
  const dot = (u: Q[], v: Q[]) => u.reduce((s, ua, a) => s.add(ua.mul(v[a])), ZERO);
  const quad = (u: Q[]) =>
    dot(
      u,
      inv.map((row) => dot(row, u)),
    );
  const infoTheta = dot(ct, direction);
  const relevance = centred.map((row) => dot(row, direction));
  const similarity = centred.map((row, i) => relevance[i].sub(quad(row).add(infoTheta).div(q(2))));
  return { relevance, similarity };
}

function invert(m: Q[][]): Q[][] | null {
  const k = m.length;
  const a = m.map((row, i) => [...row, ...Array.from({ length: k }, (_, j) => (i === j ? ONE : ZERO))]);
  for (let c = 0; c < k; c++) {
    const p = a.findIndex((row, r) => r >= c && row[c].sign() !== 0);
    if (p < 0) return null;
    [a[c], a[p]] = [a[p], a[c]];
    const pivot = a[c][c];
    a[c] = a[c].map((v) => v.div(pivot));
    for (let r = 0; r < k; r++) {
      if (r === c || a[r][c].sign() === 0) continue;
      const f = a[r][c];
      a[r] = a[r].map((v, j) => v.sub(f.mul(a[c][j])));
    }
  }
  return a.map((row) => row.slice(k));
}

/** numpy's linear-interpolation percentile, exactly; the fraction is read as the decimal it prints as. */
export function exactPercentile(values: Q[], fraction: number): Q {
  const sorted = [...values].sort((a, b) => a.cmp(b));
  const h = q(sorted.length - 1).mul(Q.of(fraction));
  const lo = Number(h.floor());
  if (lo + 1 >= sorted.length) return sorted[lo];
  return sorted[lo].add(h.sub(q(lo)).mul(sorted[lo + 1].sub(sorted[lo])));
}

export function exactCut(scores: Q[], threshold: number, unit: CensorUnit): Q {
  return unit === "percent" ? exactPercentile(scores, threshold) : Q.of(threshold);
}

export function exactKept(scores: Q[], cut: Q, operator: CensorOperator): boolean[] {
  return scores.map((s) => {
    const c = s.cmp(cut);
    return operator === "gte" ? c >= 0 : operator === "gt" ? c > 0 : operator === "lte" ? c <= 0 : c < 0;
  });
}

export interface ExactCalibration {
  valid: boolean;
  kept: boolean[];
  n: number;
  rStar: Q;
  /** Share of scores strictly below the cut (score units). */
  rStarPercent: Q;
  yhat: number;
  fit: number;
  asymmetry: number;
  adjustedFit: number;
  kFit: number;
  /** 60-digit fixed point of the objectives, for exact tie decisions. */
  fixed: Record<Objective, bigint>;
}

export interface ExactSettings {
  censor: CensorType;
  threshold: number;
  unit: CensorUnit;
  operator: CensorOperator;
  /** K in adjusted fit (multiplier "K") and kfit. */
  attributes: number;
}

/** One PSR calibration from exact scores (response scale, adj_fit_multiplier "K"). */
export function exactCalibration(scores: ExactScores, y: number[], s: ExactSettings): ExactCalibration {
  const N = y.length;
  const r = scores.relevance;
  const censorScores = scores[s.censor];
  const cut = exactCut(censorScores, s.threshold, s.unit);
  const kept = exactKept(censorScores, cut, s.operator);
  const yq = y.map((v) => Q.of(v));
  const ybar = yq.reduce((a, v) => a.add(v), ZERO).div(q(N));
  const dy = yq.map((v) => v.sub(ybar));
  const sum = (f: (i: number) => Q, keep: (i: number) => boolean) => {
    let acc = ZERO;
    for (let i = 0; i < N; i++) if (keep(i)) acc = acc.add(f(i));
    return acc;
  };
  const all = () => true;
  const inSet = (i: number) => kept[i];
  const outSet = (i: number) => !kept[i];
  const n = kept.filter(Boolean).length;
  const below = censorScores.filter((v) => v.cmp(cut) < 0).length;
  const rStarPercent = new Q(BigInt(below), BigInt(N));
  const syy = sum((i) => dy[i].mul(dy[i]), all);
  const totalR2 = sum((i) => r[i].mul(r[i]), all);
  const s1 = sum((i) => r[i], inSet);
  const s2 = sum((i) => r[i].mul(r[i]), inSet);
  const sy = sum((i) => r[i].mul(dy[i]), inSet);
  const invalid: ExactCalibration = {
    valid: false,
    kept,
    n,
    rStar: cut,
    rStarPercent,
    yhat: NaN,
    fit: NaN,
    asymmetry: NaN,
    adjustedFit: NaN,
    kFit: NaN,
    fixed: { fit: -1n, adjusted_fit: -1n, kfit: -1n },
  };
  if (n < 2 || s2.sign() <= 0) return invalid;
  const fullVar = totalR2.div(q(N - 1));
  const partVar = s2.div(q(n - 1));
  const yhat = ybar.add(
    fullVar
      .div(partVar)
      .div(q(n - 1))
      .mul(sy),
  );
  const spread = s2.sub(s1.mul(s1).div(q(N)));
  // rho = sy / sqrt(spread syy); 0 when the weights are constant.
  const rhoOf = (cross: Q, sp: Q): bigint => (sp.sign() > 0 && syy.sign() > 0 ? BigInt(cross.sign()) * fixedSqrt(cross.mul(cross).div(sp.mul(syy))) : 0n);
  const rho = rhoOf(sy, spread);
  const nc = N - n;
  const s1c = sum((i) => r[i], outSet);
  const s2c = sum((i) => r[i].mul(r[i]), outSet);
  const complementValid = nc >= 2 && s2c.sign() > 0;
  const rhoC = complementValid
    ? rhoOf(
        sum((i) => r[i].mul(dy[i]), outSet),
        s2c.sub(s1c.mul(s1c).div(q(N))),
      )
    : 0n;
  const fitFixed = (rho * rho) / SCALE;
  const asymFixed = complementValid ? ((rho - rhoC) * (rho - rhoC)) / SCALE / 2n : 0n;
  const K = BigInt(s.attributes);
  const fixed = { fit: fitFixed, adjusted_fit: K * (fitFixed + asymFixed), kfit: K * fitFixed };
  return {
    valid: true,
    kept,
    n,
    rStar: cut,
    rStarPercent,
    yhat: yhat.toNumber(),
    fit: fixedToNumber(fixed.fit),
    asymmetry: fixedToNumber(asymFixed),
    adjustedFit: fixedToNumber(fixed.adjusted_fit),
    kFit: fixedToNumber(fixed.kfit),
    fixed,
  };
}

const allColumns = (X: number[][]) => Array.from({ length: X[0].length }, (_, j) => j);

/** Exact PSR on every attribute at each threshold of one censor. */
export function exactPsr(
  y: number[],
  X: number[][],
  theta: number[],
  censor: CensorType,
  thresholds: number[],
  unit: CensorUnit,
  operator: CensorOperator,
): ExactCalibration[] {
  const scores = exactScores(X, theta, allColumns(X));
  if (!scores) throw new Error("singular");
  return thresholds.map((threshold) => exactCalibration(scores, y, { censor, threshold, unit, operator, attributes: X[0].length }));
}

/** Exact MaxFit: the first maximum of the objective, relevance before similarity, thresholds in order. */
export function exactMaxFit(
  y: number[],
  X: number[][],
  theta: number[],
  thresholds: number[],
  objective: Objective,
  unit: CensorUnit = "percent",
  operator: CensorOperator = "gte",
): { selected: number; candidates: ExactCalibration[] } {
  const candidates = (["relevance", "similarity"] as const).flatMap((c) => exactPsr(y, X, theta, c, thresholds, unit, operator));
  let selected = -1;
  candidates.forEach((c, i) => {
    if (c.valid && (selected < 0 || c.fixed[objective] > candidates[selected].fixed[objective])) selected = i;
  });
  return { selected, candidates };
}

export interface ExactGridCell {
  columns: number[];
  censor: CensorType;
  t: number;
  calibration: ExactCalibration | null;
}

/** Exact Grid over every combination (sizes 1..K), both censors: the adjusted-fit-weighted composite yhat. */
export function exactGrid(
  y: number[],
  X: number[][],
  theta: number[],
  thresholds: number[],
  unit: CensorUnit = "percent",
  operator: CensorOperator = "gte",
): { yhat: number; cells: ExactGridCell[] } {
  const K = X[0].length;
  const cells: ExactGridCell[] = [];
  let total = 0n;
  let weighted = 0;
  for (let mask = 1; mask < 1 << K; mask++) {
    const columns = allColumns(X).filter((j) => mask & (1 << j));
    const scores = exactScores(X, theta, columns);
    for (const censor of ["relevance", "similarity"] as const) {
      thresholds.forEach((threshold, t) => {
        const c = scores ? exactCalibration(scores, y, { censor, threshold, unit, operator, attributes: columns.length }) : null;
        cells.push({ columns, censor, t, calibration: c });
        if (c?.valid && c.fixed.adjusted_fit > 0n) {
          total += c.fixed.adjusted_fit;
          weighted += fixedToNumber(c.fixed.adjusted_fit) * c.yhat;
        }
      });
    }
  }
  return { yhat: weighted / fixedToNumber(total), cells };
}
