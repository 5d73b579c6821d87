/** "Did you mean ...?" for magic names, option names and keywords: the nearest known word. */

/** Optimal string alignment distance (Levenshtein plus the swap of two neighbours), case-insensitive. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  const rows: number[][] = [];
  for (let i = 0; i <= s.length; i++) {
    rows.push([i]);
    for (let j = 1; j <= t.length; j++) {
      if (i === 0) {
        rows[0][j] = j;
        continue;
      }
      const cost = s[i - 1] === t[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) d = Math.min(d, rows[i - 2][j - 2] + 1);
      rows[i][j] = d;
    }
  }
  return rows[s.length][t.length];
}

/**
 * The known word nearest to `word`, when it is near enough to be a typo: at most one edit for short
 * words, two for words of six letters or more, or a word that one is a prefix of the other
 * (`thresh` for `threshold`). Ties go to the first in `known`.
 */
export function suggest(word: string, known: Iterable<string>): string | undefined {
  const w = word.toLowerCase();
  if (w === "") return undefined;
  const limit = w.length >= 6 ? 2 : 1;
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const c = candidate.toLowerCase();
    let d = editDistance(w, c);
    if (d > limit && w.length >= 3 && (c.startsWith(w) || w.startsWith(c))) d = limit;
    if (d <= limit && d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

/** `; did you mean "x"?` or nothing. */
export function didYouMean(word: string, known: Iterable<string>, show: (s: string) => string = (s) => JSON.stringify(s)): string {
  const hit = suggest(word, known);
  return hit === undefined ? "" : `; did you mean ${show(hit)}?`;
}
