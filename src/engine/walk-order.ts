/**
 * The order in which a Grid walks its combinations, when it can share more levels than the plan's
 * own (ascending) order: a tree over the lattice of column sets.
 *
 * A walk makes one level per node of a trie (walk.ts): each level adds one column to its parent's
 * whitened attributes, so a combination of d columns needs a level for each of its prefixes. Any
 * tree in which each node adds one column to its parent will do, whatever the order of the
 * columns; the combinations are its nodes, and so are the unvisited sets that connect them. In
 * ascending order, 1,000 of K = 14's 16,383 combinations drawn at random leave 1,682 levels that
 * nobody visits (1,061 with each chunk's greedy trie, walk.ts `trieOrder`). `walkOrder` builds the
 * tree from the largest sets down: a set whose parent (the set less one of its columns) is already
 * a node hangs there; the others get new parents, each time the one that the most of them share.
 * In the tree's depth-first order, cut into chunks of at most 64 where a chunk rebuilds the fewest
 * levels (`cutChunks`), a Grid's chunks then make 1,548 levels, against 2,061 (548 unvisited,
 * against 1,061).
 *
 * A combination's model does not depend on the order of its columns but for rounding, and the
 * chunks hold other combinations, so the Grid's last bits change (docs/methodology.md 7.2).
 */

import { commonPrefix, trieOrder } from "./walk.js";

/** A Grid's combinations in the order of its walk (`walkOrder`). */
export interface WalkOrder {
  /** The plan's combinations in the walk's order, each one's columns in the order its levels add them. */
  combinations: number[][];
  /** planIndex[q]: the index in the plan of `combinations[q]`. */
  planIndex: Int32Array;
  /** [from, to) ranges of `combinations`, the Grid's chunks (`cutChunks`). */
  chunks: [number, number][];
}

/**
 * The walk's order of a plan's combinations for chunks of at most `chunk` combinations, or null
 * when it would not make fewer levels than the plan's order walked in chunks of `chunk`, each
 * chunk on its own trie (`trieOrder`; a full plan's ascending order leaves next to no level
 * unvisited, and is kept without building the tree). Combinations must be distinct, non-empty
 * and on columns below 20 (`MOST_COLUMNS`); otherwise null too. Kept for the plan (plans are
 * kept: combinations.ts `planCombinations`), so a Grid after the first pays nothing.
 *
 * @example
 * walkOrder([[0, 1, 2], [0, 3, 4], [1, 2, 5], [3, 4, 5]], 64);
 * // { combinations: [[1, 2, 0], [1, 2, 5], [3, 4, 0], [3, 4, 5]], planIndex: Int32Array [0, 2, 1, 3], chunks: [[0, 4]] }: 8 levels, against 11 in ascending order and 10 on the chunk's trie
 */
export function walkOrder(combinations: readonly (readonly number[])[], chunk: number): WalkOrder | null {
  const kept = walkOrders.get(combinations);
  if (kept !== undefined && kept.chunk === chunk) return kept.order;
  const order = freshWalkOrder(combinations, chunk);
  walkOrders.set(combinations, { chunk, order });
  return order;
}
const walkOrders = new WeakMap<readonly (readonly number[])[], { chunk: number; order: WalkOrder | null }>();

/**
 * [from, to) ranges of `count` in order, `size` each (the last one shorter).
 *
 * @example
 * fixedChunks(150, 64); // [[0, 64], [64, 128], [128, 150]]
 */
export function fixedChunks(count: number, size: number): [number, number][] {
  const chunks: [number, number][] = [];
  for (let from = 0; from < count; from += size) chunks.push([from, Math.min(count, from + size)]);
  return chunks;
}

/**
 * Chunks of at most `most` paths, in order. A chunk's walk starts with no level made, so it builds
 * again the levels its first path shares with the last path of the chunk before it: each chunk
 * ends, among its last quarter of sizes (3/4 `most` to `most`), where the next path shares the
 * fewest columns with the one before it (the largest size on a tie).
 *
 * @example
 * cutChunks([[0], [0, 1], [0, 2], [3], [3, 4]], 4); // [[0, 3], [3, 5]]: the second starts at [3], which shares nothing
 */
export function cutChunks(paths: readonly (readonly number[])[], most: number): [number, number][] {
  const chunks: [number, number][] = [];
  const least = Math.max(1, Math.ceil((3 * most) / 4));
  let from = 0;
  while (paths.length - from > most) {
    let to = from + most;
    let shared = commonPrefix(paths[to - 1], paths[to]);
    for (let end = from + most - 1; end >= from + least && shared > 0; end--) {
      const s = commonPrefix(paths[end - 1], paths[end]);
      if (s < shared) [to, shared] = [end, s];
    }
    chunks.push([from, to]);
    from = to;
  }
  if (from < paths.length) chunks.push([from, paths.length]);
  return chunks;
}

/** The levels a walk of these paths makes in these chunks: each path's columns past those it shares with the path before it in its chunk. */
function levelsIn(paths: readonly (readonly number[])[], chunks: readonly [number, number][]): number {
  let levels = 0;
  for (const [from, to] of chunks) {
    for (let q = from; q < to; q++) levels += paths[q].length - (q > from ? commonPrefix(paths[q - 1], paths[q]) : 0);
  }
  return levels;
}

function freshWalkOrder(combinations: readonly (readonly number[])[], chunk: number): WalkOrder | null {
  const Q = combinations.length;
  const planChunks = fixedChunks(Q, chunk);
  // As walk.ts `trieOrder` decides for a chunk: with at most a quarter of the levels unvisited, the plan's order is kept.
  const ascending = levelsIn(combinations, planChunks);
  if (4 * (ascending - Q) <= ascending) return null;
  const tree = latticeTree(combinations);
  if (tree === null) return null;
  const ordered = depthFirst(tree, combinations);
  const chunks = cutChunks(ordered.combinations, chunk);
  // Against the chunks' own tries (which the walk keeps with the plan, so a Grid uses them if they are taken).
  let tries = 0;
  for (const [from, to] of planChunks) {
    const indices: number[] = [];
    for (let q = from; q < to; q++) indices.push(q);
    const { paths } = trieOrder(combinations, indices);
    tries += levelsIn(paths, [[0, paths.length]]);
  }
  return levelsIn(ordered.combinations, chunks) < tries ? { ...ordered, chunks } : null;
}

/** A tree over column sets (bit masks): each node's parent is the node less one of its columns. */
interface LatticeTree {
  /** The node of each combination. */
  nodeOf: Int32Array;
  /** Each node's set of columns, and its parent's node (-1 at the root, the empty set: node 0). */
  masks: number[];
  parents: number[];
}

/** Columns the lattice's tables cover (a table of 2^K entries: 4 MB at 20). Wider data keeps the plan's order. */
const MOST_COLUMNS = 20;

/**
 * The tree of `walkOrder`, or null when a combination is empty, repeated or on a column of
 * `MOST_COLUMNS` or more. From the largest sets down: each set of size k whose set less one column
 * is a node hangs there (the lowest such column's); the others, by greedy cover, under the set of
 * size k - 1 that most of them hold (on a tie, one that a node holds already), made a node, until
 * each has a parent. Sets are bit masks, indices into tables of 2^K entries.
 */
function latticeTree(combinations: readonly (readonly number[])[]): LatticeTree | null {
  const Q = combinations.length;
  let K = 1;
  for (const combination of combinations) for (const j of combination) K = Math.max(K, j + 1);
  if (K > MOST_COLUMNS) return null;
  // nodeAt[mask]: the node of that set plus 1 (0: none); held[mask]: how many needy nodes hold it.
  const nodeAt = new Int32Array(1 << K);
  const held = new Int32Array(1 << K);
  const nodeOf = new Int32Array(Q);
  const masks: number[] = [0];
  const parents: number[] = [-1];
  nodeAt[0] = 1;
  const bySize: number[][] = [[0]];
  for (let q = 0; q < Q; q++) {
    let mask = 0;
    for (const j of combinations[q]) {
      if (!(j >= 0) || (mask >> j) & 1) return null;
      mask |= 1 << j;
    }
    if (mask === 0 || nodeAt[mask] !== 0) return null;
    const size = combinations[q].length;
    nodeOf[q] = masks.length;
    nodeAt[mask] = masks.length + 1;
    while (bySize.length <= size) bySize.push([]);
    bySize[size].push(masks.length);
    masks.push(mask);
    parents.push(-1);
  }
  // The node of mask less its column j, or -1.
  const below = (mask: number, j: number) => nodeAt[mask & ~(1 << j)] - 1;
  const hasParentNode = (mask: number) => {
    for (let rest = mask; rest !== 0; rest &= rest - 1) if (nodeAt[mask & ~(rest & -rest)] !== 0) return true;
    return false;
  };
  for (let k = bySize.length - 1; k >= 1; k--) {
    // The nodes of size k that no node of size k - 1 holds yet.
    let left = 0;
    for (const node of bySize[k]) {
      const mask = masks[node];
      for (let rest = mask; rest !== 0 && parents[node] < 0; rest &= rest - 1) parents[node] = below(mask, 31 - Math.clz32(rest & -rest));
      if (parents[node] >= 0) continue;
      left++;
      for (let rest = mask; rest !== 0; rest &= rest - 1) held[mask & ~(rest & -rest)]++;
    }
    if (left === 0) continue;
    // Greedy cover. A candidate (a set of size k - 1) ranks by how many needy nodes hold it, and
    // on a tie first when a node already holds it (it then needs no parent of its own): rank
    // 2 count + 1 or 2 count, in buckets by rank. A candidate whose count has dropped since it was
    // filed is filed again lower.
    const rankOf = (candidate: number) => 2 * held[candidate] + (hasParentNode(candidate) ? 1 : 0);
    const buckets: number[][] = [];
    for (const node of bySize[k]) {
      if (parents[node] >= 0) continue;
      const mask = masks[node];
      for (let rest = mask; rest !== 0; rest &= rest - 1) {
        const candidate = mask & ~(rest & -rest);
        if (held[candidate] < 0) continue;
        const rank = rankOf(candidate);
        held[candidate] = -held[candidate]; // filed (negative while filed, so once each)
        while (buckets.length <= rank) buckets.push([]);
        buckets[rank].push(candidate);
      }
    }
    for (const bucket of buckets) for (const candidate of bucket) held[candidate] = -held[candidate];
    for (let rank = buckets.length - 1; rank >= 2 && left > 0;) {
      const bucket = buckets[rank];
      if (bucket.length === 0) {
        rank--;
        continue;
      }
      const candidate = bucket.pop()!;
      const now = rankOf(candidate);
      if (now < rank) {
        if (held[candidate] > 0) buckets[now].push(candidate);
        continue;
      }
      const parent = masks.length;
      masks.push(candidate);
      parents.push(-1);
      nodeAt[candidate] = parent + 1;
      bySize[k - 1].push(parent);
      // Its needy holders hang under it; the other candidates they held count them no more.
      for (let j = 0; j < K; j++) {
        if ((candidate >> j) & 1) continue;
        const holder = nodeAt[candidate | (1 << j)] - 1;
        if (holder < 0 || parents[holder] >= 0) continue;
        parents[holder] = parent;
        left--;
        const mask = masks[holder];
        for (let rest = mask; rest !== 0; rest &= rest - 1) held[mask & ~(rest & -rest)]--;
      }
    }
  }
  return { nodeOf, masks, parents };
}

/**
 * The combinations in the tree's depth-first order, each one's columns in the order of its path
 * from the root. A node's children go in the order of the column each adds (so the paths come in
 * ascending order, as walk.ts `trieOrder` takes them), the combinations at a node before them.
 */
function depthFirst(tree: LatticeTree, combinations: readonly (readonly number[])[]): Omit<WalkOrder, "chunks"> {
  const { nodeOf, masks, parents } = tree;
  const visitsAt = new Int32Array(masks.length).fill(-1);
  for (let q = 0; q < nodeOf.length; q++) visitsAt[nodeOf[q]] = q;
  const children: number[][] = masks.map(() => []);
  for (let node = 1; node < masks.length; node++) children[parents[node]].push(node);
  const added = (node: number) => 31 - Math.clz32(masks[node] ^ masks[parents[node]]);
  for (const list of children) list.sort((a, b) => added(a) - added(b));
  const ordered: number[][] = [];
  const planIndex = new Int32Array(combinations.length);
  const path: number[] = [];
  // An explicit stack of (node, next child) rather than recursion: a path is at most 20 deep, but plainer to read as a loop.
  const stack: number[] = [0];
  const next: number[] = [0];
  while (stack.length > 0) {
    const node = stack[stack.length - 1];
    const c = next[next.length - 1]++;
    if (c === 0 && visitsAt[node] >= 0) {
      planIndex[ordered.length] = visitsAt[node];
      ordered.push(path.slice());
    }
    if (c < children[node].length) {
      const child = children[node][c];
      path.push(added(child));
      stack.push(child);
      next.push(0);
    } else {
      stack.pop();
      next.pop();
      path.pop();
    }
  }
  return { combinations: ordered, planIndex };
}
