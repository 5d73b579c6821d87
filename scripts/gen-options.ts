/**
 * `npm run gen:options`: writes what is generated from the option table (src/api/options.ts):
 * src/client/option-types.ts and the options table of docs/api.md section 4 (between its markers).
 * test/api/option-table.test.ts fails when either is out of date.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { format, resolveConfig } from "prettier";
import { DOC_BEGIN, DOC_END, renderClientOptionTypes, renderOptionsDoc } from "../src/api/option-docs.js";

const root = (path: string) => fileURLToPath(new URL(`../${path}`, import.meta.url));

// Written as prettier formats it, so that `npm run format` leaves it as it is.
const typesFile = root("src/client/option-types.ts");
writeFileSync(typesFile, await format(renderClientOptionTypes(), { ...(await resolveConfig(typesFile)), filepath: typesFile }));
const api = readFileSync(root("docs/api.md"), "utf8");
const begin = api.indexOf(DOC_BEGIN);
const end = api.indexOf(DOC_END);
if (begin < 0 || end < begin) throw new Error(`docs/api.md: the markers of the options table are missing (${DOC_BEGIN} ... ${DOC_END})`);
writeFileSync(root("docs/api.md"), `${api.slice(0, begin + DOC_BEGIN.length)}\n${renderOptionsDoc()}${api.slice(end)}`);
console.log("wrote src/client/option-types.ts and the options table of docs/api.md");
