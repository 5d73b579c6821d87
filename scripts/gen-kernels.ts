/**
 * `npm run gen:kernels`: assembles src/engine/kernels/rows.wat into src/engine/kernels/rows-wasm.ts.
 * test/engine/row-kernels.test.ts fails when the two disagree.
 */
import { writeFileSync } from "node:fs";
import { assembleRowKernels, MODULE_FILE, renderRowsModule } from "./kernels.js";

const bytes = await assembleRowKernels();
writeFileSync(MODULE_FILE, renderRowsModule(bytes));
console.log(`wrote src/engine/kernels/rows-wasm.ts (${bytes.length} bytes)`);
