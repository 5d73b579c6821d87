/**
 * `npm run gen:kernels`: assembles each WebAssembly text of scripts/kernels.ts (the engine's
 * src/engine/kernels/rows.wat and basis.wat, the benchmark's bench/floor.wat) into its generated TypeScript.
 * test/engine/row-kernels.test.ts fails when one is out of date.
 */
import { writeFileSync } from "node:fs";
import { assemble, fromRoot, render, WAT_MODULES } from "./kernels.js";

for (const module of WAT_MODULES) {
  const bytes = await assemble(module);
  writeFileSync(fromRoot(module.out), render(module, bytes));
  console.log(`wrote ${module.out} (${bytes.length} bytes)`);
}
