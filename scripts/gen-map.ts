/**
 * `npm run gen:map`: writes the generated parts of docs/architecture.md from dependency-cruiser's
 * graph of src/ and .dependency-cruiser.cjs (what each folder imports, its diagram, the import rules
 * and their exceptions), between their markers. test/project/architecture.test.ts fails when they
 * are out of date.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { ARCHITECTURE, replaceSection, repoPath } from "./map/doc.js";
import { mapSections } from "./map/graph.js";

let text = readFileSync(repoPath(ARCHITECTURE), "utf8");
for (const [name, content] of Object.entries(mapSections())) text = replaceSection(text, name, content);
writeFileSync(repoPath(ARCHITECTURE), text);
console.log(`wrote the map of ${ARCHITECTURE} (what each folder imports, the diagram, the import rules and their exceptions)`);
