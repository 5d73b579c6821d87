/**
 * The option table is the one source: the client's input types (src/client/option-types.ts) and
 * the options table of docs/api.md section 4 are what `npm run gen:options` generates from it now,
 * and every key the service reads comes from one of its rows.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { format, resolveConfig } from "prettier";
import { describe, expect, it } from "vitest";
import { DOC_BEGIN, DOC_END, renderClientOptionTypes, renderOptionsDoc } from "../../src/api/option-docs.js";
import { ANY_OPTION_KEY, OPTION_KEYS, OPTION_TABLE, V2_OPTION_KEYS, normalizeOptions, toV2Options, toV3Options } from "../../src/api/options.js";
import * as api from "../../src/api/index.js";

const read = (path: string) => readFileSync(fileURLToPath(new URL(`../../${path}`, import.meta.url)), "utf8");

describe("generated from the option table", () => {
  it("src/client/option-types.ts is up to date (npm run gen:options)", async () => {
    const file = fileURLToPath(new URL("../../src/client/option-types.ts", import.meta.url));
    const expected = await format(renderClientOptionTypes(), { ...(await resolveConfig(file)), filepath: file });
    expect(read("src/client/option-types.ts")).toBe(expected);
  });

  it("the options table of docs/api.md is up to date (npm run gen:options)", () => {
    const doc = read("docs/api.md");
    const begin = doc.indexOf(DOC_BEGIN);
    const end = doc.indexOf(DOC_END);
    expect(begin).toBeGreaterThan(0);
    expect(doc.slice(begin + DOC_BEGIN.length + 1, end)).toBe(renderOptionsDoc());
  });

  it("one row per canonical option, every wire key in exactly one row", () => {
    const names = OPTION_TABLE.map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
    const keys = OPTION_TABLE.flatMap((r) => r.spellings.map((s) => s.key));
    expect(new Set(keys).size).toBe(keys.length);
    expect([...ANY_OPTION_KEY].sort()).toEqual([...new Set([...OPTION_KEYS.psr, ...OPTION_KEYS.maxfit, ...OPTION_KEYS.grid])].sort());
    for (const k of V2_OPTION_KEYS) expect(ANY_OPTION_KEY.has(k)).toBe(true);
  });

  it("the dead exports are gone", () => {
    expect("LEGACY_OPTION_NAMES" in api).toBe(false);
    expect("isOptionKey" in api).toBe(false);
  });

  it("each row's writers read back through its readers, in both dialects", () => {
    const given = {
      censor_type: "relevance",
      censor_unit: "score",
      censor_operator: "gt",
      prediction_scale: "logistic",
      min_k: 2,
      seed: 7,
      retain: ["yhat_cells"],
      inner_parallel: "off",
    };
    expect(normalizeOptions("grid", toV2Options("grid", given as never), "v2").options).toEqual(given);
    expect(normalizeOptions("grid", toV3Options("grid", given as never), "v3").options).toEqual(given);
  });
});
