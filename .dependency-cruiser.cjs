/**
 * The import rules of src/, checked by `npm run lint:deps` (part of `npm test`). Data flows one way
 * (frame, api, client, HTTP, service, engine, and back to display); a folder imports only the ones
 * below it, never one above, and nothing imports in a circle. Private files of a folder are reached
 * from outside it only through its index.ts; helpers shared between folders live in src/internal
 * (see its README). There are no exceptions.
 */
const LAYERS_ABOVE = {
  errors: "engine|threads|api|frame|internal|client|service|display|notebook|kernel|cli",
  engine: "api|frame|internal|client|service|display|notebook|kernel|cli",
  api: "threads|frame|internal|client|service|display|notebook|kernel|cli",
  internal: "engine|threads|api|frame|client|service|display|notebook|kernel|cli",
  frame: "client|service|display|notebook|kernel|cli",
  client: "service|display|notebook|kernel|cli",
  service: "client|display|notebook|kernel|cli",
  display: "client|service|notebook|kernel|cli",
  notebook: "kernel|cli",
  kernel: "cli",
};

const upward = Object.entries(LAYERS_ABOVE).map(([layer, above]) => ({
  name: `no-upward-from-${layer}`,
  comment: `src/${layer} must not import from a folder above it (${above.split("|").join(", ")})`,
  severity: "error",
  from: { path: `^src/${layer}/` },
  to: { path: `^src/(${above})/` },
}));

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "no module imports itself through others (a cycle of type-only imports is allowed: it is gone at run time)",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true, viaOnly: { dependencyTypesNot: ["type-only"] } },
    },
    ...upward,
    {
      name: "engine-is-pure",
      comment:
        "the engine's files are pure functions: no I/O, no threads (threads/ holds the worker plumbing; engine/index.ts re-exports gridParallel for the public rbp-notebook/engine)",
      severity: "error",
      from: { path: "^src/engine/", pathNot: "^src/engine/index\\.ts$" },
      to: { path: "^(src/threads/|node:|fs$|os$|net$|http$|worker_threads$|child_process$)", dependencyTypes: ["local", "core"] },
    },
    {
      name: "store-below-http",
      comment:
        "the store layer (src/service/store/) knows nothing of HTTP, not even through another module: it throws domain errors with codes (store/errors.ts, refusals.ts), and http.ts alone maps them to statuses",
      severity: "error",
      from: { path: "^src/service/store/" },
      to: { path: "^src/service/(http|router|routes|v2|v2-body|v3|connections|lane|core|index)\\.ts$", reachable: true },
    },
    {
      name: "core-without-http",
      comment: "the service core (core.ts) refuses with domain errors (refusals.ts); http.ts alone maps them to HTTP statuses",
      severity: "error",
      from: { path: "^src/service/core\\.ts$" },
      to: { path: "^src/service/(http|router|routes|v2|v2-body|v3|connections)\\.ts$" },
    },
    {
      name: "client-private",
      comment: "outside src/client, the client is reached through client/index.ts only",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/client/" },
      to: { path: "^src/client/", pathNot: "^src/client/index\\.ts$" },
    },
    {
      name: "notebook-private",
      comment: "outside src/notebook, the notebook helper is reached through notebook/index.ts only",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(notebook/|index\\.ts$)" },
      to: { path: "^src/notebook/", pathNot: "^src/notebook/index\\.ts$" },
    },
    {
      name: "frame-private",
      comment: "outside src/frame, the frame code is reached through frame/index.ts only",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/frame/" },
      to: { path: "^src/frame/", pathNot: "^src/frame/index\\.ts$" },
    },
    {
      name: "display-private",
      comment:
        "the notebook and the kernel reach the display code through display/index.ts only (rbp verify, a composition root, reads the report's parts directly)",
      severity: "error",
      from: { path: "^src/(notebook|kernel)/" },
      to: { path: "^src/display/", pathNot: "^src/display/index\\.ts$" },
    },
    {
      name: "internal-stays-inside",
      comment: "src/internal is private: only src/ imports it (tests may)",
      severity: "error",
      from: { pathNot: "^(src|test|bench|scripts)/" },
      to: { path: "^src/internal/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    exclude: { path: "^(dist|node_modules)/" },
  },
};
