/**
 * A small seeded pseudo-random generator for the engine's sampling (Grid combinations).
 *
 * Generator: xoshiro128** 1.0 (Blackman and Vigna), 128 bits of state, period 2^128 - 1. The four
 * state words are filled from the uint32 seed with SplitMix32 (the 32-bit SplitMix variant:
 * a Weyl step of 0x9e3779b9, then the mixer x ^= x >>> 16; x *= 0x21f0aaad; x ^= x >>> 15;
 * x *= 0x735a2d97; x ^= x >>> 15). Every step uses only 32-bit integer operations (Math.imul,
 * shifts, xor), so a seed gives the same stream on every platform and Node version.
 *
 * Floats are built from 53 random bits (two outputs: 27 high bits of the first, 26 of the second),
 * so they are multiples of 2^-53 in [0, 1). The streams do not reproduce the legacy CSA engine's RNG.
 */

/** Returns a generator of floats in [0, 1) for a seed in [0, 2^32) (other integers wrap modulo 2^32). */
export function createRandom(seed: number): () => number {
  if (!Number.isInteger(seed)) throw new RangeError(`seed must be an integer, got ${String(seed)}`);
  const next = xoshiro128ss(seed >>> 0);
  return () => ((next() >>> 5) * 67108864 + (next() >>> 6)) / 9007199254740992;
}

/** A uniform integer in 0..n-1 drawn from `rand` (bias at most n / 2^53). */
export function randomInt(rand: () => number, n: number): number {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`n must be a positive integer, got ${String(n)}`);
  return Math.floor(rand() * n);
}

/** The raw xoshiro128** stream of uint32 values, seeded through SplitMix32. */
export function xoshiro128ss(seed: number): () => number {
  let sm = seed | 0;
  const splitmix32 = (): number => {
    sm = (sm + 0x9e3779b9) | 0;
    let z = sm;
    z = Math.imul(z ^ (z >>> 16), 0x21f0aaad);
    z = Math.imul(z ^ (z >>> 15), 0x735a2d97);
    return (z ^ (z >>> 15)) >>> 0;
  };
  let s0 = splitmix32();
  let s1 = splitmix32();
  let s2 = splitmix32();
  let s3 = splitmix32();
  if ((s0 | s1 | s2 | s3) === 0) s0 = 1; // the all-zero state is a fixed point
  return () => {
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = rotl(s3, 11);
    return result;
  };
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
