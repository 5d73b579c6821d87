/**
 * Reports that verify themselves: a report saved from predictions of the embedded service carries
 * its provenance; `rbp verify` (the built CLI, as a user runs it) passes on the untouched file and
 * fails, naming the place, when one digit of a shown number or of an embedded result is edited;
 * a request too large to embed, or none, cannot be checked, unless the data is given with --data
 * (the request as sent, or the data table as CSV) and has the report's digest; a report from the
 * hosted service says so and is checked against the local engine the same way.
 */
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, disconnect, grid, psr, saveReport, type Connection, type ExperimentPrediction, type Prediction } from "../../src/notebook/index.js";
import { readProvenance, PROVENANCE_FORMAT, canonicalRequest, sha256 } from "../../src/display/provenance.js";
import { parseCsv, verifyReportHtml } from "../../src/cli/verify.js";
import { startLocalService, type LocalService } from "../../src/service/index.js";
import { quickstartFrame, quickstartRows, quickstartTheta } from "../notebook/helpers.js";

const rbp = fileURLToPath(new URL("../../dist/cli/rbp.js", import.meta.url));
const quiet = { progress: "none" as const };
let dir: string;
let p: Prediction;
let e: ExperimentPrediction;
let file: string;
let html: string;

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [rbp, "verify", ...args], { encoding: "utf8" });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "rbp-verify-"));
  await connect({ hosted: false, env: {}, envFile: false, local: { workers: 2 } });
  p = await grid(quickstartFrame(), { y: "Points", theta: quickstartTheta() }, {}, quiet);
  e = (await psr(quickstartRows(), { y: "Points", index: "Name", theta: [0, 3] }, { threshold: [0, 0.5] }, quiet)) as ExperimentPrediction;
  file = await saveReport([p, e], join(dir, "report.html"));
  html = await readFile(file, "utf8");
}, 60_000);
afterAll(async () => {
  await disconnect();
  await rm(dir, { recursive: true, force: true });
});

/** Writes a copy of the report with `edit` applied; returns its path. */
async function edited(name: string, edit: (html: string) => string, from = html): Promise<string> {
  const changed = edit(from);
  expect(changed).not.toBe(html);
  const path = join(dir, name);
  await writeFile(path, changed, "utf8");
  return path;
}

/** Changes the last digit of the first occurrence of `text`. */
function bumpLastDigit(text: string): string {
  const d = Number(text[text.length - 1]);
  return text.slice(0, -1) + String((d + 1) % 10);
}

describe("the provenance a report carries", { timeout: 60_000 }, () => {
  it("the request, its digest, the results shown, the version, the choices, resolved options and seed, the service, timestamps", () => {
    const { provenance } = readProvenance(html)!;
    expect(provenance.format).toBe(PROVENANCE_FORMAT);
    expect(provenance.package).toEqual({ name: "rbp-notebook", version: expect.any(String) });
    const [g, x] = provenance.items;
    expect(g.analysis).toBe("grid");
    expect(g.service).toEqual({ kind: "local", url: "embedded" });
    expect(g.request!.y).toEqual(quickstartRows().map((r) => r.Points));
    expect(g.requestSha256).toBe(sha256(canonicalRequest("grid", g.request!)));
    expect(g.results[0].yhat).toEqual([p.yhat]);
    expect(g.seed).toBe(42);
    expect(g.resolvedOptions).toMatchObject({ seed: 42 });
    expect(g.choices.some((c) => c.startsWith("7.2:"))).toBe(true);
    expect(Date.parse(g.startedAt!)).toBeGreaterThan(0);
    expect(g.receipt).toEqual({ job_id: p.receipt.job_id });
    expect(x.experiment).toBe(true);
    expect(x.results).toHaveLength(2);
    expect(x.request!.theta).toHaveLength(2);
    expect(x.shape).toEqual({ rows: 7, attributes: 5, thetaRows: 2 });
    expect(html).toContain(
      `1. Grid prediction of Points: computed by the embedded local service, job ${p.receipt.job_id}, started ${p.startedAt}; request embedded`,
    );
  });
});

describe("rbp verify", { timeout: 60_000 }, () => {
  it("an untouched report: every prediction and the page agree, exit 0", () => {
    const r = cli(file);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/1\. Grid prediction of Points .*\(from the local service\): agree \(\d+ numbers/);
    expect(r.stdout).toMatch(/2\. PSR of Points for 2 circumstances .*: agree/);
    expect(r.stdout).toContain("page: agrees with its embedded results");
    expect(r.stdout).toContain("verified: 2 agree, 0 differ, 0 cannot check");
    expect(r.status).toBe(0);
  });

  it("one digit of a shown number edited: exit 1, the place named (prediction, table, row, column)", async () => {
    const { provenance, page } = readProvenance(html)!;
    const shown = page.match(/<td>(\d+\.\d+)<\/td>/)!; // the first number in a table cell
    const at = page.indexOf(shown[0]);
    const path = await edited(
      "shown.html",
      (h) =>
        h.slice(0, h.indexOf(page.slice(at, at + 200))) +
        `<td>${bumpLastDigit(shown[1])}</td>` +
        h.slice(h.indexOf(page.slice(at, at + 200)) + shown[0].length),
    );
    const r = cli(path);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/page: differ at prediction 1 "Grid prediction of Points", table "[^"]+", row "[^"]+", column "[^"]+"/);
    expect(r.stdout).toContain("NOT verified");
    void provenance;
  });

  it("one digit of an embedded result edited: exit 1, that prediction differs at the field named", async () => {
    const { provenance } = readProvenance(html)!;
    const yhat = String(provenance.items[0].results[0].yhat[0]);
    const path = await edited("embedded.html", (h) => {
      const i = h.indexOf(`"yhat":[${yhat}]`, h.indexOf('id="rbp-provenance"'));
      return h.slice(0, i) + `"yhat":[${bumpLastDigit(yhat)}]` + h.slice(i + `"yhat":[${yhat}]`.length);
    });
    const r = cli(path);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(
      new RegExp(
        `1\\. Grid prediction of Points .*: differ: largest difference [0-9.e-]+ at yhat\\[0\\] \\(report ${bumpLastDigit(yhat).replace(".", "\\.")}, local engine ${yhat.replace(".", "\\.")}\\)`,
      ),
    );
    expect(r.stdout).toMatch(/2\. PSR .*: agree/);
  });

  it("an edited observation weight is named by its row label; an edited request fails its digest", async () => {
    const { provenance } = readProvenance(html)!;
    const w = provenance.items[1].results[1].weights[2][1];
    const outcome = await verifyReportHtml(html.replace(`[${w}]`, `[${w}]`)); // untouched
    expect(outcome.ok).toBe(true);
    const tampered = structuredClone(provenance);
    tampered.items[1].results[1].weights[2][1] = (w as number) + 0.001;
    (tampered.items[0].request!.y as number[])[0] += 1;
    const json = JSON.stringify(tampered).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026");
    const page = html.replace(/(<script type="application\/json" id="rbp-provenance">)[\s\S]*?(<\/script>\n)/, (_m, a: string, b: string) => a + json + b);
    const checked = await verifyReportHtml(page);
    expect(checked.ok).toBe(false);
    expect(checked.predictions[0]).toMatchObject({ status: "differ", largest: { place: "request" } });
    expect(checked.predictions[1].status).toBe("differ");
    expect(checked.predictions[1].largest!.place).toBe('theta row "Dan": weights[2][1] (row "Cat")');
    expect(checked.predictions[1].largest!.difference).toBeCloseTo(0.001, 9);
  });

  it("a request too large to embed, or none at all: cannot check, exit 1", async () => {
    const small = await saveReport(p, join(dir, "digest.html"), { inlineLimit: 100 });
    const r = cli(small);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/cannot check: data not embedded \(too large; request SHA-256 [0-9a-f]{64}, 7 x 5 data\)/);
    const byHand = await saveReport({ title: "by hand", result: p.result, context: p.context }, join(dir, "hand.html"));
    expect(cli(byHand).stdout).toMatch(/1\. by hand .*: cannot check: the request was not recorded/);
    expect(cli(join(dir, "nothing.html")).status).toBe(2);
  });
});

describe("rbp verify --data: a report that holds its requests by digest only", { timeout: 60_000 }, () => {
  let small: string;
  let csv: string;
  beforeAll(async () => {
    small = await saveReport([p, e], join(dir, "digest-both.html"), { inlineLimit: 100 });
    const rows = quickstartRows();
    const columns = Object.keys(rows[0]);
    csv = [columns.join(","), ...rows.map((r) => columns.map((c) => String(r[c])).join(","))].join("\r\n") + "\r\n";
  });

  it("without data: cannot check, and it says how to give the data", () => {
    const r = cli(small);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(
      /1\. Grid prediction .*: cannot check: data not embedded \(too large; request SHA-256 [0-9a-f]{64}, 7 x 5 data\); give the data with --data/,
    );
  });

  it("the requests as sent (JSON), one per prediction: its digest matches, every number is recomputed and agrees, exit 0", async () => {
    await writeFile(join(dir, "p.json"), JSON.stringify(p.request), "utf8");
    await writeFile(join(dir, "e.json"), JSON.stringify(e.request), "utf8");
    const r = cli(small, "--data", join(dir, "p.json"), `--data=${join(dir, "e.json")}`);
    expect(r.stdout).toMatch(/1\. Grid prediction of Points .*: agree \(\d+ numbers, largest difference 0; checked with the data of .*p\.json\)/);
    expect(r.stdout).toMatch(/2\. PSR of Points .*: agree \(\d+ numbers, largest difference 0; checked with the data of .*e\.json\)/);
    expect(r.stdout).toMatch(/^verified: 2 agree, 0 differ, 0 cannot check$/m);
    expect(r.status).toBe(0);
  });

  it("the data table (CSV, the report's column names): the report's theta rows and options make the same request", async () => {
    const path = join(dir, "people.csv");
    await writeFile(path, csv, "utf8");
    const r = cli(small, "--data", path);
    expect(r.stdout).toMatch(/1\. .*: agree .*people\.csv/);
    expect(r.stdout).toMatch(/2\. .*: agree .*people\.csv/);
    expect(r.status).toBe(0);
  });

  it("reads CSV as RFC 4180 (quoted commas, quotes and line breaks; CRLF or LF)", () => {
    expect(parseCsv('a,b\r\n1,"x, ""y"""\n"multi\nline",\r\n')).toEqual([
      ["a", "b"],
      ["1", 'x, "y"'],
      ["multi\nline", ""],
    ]);
  });

  it("other data (one number changed): cannot check, the data differs, both digests printed, exit 1", async () => {
    const path = join(dir, "people-edited.csv");
    const lines = csv.split("\r\n");
    const cells = lines[3].split(",");
    cells[2] = String(Number(cells[2]) + 1);
    lines[3] = cells.join(",");
    await writeFile(path, lines.join("\r\n"), "utf8");
    const digest = readProvenance(await readFile(small, "utf8"))!.provenance.items[0].requestSha256!;
    const r = cli(small, "--data", path);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(
      `1. Grid prediction of Points (from the local service): cannot check: data differs from the report's (sha256 ${digest}, 7 x 5 data; `,
    );
    expect(r.stdout).toMatch(/people-edited\.csv gives sha256 [0-9a-f]{64}\)/);
    // A file that is not there, or a CSV without the report's columns, is said plainly.
    expect(cli(small, "--data", join(dir, "absent.json")).stderr).toMatch(/--data .*absent\.json: no such file/);
    await writeFile(join(dir, "other.csv"), "a,b\r\n1,2\r\n", "utf8");
    expect(cli(small, "--data", join(dir, "other.csv")).stdout).toMatch(/other\.csv: no column "Points", "Age"/);
  });
});

describe("a report from the hosted service", { timeout: 60_000 }, () => {
  let hosted: LocalService;
  let connection: Connection;
  beforeAll(async () => {
    hosted = await startLocalService({ port: 0, apiKey: "verify-hosted-key-3c9d", accessId: "analyst", workers: 1 });
    connection = await connect({ baseUrl: hosted.url, apiKey: "verify-hosted-key-3c9d", accessId: "analyst", env: {}, envFile: false });
  });
  afterAll(async () => {
    await hosted.close();
  });

  it("says which service produced it and is checked against the local engine", async () => {
    const h = await psr(quickstartFrame(), { y: "Points", theta: quickstartTheta() }, { threshold: [0.2, 0.8] }, { ...quiet, connection });
    const path = await h.report(join(dir, "hosted.html"));
    const r = cli(path);
    expect(r.stdout).toContain(`(from the hosted service at ${hosted.url}/v3): agree`);
    expect(r.status).toBe(0);
    const page = await readFile(path, "utf8");
    expect(page).toContain('"service":{"kind":"hosted"');
    // The page says so where a reader sees it; rewriting that is an edit verify finds.
    expect(page).toContain(`computed by the hosted service at ${hosted.url}/v3, job ${h.receipt.job_id}`);
    const forged = await edited(
      "forged.html",
      (h) => h.replace(`computed by the hosted service at ${hosted.url}/v3`, "computed by the embedded local service"),
      page,
    );
    const f = cli(forged);
    expect(f.status).toBe(1);
    expect(f.stdout).toMatch(/page: differ at the provenance footer/);
  });
});
