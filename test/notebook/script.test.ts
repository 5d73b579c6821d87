/**
 * The built package as a user's script and tools see it: `npm run demo`'s program, a script that
 * uses the helper and ends by itself (the embedded service does not keep it alive), the public
 * declarations free of zod and undici, and a type check with tslab's bundled TypeScript (5.0,
 * Node 10 resolution, tslab's compiler options).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { REPO, ensureBuilt, runProcess as run, userProject } from "./package.js";

beforeAll(() => ensureBuilt());

/** Without CSA_* variables, so the helper uses the embedded service. */
function localEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (/^(CSA_|RBP_)/.test(k)) delete env[k];
  return env;
}

describe("npm run demo", () => {
  it("runs the quickstart Grid through the helper, writes the report and prints the headline numbers", async () => {
    const project = userProject("rbp-demo-");
    const out = join(project, "reports", "quickstart.html");
    const r = await run(process.execPath, [join(REPO, "dist/cli/demo.js"), join(REPO, "examples/quickstart-7x5.json"), out], {
      cwd: project,
      timeoutMs: 60_000,
      env: localEnv(),
    });
    expect(r.stderr).toMatch(/^Grid · job 1 · completed in \d+\.\d\d s · local service\n$/);
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toBe("Quickstart: Grid on the 7 x 5 example (N = 7, local service, job 1)");
    expect(lines.slice(1, 6).map((l) => l.trim().split(/\s{2,}/))).toEqual([
      ["yhat", "3.28524"],
      ["fit", "0.08769"],
      ["adjusted fit", "1.05774"],
      ["K", "5"],
      ["combinations", "31"],
    ]);
    const html = readFileSync(out, "utf8");
    expect(lines[6]).toBe(`Report: ${out} (${(Buffer.byteLength(html) / 1e6).toFixed(2)} MB, plotly.js inlined)`);
    expect(lines[7]).toMatch(/^  with \{ plotly: "file" \}: \d+ KB \+ plotly-[\d.]+\.min\.js beside it \(4\.\d\d MB\); with a URL: \d+ KB$/);
    expect(html).toContain("<title>Quickstart: Grid on the 7 x 5 example</title>");
    expect(html).toContain("data-rbp-plotly");
  });
});

describe("a user's script", () => {
  it("imports the package by name, runs a Grid and ends by itself without disconnect()", async () => {
    const project = userProject("rbp-script-");
    const data = relative(project, resolve(REPO, "test/fixtures/quickstart-7x5.json"));
    writeFileSync(
      join(project, "analysis.mjs"),
      `import { readFileSync } from "node:fs";
import { grid } from "rbp-notebook";
const { inputs } = JSON.parse(readFileSync(${JSON.stringify(data)}, "utf8"));
const p = await grid({ y: inputs.y, X: inputs.X }, {}, {}, { progress: "none" });
console.log(JSON.stringify({ yhat: p.yhat, service: p.service, combinations: p.combinations }));
// Node says when its event loop has nothing left to wait for: the process then ends by itself.
process.once("beforeExit", () => console.log("ended by itself"));
`,
    );
    const r = await run(process.execPath, ["analysis.mjs"], { cwd: project, timeoutMs: 20_000, env: localEnv() });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const [first, last] = r.stdout.trim().split("\n");
    const out = JSON.parse(first) as { yhat: number; service: string; combinations: number };
    expect(out.service).toBe("local");
    expect(out.combinations).toBe(31);
    // It ended by itself: nothing (server, sockets, worker threads) held the process open, so its
    // event loop emptied (a process held open would be killed by the guard, and say nothing here).
    expect(last).toBe("ended by itself");
  });
});

describe("the public declarations", () => {
  /** Module specifiers imported by the declaration files reachable from an entry point (comments ignored). */
  function imports(entry: string): { files: number; external: string[] } {
    const seen = new Set<string>();
    const external = new Set<string>();
    const walk = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const text = readFileSync(file, "utf8")
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .replace(/^\s*\/\/(?!\/).*$/gm, "");
      for (const m of text.matchAll(/(?:from|import\()\s*"([^"]+)"/g)) {
        if (m[1].startsWith(".")) walk(resolve(dirname(file), m[1].replace(/\.js$/, ".d.ts")));
        else external.add(m[1]);
      }
    };
    walk(join(REPO, "dist", entry));
    return { files: seen.size, external: [...external].sort() };
  }

  it("the package root imports no zod and no undici types", () => {
    const root = imports("index.d.ts");
    expect(root.files).toBeGreaterThan(10);
    expect(root.external).toEqual([]);
  });

  it("the client and display entry points neither", () => {
    expect(imports("client/index.d.ts").external).toEqual([]);
    expect(imports("display/index.d.ts").external).toEqual([]);
  });

  it("type-check under tslab's bundled TypeScript with tslab's compiler options, subpaths included", () => {
    const require = createRequire(join(REPO, "node_modules", "tslab", "package.json"));
    const ts = require("@tslab/typescript-for-tslab") as typeof import("typescript");
    const project = userProject("rbp-types-");
    const file = join(project, "cell.ts");
    writeFileSync(
      file,
      `import * as rbp from "rbp-notebook";
import { createClient } from "rbp-notebook/client";
import { toRequest } from "rbp-notebook/frame";
import { summaryTable } from "rbp-notebook/display";
import { startLocalService } from "rbp-notebook/service";
import { runAnalysis } from "rbp-notebook/engine";
export async function cell(): Promise<void> {
  const p = await rbp.grid([{ y: 1, a: 2 }], { y: "y", theta: { a: 1 } }, { max_k: 1, censor_type: "both" });
  const yhat: number | null = p.yhat;
  const k: number | undefined = p.k;
  const names: ReadonlyArray<string> = p.attributes;
  // @ts-expect-error yhat is a number, not a string
  const wrong: string = p.yhat;
  // @ts-expect-error PSR's censor_type has no "both"
  await rbp.psr([], { y: "y", theta: 0 }, { censor_type: "both" });
  const any = await rbp.psr([], { y: "y", theta: [0, 1] });
  if (rbp.isExperiment(any)) { const ys: Array<number | null> = any.yhat; void ys; }
  const e: rbp.PredictionError | undefined = undefined;
  const q: rbp.QuotaStatus = await rbp.quota();
  void [yhat, k, names, wrong, e, q, createClient, toRequest, summaryTable, startLocalService, runAnalysis, rbp.defaults("grid").seed];
}
`,
    );
    // tslab's converter options (converter.js): ESNext modules, Node 10 resolution, skipLibCheck.
    const options: import("typescript").CompilerOptions = {
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Node10,
      esModuleInterop: true,
      target: ts.ScriptTarget.ES2022,
      lib: ["lib.es2022.d.ts"],
      declaration: true,
      noEmit: true,
      resolveJsonModule: true,
      skipLibCheck: true,
      strict: true,
      typeRoots: [join(REPO, "node_modules", "tslab", "node_modules", "@types")],
    };
    const program = ts.createProgram([file], options);
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file ? `${relative(project, d.file.fileName)}: ` : ""}${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`);
    expect(ts.version).toBe("5.0.4");
    expect(diagnostics).toEqual([]);
    // The declarations came from the package (dist), not from sources.
    const resolved = program
      .getSourceFiles()
      .map((f) => f.fileName)
      .filter((f) => f.includes("rbp-notebook") || f.startsWith(REPO));
    expect(resolved.some((f) => f.endsWith("dist/index.d.ts"))).toBe(true);
    expect(existsSync(join(project, "node_modules", "rbp-notebook", "dist", "index.d.ts"))).toBe(true);
  });
});
