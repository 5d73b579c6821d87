/**
 * Which attribute combinations a Grid evaluates (docs/methodology.md section 7.3).
 *
 * Without `attribute_combi` the admissible set is every non-empty subset of the K columns whose size
 * is allowed (`allowed_k`, else `min_k`..`max_k`), that contains every required attribute and that
 * takes each attribute group (a row with two or more 1s) whole or not at all. It is modelled as
 * "units": each such group is one unit, every other column a unit of its own; units holding a
 * required attribute are always on, the others are free. A dynamic programme over the free units
 * counts the subsets of every column size (doubles: exact up to 2^53, proportional beyond).
 *
 * When the admissible count fits in `max_iter` all combinations are enumerated; otherwise
 * `max_iter` distinct ones are drawn uniformly at random (seeded, src/engine/random.ts). Either way
 * the plan lists them in trie order: lexicographic over ascending index lists, a prefix before its
 * extensions ([0], [0,1], [0,1,2], ..., [1], [1,2], ...). The sampling is our own rule [G]; it does
 * not reproduce the legacy CSA engine's draws.
 */
import { invalid } from "./errors.js";
import type { GridOptions } from "./options.js";
import { createRandom, randomInt } from "./random.js";

export interface CombinationPlan {
  /** Each combination as ascending column indices. */
  combinations: number[][];
  /** How many combinations the constraints admit (may exceed combinations.length when sampled); Infinity beyond Number.MAX_SAFE_INTEGER. */
  admissible: number;
  /** True when max_iter was smaller than the admissible count and combinations were drawn at random. */
  sampled: boolean;
}

export type CombinationOptions = Pick<
  GridOptions,
  "min_k" | "max_k" | "allowed_k" | "required_attributes" | "attribute_groups" | "attribute_combi" | "max_iter" | "seed"
>;

/** The admissible set in unit form. */
interface Space {
  k: number;
  /** Columns on in every combination (required attributes and the rest of their groups). */
  requiredColumns: number[];
  /** The units holding required attributes (switched on in every combination). */
  requiredUnits: number[][];
  /** Free units, each as ascending columns, ordered by their smallest column. */
  units: number[][];
  /** allowed[s] = 1 when a combination of s columns is legal (index 0..k). */
  allowed: Uint8Array;
  /** ways[i][t] = number of subsets of free units i.. holding exactly t columns (t = 0..k). */
  ways: Float64Array[];
}

export function planCombinations(k: number, options: CombinationOptions): CombinationPlan {
  if (options.attribute_combi !== undefined) {
    const combinations = options.attribute_combi.map((row) => onColumns(row));
    return { combinations, admissible: combinations.length, sampled: false };
  }
  // The plan is a function of K and these options alone: the last few are kept for the next Grid
  // that asks for the same (a notebook's Grids on one data set; sampling 1,000 of the 16,383
  // combinations of K = 14 took about a millisecond). Plans are read, never changed.
  const key = JSON.stringify([
    k,
    options.min_k,
    options.max_k,
    options.allowed_k,
    options.required_attributes,
    options.attribute_groups,
    options.max_iter,
    options.seed,
  ]);
  let plan = recentPlans.get(key);
  if (!plan) {
    plan = freshPlan(k, options);
    recentPlans.set(key, plan);
    // The oldest goes (a Map keeps the order of insertion): a service's checks plan with max_iter 1 between Grids.
    if (recentPlans.size > RECENT_PLANS) recentPlans.delete(recentPlans.keys().next().value!);
  }
  return plan;
}

/** The plans `planCombinations` gave last, by their inputs. */
const recentPlans = new Map<string, CombinationPlan>();
const RECENT_PLANS = 4;

function freshPlan(k: number, options: CombinationOptions): CombinationPlan {
  const space = buildSpace(k, options);
  const r = space.requiredColumns.length;
  // bySize[s]: admissible combinations of s columns.
  const bySize = new Float64Array(k + 1);
  let total = 0;
  for (let s = r; s <= k; s++) {
    if (space.allowed[s]) {
      bySize[s] = space.ways[0][s - r];
      total += bySize[s];
    }
  }
  if (!(total > 0)) impossible(space, options);
  const admissible = total > Number.MAX_SAFE_INTEGER ? Infinity : total;
  const maxIter = options.max_iter;
  const combinations: number[][] = [];
  if (total <= maxIter) {
    walkTrie(space, (cols) => void combinations.push(cols.slice()));
    return { combinations, admissible, sampled: false };
  }
  const rand = createRandom(options.seed);
  if (total <= 2 * maxIter) {
    // Dense case (at most 2 * max_iter admissible): selection sampling (Knuth's Algorithm S) over
    // the trie-ordered stream keeps each one with probability needed / remaining, which gives a
    // uniform max_iter-subset, already in order, without a long tail of rejected duplicates.
    let remaining = total;
    walkTrie(space, (cols) => {
      if (randomInt(rand, remaining) < maxIter - combinations.length) combinations.push(cols.slice());
      remaining--;
      return combinations.length === maxIter;
    });
    return { combinations, admissible, sampled: true };
  }
  // Sparse case: independent uniform draws, duplicates rejected (under 1.4 draws per kept one).
  const seen = new Set<string>();
  while (seen.size < maxIter) seen.add(drawKey(space, bySize, total, rand));
  return { combinations: decode([...seen]), admissible, sampled: true };
}

function buildSpace(k: number, options: CombinationOptions): Space {
  // groupOf[j]: the group (of two or more columns) holding column j, or -1.
  const groupOf = new Array<number>(k).fill(-1);
  (options.attribute_groups ?? []).forEach((row, g) => {
    const cols = onColumns(row);
    if (cols.length >= 2) for (const j of cols) groupOf[j] = g;
  });
  const allUnits: number[][] = [];
  const unitOfGroup = new Map<number, number[]>();
  for (let j = 0; j < k; j++) {
    const g = groupOf[j];
    if (g < 0) {
      allUnits.push([j]);
    } else if (unitOfGroup.has(g)) {
      unitOfGroup.get(g)!.push(j);
    } else {
      const unit = [j];
      unitOfGroup.set(g, unit);
      allUnits.push(unit);
    }
  }
  const required = options.required_attributes;
  const requiredColumns: number[] = [];
  const requiredUnits: number[][] = [];
  const units: number[][] = [];
  for (const unit of allUnits) {
    if (required !== undefined && unit.some((j) => required[j] === 1)) {
      requiredUnits.push(unit);
      requiredColumns.push(...unit);
    } else units.push(unit);
  }
  requiredColumns.sort((a, b) => a - b);

  const allowed = new Uint8Array(k + 1);
  if (options.allowed_k !== undefined) {
    for (const s of options.allowed_k) if (s >= 1 && s <= k) allowed[s] = 1;
  } else {
    const lo = Math.max(1, options.min_k ?? 1);
    const hi = Math.min(k, options.max_k ?? k);
    for (let s = lo; s <= hi; s++) allowed[s] = 1;
  }

  const ways: Float64Array[] = new Array(units.length + 1);
  ways[units.length] = new Float64Array(k + 1);
  ways[units.length][0] = 1;
  for (let i = units.length - 1; i >= 0; i--) {
    const size = units[i].length;
    const next = ways[i + 1];
    const row = new Float64Array(k + 1);
    for (let t = 0; t <= k; t++) row[t] = next[t] + (t >= size ? next[t - size] : 0);
    ways[i] = row;
  }
  return { k, requiredColumns, requiredUnits, units, allowed, ways };
}

/**
 * Calls `emit` with every admissible combination, in trie order, by a depth-first walk over the
 * trie of ascending column lists: a node's own set comes before its extensions, and children go by
 * increasing next column. A branch is entered only when the DP says a legal size is still reachable
 * in it, so the work is about (admissible count) x K. `emit` gets a scratch array (copy it to keep
 * it) and may return true to stop the walk.
 */
function walkTrie(space: Space, emit: (cols: number[]) => boolean | void): void {
  const { k, units, ways, allowed } = space;
  const u = units.length;
  if (space.requiredUnits.length === 0 && u === k) {
    // Every column a free unit of its own (no groups, nothing required): the plain walk.
    plainTrie(k, allowed, emit);
    return;
  }
  // `all`: free units first (same indices as `units`), then required units; unitOf[j] indexes it.
  const all: { cols: number[]; required: boolean }[] = [];
  for (const cols of units) all.push({ cols, required: false });
  const unitOf = new Int32Array(k).fill(-1);
  units.forEach((cols, i) => cols.forEach((j) => (unitOf[j] = i)));
  for (const cols of space.requiredUnits) {
    const index = all.length;
    all.push({ cols, required: true });
    for (const j of cols) unitOf[j] = index;
  }
  // reqFrom[j]: columns of required units that start at j or later; freeFrom[j]: first free unit starting at j or later.
  const reqFrom = new Int32Array(k + 1);
  const freeFrom = new Int32Array(k + 1);
  freeFrom[k] = u;
  for (let j = k - 1; j >= 0; j--) {
    const unit = all[unitOf[j]];
    const starts = unit.cols[0] === j;
    reqFrom[j] = reqFrom[j + 1] + (starts && unit.required ? unit.cols.length : 0);
    freeFrom[j] = starts && !unit.required ? unitOf[j] : freeFrom[j + 1];
  }
  // ok[i][c]: with c columns already certain, free units i.. can still complete a legal size.
  const ok: Uint8Array[] = new Array(u + 1);
  for (let i = 0; i <= u; i++) {
    const row = new Uint8Array(k + 1);
    for (let c = 0; c <= k; c++) {
      for (let t = 0; c + t <= k; t++) {
        if (ways[i][t] > 0 && allowed[c + t]) {
          row[c] = 1;
          break;
        }
      }
    }
    ok[i] = row;
  }
  const on = new Uint8Array(all.length);
  const prefix: number[] = [];
  let pending = 0; // columns not yet reached that belong to units already switched on
  let stopped = false;
  // Columns < j are decided; prefix holds those switched on.
  const feasible = (j: number): boolean => ok[freeFrom[j]][prefix.length + pending + reqFrom[j]] === 1;
  const visit = (j: number): void => {
    if (pending === 0 && reqFrom[j] === 0 && allowed[prefix.length]) {
      if (emit(prefix)) {
        stopped = true;
        return;
      }
    }
    for (let c = j; c < k && !stopped; c++) {
      // Columns j..c-1 are off here; stop once that leaves no legal completion.
      if (!feasible(c)) break;
      const index = unitOf[c];
      const unit = all[index];
      const starts = unit.cols[0] === c;
      if (starts || on[index]) {
        const opened = starts ? unit.cols.length - 1 : -1;
        if (starts) on[index] = 1;
        pending += opened;
        prefix.push(c);
        if (feasible(c + 1)) visit(c + 1);
        prefix.pop();
        pending -= opened;
        if (starts) on[index] = 0;
      }
      // Going on to c+1 switches column c off: not allowed for a required unit or an open group.
      if ((starts && unit.required) || (!starts && on[index])) break;
    }
  };
  visit(0);
}

/**
 * `walkTrie` when every column is a free unit of its own: every ascending list of columns whose
 * size is allowed, in trie order (a prefix before its extensions, children by increasing next
 * column), by one loop over a stack of columns instead of a recursion of closures (a Grid plans
 * once, so this runs cold). A branch is entered only while an allowed size is still reachable in it.
 */
function plainTrie(k: number, allowed: Uint8Array, emit: (cols: number[]) => boolean | void): void {
  let smallest = 0;
  let largest = 0;
  for (let s = k; s >= 1; s--) {
    if (!allowed[s]) continue;
    smallest = s;
    if (largest === 0) largest = s;
  }
  if (largest === 0) return;
  const prefix: number[] = [];
  // The next column to try at the current depth.
  let next = 0;
  for (;;) {
    const depth = prefix.length;
    // Descend into `next` while that leaves an allowed size within reach: at most `largest`
    // columns, and at least `smallest` reachable with the columns from `next` on.
    if (next < k && depth < largest && depth + (k - next) >= smallest) {
      prefix.push(next);
      if (allowed[depth + 1] && emit(prefix)) return;
      next++;
      continue;
    }
    if (depth === 0) return;
    next = prefix.pop()! + 1;
  }
}

/** One admissible combination drawn uniformly: a size in proportion to its count, then a uniform subset of free units of that size. */
function drawKey(space: Space, bySize: Float64Array, total: number, rand: () => number): string {
  const { units, ways } = space;
  let size = -1;
  let x = rand() * total;
  for (let s = 0; s < bySize.length; s++) {
    if (bySize[s] > 0) {
      size = s;
      x -= bySize[s];
      if (x < 0) break;
    }
  }
  let t = size - space.requiredColumns.length;
  const chosen: number[] = [];
  for (let i = 0; i < units.length && t > 0; i++) {
    const n = units[i].length;
    // Of the ways[i][t] completions, ways[i+1][t-n] include unit i.
    const withUnit = t >= n ? ways[i + 1][t - n] : 0;
    if (withUnit > 0 && rand() * ways[i][t] < withUnit) {
      chosen.push(i);
      t -= n;
    }
  }
  return keyOf(space, chosen);
}

/**
 * A combination as a string of char codes (its ascending column indices): the duplicate key of
 * the sampler, and string order is exactly the trie order.
 */
function keyOf(space: Space, chosen: number[]): string {
  const on = new Uint8Array(space.k);
  for (const j of space.requiredColumns) on[j] = 1;
  for (const i of chosen) for (const j of space.units[i]) on[j] = 1;
  const cols: number[] = [];
  for (let j = 0; j < space.k; j++) if (on[j]) cols.push(j);
  return String.fromCharCode(...cols);
}

function decode(keys: string[]): number[][] {
  keys.sort();
  return keys.map((key) => {
    const cols = new Array<number>(key.length);
    for (let i = 0; i < key.length; i++) cols[i] = key.charCodeAt(i);
    return cols;
  });
}

function onColumns(row: number[]): number[] {
  const cols: number[] = [];
  row.forEach((bit, j) => {
    if (bit === 1) cols.push(j);
  });
  return cols;
}

/** Explains why the constraints admit no combination, naming the options involved. */
function impossible(space: Space, options: CombinationOptions): never {
  const r = space.requiredColumns.length;
  const legal: number[] = [];
  for (let s = 1; s <= space.k; s++) if (space.allowed[s]) legal.push(s);
  const sizeOption =
    options.allowed_k !== undefined
      ? `allowed_k is [${[...new Set(options.allowed_k)].sort((a, b) => a - b).join(", ")}]`
      : options.min_k !== undefined && options.max_k !== undefined
        ? `min_k..max_k is ${options.min_k}..${options.max_k}`
        : options.max_k !== undefined
          ? `max_k is ${options.max_k}`
          : options.min_k !== undefined
            ? `min_k is ${options.min_k}`
            : `K is ${space.k}`;
  const expected = "options that admit at least one attribute combination";
  if (legal.length === 0) invalid("options", expected, `no size is legal: ${sizeOption}`);
  const largest = legal[legal.length - 1];
  if (r > largest) {
    const grouped = space.requiredColumns.length > countOnes(options.required_attributes) ? " (with their attribute_groups)" : "";
    const limit = options.allowed_k !== undefined ? `the largest allowed_k is ${largest}` : `max_k is ${largest}`;
    invalid("options", expected, `required_attributes switch on ${r} attributes${grouped} but ${limit}`);
  }
  const reachable: number[] = [];
  for (let t = 0; r + t <= space.k; t++) if (r + t >= 1 && space.ways[0][t] > 0) reachable.push(r + t);
  const who = options.required_attributes !== undefined ? "attribute_groups and required_attributes" : "attribute_groups";
  invalid("options", expected, `${who} only allow combinations of ${reachable.join(", ")} attributes but ${sizeOption}`);
}

function countOnes(mask: number[] | undefined): number {
  return mask === undefined ? 0 : mask.filter((b) => b === 1).length;
}
