/**
 * Warnings and ignored options as data (issue 26, item 5; src/api/warnings.ts): v2's
 * `ignored_options` are the keys as the caller wrote them (a key with a quote, a 70-character
 * key), never read back from the warning text; v3 receipts carry the warnings as text and, one for
 * one, as `{code, key, reason}` in `warning_details`. Runs on both stores.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalService } from "../../src/service/index.js";
import { capWarnings, quoteName, warningText, MAX_WARNINGS } from "../../src/api/warnings.js";
import { normalizeOptions } from "../../src/api/options.js";
import { Client, quickstart, start } from "./helpers.js";
import { officialGridBody, officialPsrBody, send, V2 } from "./v2-helpers.js";

let service: LocalService;
let client: Client;
beforeAll(async () => {
  ({ service, client } = await start({ workers: 1 }));
});
afterAll(() => service?.close());

const v2post = (path: string, body: Record<string, unknown>) =>
  send("POST", `${service.url}${V2}${path}`, { "x-api-key": client.apiKey! }, { ...body, access_id: client.accessId });

describe("v2 ignored_options are the keys themselves", () => {
  it("a key with a double quote and a backslash comes back as written", async () => {
    const keys = ['a"b', "c\\d", "tab\there"];
    const r = await v2post("/psr", officialPsrBody(Object.fromEntries(keys.map((k) => [k, 1]))));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.ignored_options).toEqual(expect.arrayContaining(keys));
    expect(r.body.ignored_options).toHaveLength(keys.length);
  });

  it("a 70-character key comes back whole (the text quotes it to 64)", async () => {
    const key = `k${"x".repeat(68)}z`;
    const r = await v2post("/grid", officialGridBody({ [key]: true }));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.ignored_options).toContain(key);
  });

  it("more than 20 unknown keys are all listed, and no count line leaks into warnings", async () => {
    const keys = Array.from({ length: 30 }, (_, i) => `unknown_${i}`);
    const r = await v2post("/psr", officialPsrBody(Object.fromEntries(keys.map((k) => [k, 1]))));
    expect(r.status).toBe(200);
    expect(r.body.ignored_options).toEqual(expect.arrayContaining(keys));
    for (const w of r.body.warnings ?? []) expect(w).not.toMatch(/more warnings like these/);
  });
});

describe("v3 receipts carry warnings as text and as data", () => {
  it("warning_details[i] is {code, key, reason} and warnings[i] its text", async () => {
    const key = 'we"ird';
    const r = await client.post("/v3/grid", quickstart({ colour: "red", options: { [key]: 1, threshold: [0.5], threshold_range: [0, 1] } }));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const details = r.body.warning_details as Array<{ code: string; key?: string; reason: string }>;
    expect(details).toEqual(
      expect.arrayContaining([
        { code: "ignored_field", key: "colour", reason: 'settings go under "options"' },
        { code: "ignored_option", key, reason: "not a grid option" },
        { code: "ignored_option", key: "threshold_range", reason: "threshold is given" },
      ]),
    );
    expect(r.body.warnings).toEqual(details.map((d) => warningText(d as never)));
  });

  it("no warnings, no warning_details", async () => {
    const r = await client.post("/v3/psr", quickstart());
    expect(r.status).toBe(200);
    expect(r.body).not.toHaveProperty("warnings");
    expect(r.body).not.toHaveProperty("warning_details");
  });
});

describe("the warning texts (for people) and the cap", () => {
  it("render each code; names quoted safely", () => {
    expect(warningText({ code: "ignored_option", key: "foo", reason: "not a grid option" })).toBe('ignored option "foo" (not a grid option)');
    expect(warningText({ code: "ignored_field", key: 'a"b', reason: "r" })).toBe('ignored field "a\\"b" (r)');
    expect(warningText({ code: "ignored_value", key: "_retain_grid_objects", value: "xi_solo_cells", reason: "not produced by this engine" })).toBe(
      'ignored retain key "xi_solo_cells" in "_retain_grid_objects" (not produced by this engine)',
    );
    expect(quoteName("y".repeat(70))).toBe(`${"y".repeat(64)}...(70 characters)`);
  });

  it("capWarnings keeps MAX_WARNINGS and counts the rest in one entry", () => {
    const list = Array.from({ length: MAX_WARNINGS + 3 }, (_, i) => ({ code: "ignored_option" as const, key: `k${i}`, reason: "r" }));
    const capped = capWarnings(list);
    expect(capped).toHaveLength(MAX_WARNINGS + 1);
    expect(capped[MAX_WARNINGS]).toEqual({ code: "more_warnings", reason: "... and 3 more warnings like these (not listed)" });
    expect(capWarnings(list.slice(0, MAX_WARNINGS))).toHaveLength(MAX_WARNINGS);
  });

  it("normalizeOptions gives the notes as data and the same as text", () => {
    const { notes, warnings } = normalizeOptions("psr", { eval_type: "both", 'q"k': 1 }, "v2");
    expect(notes).toEqual([
      { code: "ignored_option", key: 'q"k', reason: "not a psr option" },
      expect.objectContaining({ code: "adjusted_option", key: "eval_type" }),
    ]);
    expect(warnings).toEqual(notes.map(warningText));
  });
});
