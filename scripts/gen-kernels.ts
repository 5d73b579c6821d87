/**
 * `npm run gen:kernels`: assembles src/engine/kernels/walk.wat into src/engine/kernels/walk-wasm.ts.
 * test/engine/walk-kernels.test.ts fails when the two disagree.
 */
import { writeFileSync } from "node:fs";
import { assembleWalkKernels, MODULE_FILE, renderWalkModule } from "./kernels.js";

const bytes = await assembleWalkKernels();
writeFileSync(MODULE_FILE, renderWalkModule(bytes));
console.log(`wrote src/engine/kernels/walk-wasm.ts (${bytes.length} bytes)`);
