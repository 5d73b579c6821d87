/**
 * The walk's passes over the rows (walk.ts), in two implementations that give the same bits:
 * `jsKernels`, plain loops, and the WebAssembly kernels of walk.wat, which do the very same
 * arithmetic two rows at a time (f64x2) and without bounds checks, about 2.5 to 5 times faster.
 *
 * The WebAssembly kernels read and write only their own memory, so a walk's arrays are views into
 * it: a `WalkArena` hands them out, from that memory when WebAssembly with SIMD is there and the
 * memory can be had, as plain arrays (for `jsKernels`) otherwise. Arrays are numbers of rows; no
 * array handed to a kernel may come from another arena.
 */
import { WALK_WASM } from "./walk-wasm.js";

/** Which implementation a walk uses: "wasm" when it can be had (the default), or "js". */
export type KernelChoice = "wasm" | "js";

export interface WalkKernels {
  readonly name: KernelChoice;
  /** dst[i] = src[i] - l0 u0[i] - l1 u1[i] - l2 u2[i] - l3 u3[i], left to right (dst may be src). */
  subtract4(
    dst: Float64Array,
    src: Float64Array,
    u0: Float64Array,
    u1: Float64Array,
    u2: Float64Array,
    u3: Float64Array,
    l0: number,
    l1: number,
    l2: number,
    l3: number,
    n: number,
  ): void;
  subtract2(dst: Float64Array, src: Float64Array, u0: Float64Array, u1: Float64Array, l0: number, l1: number, n: number): void;
  subtract1(dst: Float64Array, src: Float64Array, u0: Float64Array, l0: number, n: number): void;
  /** ud[i] *= inv; relNext[i] = relPrev[i] + ud[i] vd; infoNext[i] = infoPrev[i] + ud[i]^2. */
  scaleFirst(
    ud: Float64Array,
    inv: number,
    vd: number,
    relPrev: Float64Array,
    relNext: Float64Array,
    infoPrev: Float64Array,
    infoNext: Float64Array,
    n: number,
  ): void;
  /** relNext[i] = relPrev[i] + ud[i] vd. */
  extendRelevance(ud: Float64Array, vd: number, relPrev: Float64Array, relNext: Float64Array, n: number): void;
  /** `scaleFirst`, then simNext[i] = relNext[i] - 0.5 infoNext[i] - half, and bounds = [min r, max r, min s, max s]. */
  finishFirst(
    ud: Float64Array,
    inv: number,
    vd: number,
    half: number,
    relPrev: Float64Array,
    relNext: Float64Array,
    infoPrev: Float64Array,
    infoNext: Float64Array,
    simNext: Float64Array,
    bounds: Float64Array,
    n: number,
  ): void;
  /** `extendRelevance` (ud already scaled), then the similarity and bounds as `finishFirst`. */
  finishOther(
    ud: Float64Array,
    vd: number,
    half: number,
    relPrev: Float64Array,
    relNext: Float64Array,
    infoNext: Float64Array,
    simNext: Float64Array,
    bounds: Float64Array,
    n: number,
  ): void;
  /** sim[i] = rel[i] - 0.5 info[i] - half, and the bounds. */
  finishLevel(rel: Float64Array, info: Float64Array, half: number, sim: Float64Array, bounds: Float64Array, n: number): void;
}

/**
 * The kernels as plain loops: the reference the WebAssembly kernels are held to.
 *
 * @example
 * const [dst, u] = [Float64Array.of(1, 2), Float64Array.of(1, 1)];
 * jsKernels.subtract1(dst, dst, u, 0.5, 2); // dst = [0.5, 1.5]
 */
export const jsKernels: WalkKernels = {
  name: "js",
  subtract4(dst, src, u0, u1, u2, u3, l0, l1, l2, l3, n) {
    for (let i = 0; i < n; i++) dst[i] = src[i] - l0 * u0[i] - l1 * u1[i] - l2 * u2[i] - l3 * u3[i];
  },
  subtract2(dst, src, u0, u1, l0, l1, n) {
    for (let i = 0; i < n; i++) dst[i] = src[i] - l0 * u0[i] - l1 * u1[i];
  },
  subtract1(dst, src, u0, l0, n) {
    for (let i = 0; i < n; i++) dst[i] = src[i] - l0 * u0[i];
  },
  scaleFirst(ud, inv, vd, relPrev, relNext, infoPrev, infoNext, n) {
    for (let i = 0; i < n; i++) {
      const value = ud[i] * inv;
      ud[i] = value;
      relNext[i] = relPrev[i] + value * vd;
      infoNext[i] = infoPrev[i] + value * value;
    }
  },
  extendRelevance(ud, vd, relPrev, relNext, n) {
    for (let i = 0; i < n; i++) relNext[i] = relPrev[i] + ud[i] * vd;
  },
  finishFirst(ud, inv, vd, half, relPrev, relNext, infoPrev, infoNext, simNext, bounds, n) {
    let rMin = Infinity;
    let rMax = -Infinity;
    let sMin = Infinity;
    let sMax = -Infinity;
    for (let i = 0; i < n; i++) {
      const value = ud[i] * inv;
      ud[i] = value;
      const r = relPrev[i] + value * vd;
      const x = infoPrev[i] + value * value;
      const s = r - 0.5 * x - half;
      relNext[i] = r;
      infoNext[i] = x;
      simNext[i] = s;
      rMin = r < rMin ? r : rMin;
      rMax = r > rMax ? r : rMax;
      sMin = s < sMin ? s : sMin;
      sMax = s > sMax ? s : sMax;
    }
    setBounds(bounds, rMin, rMax, sMin, sMax);
  },
  finishOther(ud, vd, half, relPrev, relNext, infoNext, simNext, bounds, n) {
    let rMin = Infinity;
    let rMax = -Infinity;
    let sMin = Infinity;
    let sMax = -Infinity;
    for (let i = 0; i < n; i++) {
      const r = relPrev[i] + ud[i] * vd;
      const s = r - 0.5 * infoNext[i] - half;
      relNext[i] = r;
      simNext[i] = s;
      rMin = r < rMin ? r : rMin;
      rMax = r > rMax ? r : rMax;
      sMin = s < sMin ? s : sMin;
      sMax = s > sMax ? s : sMax;
    }
    setBounds(bounds, rMin, rMax, sMin, sMax);
  },
  finishLevel(rel, info, half, sim, bounds, n) {
    let rMin = Infinity;
    let rMax = -Infinity;
    let sMin = Infinity;
    let sMax = -Infinity;
    for (let i = 0; i < n; i++) {
      const r = rel[i];
      const s = r - 0.5 * info[i] - half;
      sim[i] = s;
      rMin = r < rMin ? r : rMin;
      rMax = r > rMax ? r : rMax;
      sMin = s < sMin ? s : sMin;
      sMax = s > sMax ? s : sMax;
    }
    setBounds(bounds, rMin, rMax, sMin, sMax);
  },
};

function setBounds(bounds: Float64Array, rMin: number, rMax: number, sMin: number, sMax: number): void {
  bounds[0] = rMin;
  bounds[1] = rMax;
  bounds[2] = sMin;
  bounds[3] = sMax;
}

/** The exports of walk.wat: jsKernels' methods with arrays as byte offsets. */
interface WalkExports {
  subtract4(dst: number, src: number, u0: number, u1: number, u2: number, u3: number, l0: number, l1: number, l2: number, l3: number, n: number): void;
  subtract2(dst: number, src: number, u0: number, u1: number, l0: number, l1: number, n: number): void;
  subtract1(dst: number, src: number, u0: number, l0: number, n: number): void;
  scaleFirst(ud: number, inv: number, vd: number, relPrev: number, relNext: number, infoPrev: number, infoNext: number, n: number): void;
  extendRelevance(ud: number, vd: number, relPrev: number, relNext: number, n: number): void;
  finishFirst(
    ud: number,
    inv: number,
    vd: number,
    half: number,
    relPrev: number,
    relNext: number,
    infoPrev: number,
    infoNext: number,
    simNext: number,
    bounds: number,
    n: number,
  ): void;
  finishOther(ud: number, vd: number, half: number, relPrev: number, relNext: number, infoNext: number, simNext: number, bounds: number, n: number): void;
  finishLevel(rel: number, info: number, half: number, sim: number, bounds: number, n: number): void;
}

function wasmKernels(w: WalkExports): WalkKernels {
  return {
    name: "wasm",
    subtract4: (dst, src, u0, u1, u2, u3, l0, l1, l2, l3, n) =>
      w.subtract4(dst.byteOffset, src.byteOffset, u0.byteOffset, u1.byteOffset, u2.byteOffset, u3.byteOffset, l0, l1, l2, l3, n),
    subtract2: (dst, src, u0, u1, l0, l1, n) => w.subtract2(dst.byteOffset, src.byteOffset, u0.byteOffset, u1.byteOffset, l0, l1, n),
    subtract1: (dst, src, u0, l0, n) => w.subtract1(dst.byteOffset, src.byteOffset, u0.byteOffset, l0, n),
    scaleFirst: (ud, inv, vd, relPrev, relNext, infoPrev, infoNext, n) =>
      w.scaleFirst(ud.byteOffset, inv, vd, relPrev.byteOffset, relNext.byteOffset, infoPrev.byteOffset, infoNext.byteOffset, n),
    extendRelevance: (ud, vd, relPrev, relNext, n) => w.extendRelevance(ud.byteOffset, vd, relPrev.byteOffset, relNext.byteOffset, n),
    finishFirst: (ud, inv, vd, half, relPrev, relNext, infoPrev, infoNext, simNext, bounds, n) =>
      w.finishFirst(
        ud.byteOffset,
        inv,
        vd,
        half,
        relPrev.byteOffset,
        relNext.byteOffset,
        infoPrev.byteOffset,
        infoNext.byteOffset,
        simNext.byteOffset,
        bounds.byteOffset,
        n,
      ),
    finishOther: (ud, vd, half, relPrev, relNext, infoNext, simNext, bounds, n) =>
      w.finishOther(ud.byteOffset, vd, half, relPrev.byteOffset, relNext.byteOffset, infoNext.byteOffset, simNext.byteOffset, bounds.byteOffset, n),
    finishLevel: (rel, info, half, sim, bounds, n) => w.finishLevel(rel.byteOffset, info.byteOffset, half, sim.byteOffset, bounds.byteOffset, n),
  };
}

/** The part of the WebAssembly API the arena uses (the engine is typed without the DOM's or Node's globals). */
interface WebAssemblyApi {
  validate(bytes: Uint8Array): boolean;
  Module: new (bytes: Uint8Array) => object;
  Memory: new (descriptor: { initial: number }) => { readonly buffer: ArrayBuffer };
  Instance: new (module: object, imports: object) => { readonly exports: unknown };
}
const wasm = (globalThis as { WebAssembly?: WebAssemblyApi }).WebAssembly;

/** The compiled module, once per thread; null where WebAssembly or its SIMD is missing. */
let compiled: object | null | undefined;

function walkModule(): object | null {
  if (compiled === undefined) {
    compiled = null;
    const bytes = Uint8Array.from(atob(WALK_WASM), (c) => c.charCodeAt(0));
    // A runtime without SIMD rejects the module: the plain loops serve instead.
    if (wasm?.validate(bytes)) compiled = new wasm.Module(bytes);
  }
  return compiled;
}

const PAGE = 65536;
/** Every array starts on 16 bytes (a pair of rows). */
const ALIGN = 16;

/**
 * The arrays of one walk, and the kernels that may be given them. Sized once: `array` hands out
 * at most the doubles asked for at construction.
 *
 * @example
 * const arena = new WalkArena(2 * 1000);
 * const [a, b] = [arena.array(1000), arena.array(1000)];
 * arena.kernels.subtract1(a, a, b, 0.5, 1000);
 */
export class WalkArena {
  readonly kernels: WalkKernels;
  private readonly memory: { readonly buffer: ArrayBuffer } | null = null;
  private used = 0;

  /** Room for `doubles` doubles in arrays of any lengths (each array's padding to 16 bytes counted by `doublesFor`). */
  constructor(
    readonly capacity: number,
    choice: KernelChoice = "wasm",
  ) {
    const module = choice === "wasm" ? walkModule() : null;
    if (module && wasm) {
      try {
        const memory = new wasm.Memory({ initial: Math.max(1, Math.ceil((capacity * 8) / PAGE)) });
        const instance = new wasm.Instance(module, { env: { memory } });
        this.memory = memory;
        this.kernels = wasmKernels(instance.exports as unknown as WalkExports);
        return;
      } catch (error) {
        // Memory refused (too large, or the address space is spent): the plain loops need no memory of their own.
        if (!(error instanceof RangeError)) throw error;
      }
    }
    this.kernels = jsKernels;
  }

  /** The doubles an arena needs for arrays of these lengths. */
  static doublesFor(lengths: readonly number[]): number {
    return lengths.reduce((sum, n) => sum + padded(n), 0);
  }

  /** A zero-filled array of n doubles, its own until the arena is dropped. */
  array(n: number): Float64Array {
    if (!this.memory) return new Float64Array(n);
    const at = this.used;
    if (at + padded(n) > this.capacity) throw new RangeError(`the walk's arena holds ${this.capacity} doubles; ${at + padded(n)} asked`);
    this.used += padded(n);
    return new Float64Array(this.memory.buffer, at * 8, n);
  }
}

function padded(n: number): number {
  const perAlign = ALIGN / 8;
  return Math.ceil(n / perAlign) * perAlign;
}
