/**
 * The code blocks of the README and of the pages of docs/ (where the README's reference moved),
 * executed as written, so that every example stays true to the letter.
 *
 * Every `sh`, `ts` and `js` block runs unless the line before it says otherwise, in an HTML comment
 * `<!-- readme-test: MODE [expect='TEXT'] -->`:
 * - `run` (the default): `sh` blocks run with bash (-e, -o pipefail) in the repository root; `ts`
 *   blocks are type-checked (tsc, nodenext, strict) and run with tsx; `js` blocks run with node.
 *   The `ts` and `js` blocks run in a user's project: a directory whose node_modules links
 *   rbp-notebook to this repository (as `npm install <path>` does) and holds danfojs,
 *   vega-datasets and tsx, like a project that installed them.
 * - `with-serve`: a `sh` block run in a scratch directory after `npx rbp serve --port 0`, with the
 *   export lines it printed in the environment (what a user pastes).
 * - `skip (reason)`: not run; the reason says what runs it instead.
 * - `expect='TEXT'`: the output (stdout and stderr) must contain TEXT.
 * Each block must exit with status 0. The hosted settings (CSA_*, RBP_*) are removed from the
 * environment, and Jupyter's data directory points into a scratch directory.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, ensureBuilt } from "../notebook/package.js";

interface Block {
  /** The page, from the repository's root: README.md, docs/x.md. */
  page: string;
  lang: string;
  code: string;
  line: number;
  mode: "run" | "skip" | "with-serve";
  reason?: string;
  expect?: string;
}

/** The fenced blocks of a page with the marker on the line before each. */
export function readmeBlocks(text: string, page = "README.md"): Block[] {
  const lines = text.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\w*)\s*$/.exec(lines[i]);
    if (open === null) continue;
    const indent = open[1].length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !/^\s*```\s*$/.test(lines[j]); j++) body.push(lines[j].slice(indent));
    const marker = /<!--\s*readme-test:\s*(run|skip|with-serve)\b(?:\s*\(([^)]*)\))?(?:\s+expect='([^']*)')?\s*-->/.exec(lines[i - 1] ?? "");
    blocks.push({
      page,
      lang: open[2],
      code: body.join("\n") + "\n",
      line: i + 1,
      mode: (marker?.[1] as Block["mode"] | undefined) ?? "run",
      ...(marker?.[2] !== undefined ? { reason: marker[2] } : {}),
      ...(marker?.[3] !== undefined ? { expect: marker[3] } : {}),
    });
    i = j;
  }
  return blocks;
}

/** The pages whose blocks run: the README and every page of docs/. */
const PAGES = [
  "README.md",
  ...readdirSync(join(REPO, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`),
];
const TEXT = new Map(PAGES.map((page) => [page, readFileSync(join(REPO, page), "utf8")]));
const RUNNABLE = new Set(["sh", "ts", "js"]);
const blocks = PAGES.flatMap((page) => readmeBlocks(TEXT.get(page)!, page)).filter((b) => RUNNABLE.has(b.lang));
const where = (b: Block) => `${b.page}:${b.line}`;
const scratch = mkdtempSync(join(tmpdir(), "rbp-readme-"));

/** The environment of a reader without a hosted account. */
function readerEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, JUPYTER_DATA_DIR: join(scratch, "jupyter-data"), ...extra };
  for (const k of Object.keys(env)) if (/^(CSA_|RBP_)/.test(k) && !(k in extra)) delete env[k];
  return env;
}

function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<{ code: number | null; out: string }> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd, env });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, out });
    });
  });
}

/** A user's project: node_modules with rbp-notebook (this repository) and the packages the examples import. */
function userProject(): string {
  const dir = join(scratch, "project");
  mkdirSync(join(dir, "node_modules", "@types"), { recursive: true });
  symlinkSync(REPO, join(dir, "node_modules", "rbp-notebook"), "dir");
  for (const name of ["danfojs", "vega-datasets", "tsx"]) symlinkSync(join(REPO, "node_modules", name), join(dir, "node_modules", name), "dir");
  symlinkSync(join(REPO, "node_modules", "@types", "node"), join(dir, "node_modules", "@types", "node"), "dir");
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "readme-reader", private: true, type: "module" }));
  return dir;
}

let project: string;
let serve: { child: ChildProcess; env: Record<string, string> } | undefined;

beforeAll(() => {
  ensureBuilt();
  project = userProject();
});
afterAll(() => {
  if (serve?.child.pid !== undefined) {
    try {
      process.kill(-serve.child.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  rmSync(scratch, { recursive: true, force: true });
});

/** `npx rbp serve --port 0`, as a user starts it, and the export lines it printed. */
async function startServe(): Promise<Record<string, string>> {
  if (serve !== undefined) return serve.env;
  const child = spawn("npx", ["rbp", "serve", "--port", "0", "--quiet", "--workers", "1"], { cwd: REPO, env: readerEnv(), detached: true });
  const env = await new Promise<Record<string, string>>((done, fail) => {
    let out = "";
    const timer = setTimeout(() => fail(new Error(`npx rbp serve printed no banner: ${out}`)), 60_000);
    child.stdout!.on("data", (d) => {
      out += d;
      if (!out.includes("Press Ctrl+C to stop.")) return;
      clearTimeout(timer);
      done(Object.fromEntries([...out.matchAll(/^export (\w+)=(\S+)$/gm)].map((m) => [m[1], m[2]])));
    });
    child.on("exit", (code) => fail(new Error(`npx rbp serve exited (${code}): ${out}`)));
  });
  serve = { child, env };
  return env;
}

describe("the code blocks of the README and docs/", () => {
  it("every sh, ts and js block is run or says why not", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(8);
    for (const b of blocks.filter((x) => x.mode === "skip")) expect(b.reason?.trim(), where(b)).toBeTruthy();
    expect(blocks.filter((b) => b.mode !== "skip").length).toBeGreaterThanOrEqual(5);
    // The README's own tour runs: at least a ts block and a sh block of it.
    const readme = blocks.filter((b) => b.page === "README.md" && b.mode !== "skip");
    expect(new Set(readme.map((b) => b.lang))).toEqual(new Set(["ts", "sh"]));
  });

  it("cites no file outside the repository", () => {
    for (const [page, text] of TEXT) expect(text, page).not.toMatch(/\.\.\/shared|shared\/spec/);
  });

  it("finds the blocks of every page, indented ones and their markers included", () => {
    const sample = readmeBlocks("a\n\n  <!-- readme-test: skip (why) -->\n  ```sh\n  echo 1\n  ```\n\n```ts\nconst x = 1;\n```\n", "docs/x.md");
    expect(sample.map((b) => [b.page, b.lang, b.mode, b.line, b.code])).toEqual([
      ["docs/x.md", "sh", "skip", 4, "echo 1\n"],
      ["docs/x.md", "ts", "run", 8, "const x = 1;\n"],
    ]);
    expect(PAGES).toEqual(expect.arrayContaining(["README.md", "docs/notebooks.md", "docs/cli.md"]));
  });

  for (const b of blocks.filter((x) => x.mode !== "skip")) {
    it(`${where(b)} (${b.lang}${b.mode === "with-serve" ? ", against npx rbp serve" : ""}) runs as written`, async () => {
      let result: { code: number | null; out: string };
      if (b.lang === "sh") {
        const extra = b.mode === "with-serve" ? await startServe() : {};
        const cwd = b.mode === "with-serve" ? mkdtempSync(join(scratch, "sh-")) : REPO;
        result = await run("bash", ["-e", "-o", "pipefail", "-c", b.code], cwd, readerEnv(extra));
      } else {
        const file = join(project, `block-${b.page.replace(/\W/g, "-")}-${b.line}.${b.lang === "ts" ? "mts" : "mjs"}`);
        writeFileSync(file, b.code);
        if (b.lang === "ts") {
          const tsc = join(REPO, "node_modules", "typescript", "bin", "tsc");
          const check = await run(
            process.execPath,
            [
              tsc,
              "--noEmit",
              "--strict",
              "--module",
              "nodenext",
              "--moduleResolution",
              "nodenext",
              "--target",
              "es2022",
              "--skipLibCheck",
              "--types",
              "node",
              file,
            ],
            project,
            readerEnv(),
          );
          expect(check.out, `tsc on ${where(b)}`).toBe("");
          expect(check.code).toBe(0);
        }
        result = await run(process.execPath, b.lang === "ts" ? ["--import", "tsx", file] : [file], project, readerEnv());
      }
      expect(result.code, `${where(b)} exited with ${result.code}:\n${result.out}`).toBe(0);
      if (b.expect !== undefined) expect(result.out).toContain(b.expect);
    }, 180_000);
  }
});
