/**
 * The scanner that reads a field from a result's JSON text (field-scan.ts) agrees with the parsed
 * path resolution (fields.ts) on any JSON the service stores: the same value (as JSON text), the
 * same canonical path, the same 404 (message and available names), the same shape.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { shapeOf } from "../../src/api/json.js";
import { encodeJson } from "../../src/service/encode.js";
import { JsonScanner, locateField, rootMembers } from "../../src/service/field-scan.js";
import { resolveField } from "../../src/service/fields.js";
import { httpError } from "../../src/service/http.js";

const key = fc.oneof(
  fc.constantFrom("yhat", "Impact on Fit", "impact on fit", "a b", "a_b", "0", 'x"y', "back\\slash", "__proto__", "constructor"),
  fc.string({ maxLength: 6 }),
);
const value = fc.letrec((tie) => ({
  node: fc.oneof(
    { maxDepth: 4 },
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.integer(),
    fc.string({ maxLength: 8 }),
    fc.constant(null),
    fc.boolean(),
    fc.array(tie("node"), { maxLength: 5 }),
    fc.dictionary(key, tie("node"), { maxKeys: 5 }),
  ),
})).node;
const segment = fc.oneof(key, fc.nat(6).map(String), fc.constantFrom("impact_on_fit", "a_b", "a b", "YHAT", "01", "-1"));

async function viaScanner(json: string, segments: string[], indexed = false) {
  try {
    const scanner = new JsonScanner(json);
    const { path, start, end } = await locateField(scanner, segments, indexed ? await rootMembers(scanner) : undefined);
    const described = await scanner.describe(start);
    return { path, text: json.slice(start, end), shape: described.kind === "array" ? described.shape : described.kind === "object" ? null : [] };
  } catch (error) {
    const refused = httpError(error);
    if (refused) return { status: refused.status, message: refused.message, extra: refused.init.extra };
    throw error;
  }
}

function viaParse(json: string, segments: string[]) {
  try {
    const { path, value: v } = resolveField(JSON.parse(json), segments);
    return { path, text: JSON.stringify(v), shape: shapeOf(v) };
  } catch (error) {
    const refused = httpError(error);
    if (refused) return { status: refused.status, message: refused.message, extra: refused.init.extra };
    throw error;
  }
}

describe("field scanner", () => {
  it("agrees with parsing the whole result", async () => {
    for (const json of ["[1,2]", "{}", "3"]) expect(await viaScanner(json, ["0"], true)).toEqual(viaParse(json, ["0"]));
    await fc.assert(
      fc.asyncProperty(value, fc.array(segment, { minLength: 1, maxLength: 4 }), fc.boolean(), fc.boolean(), async (v, segments, root, indexed) => {
        const json = encodeJson({ root: v, yhat: [1, 2] }, 6);
        const all = [root ? "root" : "yhat", ...segments];
        // with and without the root index a route keeps for large results
        expect(await viaScanner(json, all, indexed)).toEqual(viaParse(json, all));
      }),
      { seed: 1123, numRuns: 1500 },
    );
  });

  it("returns to the event loop while it scans a large text", async () => {
    const json = encodeJson({ big: Array.from({ length: 2_000_000 }, (_, i) => i / 7), small: 1 }, 6);
    let turns = 0;
    let running = true;
    const tick = () => {
      turns++;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    const { start, end } = await locateField(new JsonScanner(json), ["small"]);
    running = false;
    expect(json.slice(start, end)).toBe("1");
    expect(turns).toBeGreaterThan(10);
  });
});
