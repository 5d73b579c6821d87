/**
 * The import rules of src/, checked by `npm run lint:deps` (part of `npm test`). Data flows one way
 * (frame, api, client, HTTP, service, engine, and back to display); a folder imports only the ones
 * below it, never one above, and nothing imports in a circle. Private files of a folder are reached
 * from outside it only through its index.ts; helpers shared between folders live in src/internal
 * (see its README). The few edges that break a rule are listed in EXCEPTIONS (below), each with its
 * reason; docs/architecture.md shows the rules and the exceptions (`npm run gen:map`), and
 * test/project/architecture.test.ts fails when the code has an exception not listed or a listed one
 * is gone.
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
      comment: "the engine's files are pure functions: no I/O, no threads (threads/ holds the worker plumbing)",
      severity: "error",
      from: { path: "^src/engine/" },
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
      comment:
        "the service core (core.ts) refuses with domain errors (refusals.ts), not even reaching HTTP through another module; http.ts alone maps them to HTTP statuses",
      severity: "error",
      from: { path: "^src/service/core\\.ts$" },
      to: { path: "^src/service/(http|router|routes|v2|v2-body|v3|connections|lane|index)\\.ts$", reachable: true },
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
      comment: "outside src/display, the display code is reached through display/index.ts only",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/display/" },
      to: { path: "^src/display/", pathNot: "^src/display/index\\.ts$" },
    },
    {
      name: "notebook-uses-service-index",
      comment: "the notebook helper reaches the service through service/index.ts only, never its internals",
      severity: "error",
      from: { path: "^src/notebook/" },
      to: { path: "^src/service/", pathNot: "^src/service/index\\.ts$" },
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

/**
 * The edges that break a rule: from one file to the files named, for that rule only. The rest of
 * the file, and the rest of the rule, still hold.
 */
const EXCEPTIONS = [
  {
    rule: "engine-is-pure",
    from: "src/engine/index.ts",
    to: ["src/threads/grid-parallel.ts"],
    why: "the public `rbp-notebook/engine` entry re-exports `gridParallel`, whose worker threads live in src/threads; no other file of the engine imports it",
  },
  {
    rule: "display-private",
    from: "src/cli/verify.ts",
    to: ["src/display/provenance.ts", "src/display/report.ts"],
    why: "`rbp verify` reads a saved report's embedded provenance and results with the parsers that wrote them, which are not part of the display's public surface",
  },
];

const exact = (path) => `^${path.replace(/[.]/g, "\\.")}$`;
const list = (pattern) => (pattern === undefined ? [] : Array.isArray(pattern) ? pattern : [pattern]);

/** A rule with its exceptions: the files excepted leave the rule, and come back under it for every other target. */
function withExceptions(rule) {
  const own = EXCEPTIONS.filter((e) => e.rule === rule.name);
  if (own.length === 0) return [rule];
  return [
    { ...rule, from: { ...rule.from, pathNot: [...list(rule.from.pathNot), ...own.map((e) => exact(e.from))] } },
    ...own.map((e) => ({ ...rule, from: { path: exact(e.from) }, to: { ...rule.to, pathNot: [...list(rule.to.pathNot), ...e.to.map(exact)] } })),
  ];
}

// The rules above, as written, are the rules without their exceptions ("strict"): scripts/map runs
// dependency-cruiser under them to find the exceptions in the code. The configuration applies them.
// (Not enumerable: dependency-cruiser refuses keys of its configuration it does not know.)
const strict = { forbidden: module.exports.forbidden, options: module.exports.options };
module.exports.forbidden = strict.forbidden.flatMap(withExceptions);
Object.defineProperty(module.exports, "exceptions", { value: EXCEPTIONS, enumerable: false });
Object.defineProperty(module.exports, "strict", { value: strict, enumerable: false });
