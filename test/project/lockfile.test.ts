/**
 * `npm ci` on a fresh clone: npm refuses a lockfile in which some package's optional dependency
 * (a platform's native binary: rollup's, esbuild's) is not recorded, even when that platform is not
 * this one. These checks read package-lock.json as npm ci does, so a lockfile regenerated where some
 * platform packages cannot be fetched fails here rather than in a newcomer's first command.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const REPO = new URL("../../", import.meta.url);
const lock = JSON.parse(readFileSync(new URL("package-lock.json", REPO), "utf8")) as {
  lockfileVersion: number;
  packages: Record<string, { version?: string; dependencies?: Record<string, string>; optionalDependencies?: Record<string, string>; os?: string[] }>;
};
type Manifest = {
  name?: string;
  version?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  engines?: Record<string, string>;
  bin?: Record<string, string>;
  license?: string;
  overrides?: Record<string, unknown>;
};
const pkg = JSON.parse(readFileSync(new URL("package.json", REPO), "utf8")) as Manifest;
const root = lock.packages[""] as Manifest;

/** Where Node (and npm) would find `name` from the package installed at `from`: its own node_modules, then each parent's. */
function resolveFrom(from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const candidate = dir === "" ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (lock.packages[candidate]) return candidate;
    if (dir === "") return undefined;
    const cut = dir.lastIndexOf("/node_modules/");
    dir = cut < 0 ? "" : dir.slice(0, cut);
  }
}

describe("package-lock.json", () => {
  it("records every optional dependency of every package, for every platform (what npm ci requires)", () => {
    const missing: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      for (const name of Object.keys(entry.optionalDependencies ?? {})) {
        if (!resolveFrom(path, name)) missing.push(`${path || "(root)"} -> ${name}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it("holds rollup's native package for macOS, Windows and Linux (so no platform's npm install goes without it)", () => {
    const rollup = Object.entries(lock.packages).filter(([path, e]) => /(^|\/)node_modules\/rollup$/.test(path) && e.version?.startsWith("4."));
    expect(rollup.length).toBeGreaterThan(0);
    for (const [path, entry] of rollup) {
      for (const platform of ["darwin-arm64", "darwin-x64", "win32-x64-msvc", "linux-x64-gnu", "linux-arm64-gnu"]) {
        const at = resolveFrom(path, `@rollup/rollup-${platform}`);
        expect(at, `${path}: @rollup/rollup-${platform}`).toBeDefined();
        expect(lock.packages[at!].version).toBe(entry.version);
      }
    }
  });

  it("pins vite's rollup through overrides, to a release whose platform packages are all published", () => {
    expect(pkg.overrides).toEqual({ vite: { rollup: expect.stringMatching(/^4\.\d+\.\d+$/) } });
  });

  it("its root entry says what package.json says, so npm install leaves it unchanged", () => {
    // npm install rewrites the lockfile's root entry when it differs from package.json (a "^1.0.39"
    // against "1.0.39" was enough); npm ci refuses a lockfile out of step with package.json.
    for (const key of [
      "name",
      "version",
      "license",
      "dependencies",
      "devDependencies",
      "optionalDependencies",
      "peerDependencies",
      "engines",
      "bin",
    ] as const) {
      expect(root[key], `package-lock.json packages[""].${key}`).toEqual(pkg[key]);
    }
  });

  it("locks every direct dependency at a version its range in package.json accepts", () => {
    const ranges = { ...pkg.dependencies, ...pkg.devDependencies };
    for (const [name, range] of Object.entries(ranges)) {
      const locked = lock.packages[`node_modules/${name}`]?.version;
      expect(locked, name).toBeDefined();
      const [major, minor, patch] = locked!.split(".").map((x) => Number.parseInt(x, 10));
      const m = /^([~^]?)(\d+)\.(\d+)\.(\d+)$/.exec(range);
      expect(m, `${name}: a plain, caret or tilde range (${range})`).not.toBeNull();
      const [, op, a, b, c] = m!;
      const want = [Number(a), Number(b), Number(c)];
      const atLeast = major > want[0] || (major === want[0] && (minor > want[1] || (minor === want[1] && patch >= want[2])));
      const accepted =
        op === ""
          ? locked === `${a}.${b}.${c}`
          : op === "~"
            ? atLeast && major === want[0] && minor === want[1]
            : atLeast && major === want[0] && (want[0] !== 0 || minor === want[1]);
      expect(accepted, `${name}: locked ${locked}, package.json asks ${range}`).toBe(true);
    }
  });
});
