/** Every magic of the rbp kernel, with its usage and an example: the source of `%lsmagic`, `%magic` and `%name?`. */

export type MagicKind = "line" | "cell";

export interface MagicInfo {
  name: string;
  kind: MagicKind;
  usage: string;
  summary: string;
  /** Lines of detail shown by `%name?`. */
  details: string[];
  example: string;
}

const ANALYSIS_DETAILS = (analysis: string, extra: string[]): string[] => [
  "The first line names a dataframe (or rows, or an object of columns) in scope and the columns:",
  '  y=<column>              the outcome; quote names with spaces: y="Miles per Gallon"',
  '  X=<col>,<col>,...       the attributes (default: every other numeric column); X=["a", "b"] works too',
  "  theta=last | <row> | <row>,<row> | <variable>",
  "                          the circumstances: the last row, row positions (0-based, negative from",
  "                          the end), or a variable holding new circumstances (a frame, rows, one row)",
  "  -> <name>               also bind the prediction to <name> (it is always bound to _)",
  "The rest of the cell holds options, as a JSON object or as `key: value` lines (values are read as",
  `JSON when they can be, else as text; # starts a comment). \`%rbp options ${analysis}\` lists them with`,
  "their defaults; v3 names (censor_type) and v2 names (eval_type) are both accepted.",
  ...extra,
  "The cell submits the job, shows its progress, and shows the prediction.",
];

export const MAGICS: readonly MagicInfo[] = [
  {
    name: "grid",
    kind: "cell",
    usage: "%%grid <data> [y=<column>] [X=<columns>] [theta=<rows>] [-> <name>]",
    summary: "run a Grid (every combination of attributes and thresholds) and show the prediction",
    details: ANALYSIS_DETAILS("grid", ["A Grid without theta predicts for the last row of X."]),
    example: "%%grid cars y=Miles_per_Gallon X=Horsepower,Weight_in_lbs,Acceleration theta=last -> fit1\nthreshold: [0, 0.2, 0.5, 0.8]\ncensor_type: both",
  },
  {
    name: "maxfit",
    kind: "cell",
    usage: "%%maxfit <data> [y=<column>] [X=<columns>] theta=<rows> [-> <name>]",
    summary: "run MaxFit (the threshold of greatest fit) and show the prediction",
    details: ANALYSIS_DETAILS("maxfit", []),
    example: '%%maxfit cars y=Miles_per_Gallon theta=-1 -> best\n{ "threshold": [0, 0.25, 0.5, 0.75], "objective": "adjusted_fit" }',
  },
  {
    name: "psr",
    kind: "cell",
    usage: "%%psr <data> [y=<column>] [X=<columns>] theta=<rows> [-> <name>]",
    summary: "run a partial sample regression at each threshold and show the prediction",
    details: ANALYSIS_DETAILS("psr", ["Several theta rows make an experiment: one prediction per row."]),
    example: "%%psr cars y=Miles_per_Gallon theta=0,-1 -> exp\nthreshold: [0, 0.5]",
  },
  {
    name: "rbp",
    kind: "line",
    usage: "%rbp connect | quota | status <receipt> | options <analysis> | help",
    summary: "the prediction service: connect, quota, a job's status, the options of an analysis",
    details: [
      "%rbp connect                     the hosted service when CSA_API_KEY is set, else the embedded local one",
      "%rbp connect local [workers=N] [quota=N] [v2|v3]",
      "                                 the embedded local service of this kernel",
      "%rbp connect hosted [url=<base url>] [access_id=<id>] [timeout=<seconds>] [v2|v3]",
      "                                 the hosted service; its key comes from CSA_API_KEY (environment or .env),",
      "                                 never from the notebook",
      "%rbp connect <base url> [v2|v3]  a service at that address (another rbp serve, for example)",
      "%rbp quota                       the plan's units, used and remaining (reads cost nothing)",
      "%rbp status <receipt>            a job's status: a prediction or receipt variable (fit1), or <job_id> <job_code>",
      "%rbp options <analysis>          the options of grid, maxfit or psr, with their defaults",
    ],
    example: "%rbp connect local\n%rbp quota\n%rbp status fit1\n%rbp options grid",
  },
  {
    name: "time",
    kind: "line",
    usage: "%time <statement>",
    summary: "run a statement once and print its CPU and wall time (an expression's value stays the cell's value)",
    details: ["The statement may await: %time await fetchData()"],
    example: "%time const m = await heavy()",
  },
  {
    name: "timeit",
    kind: "line",
    usage: "%timeit [-n <loops>] [-r <repeats>] <statement>",
    summary: "time a statement over many loops and print the mean and spread per loop",
    details: [
      "-n <loops>    loops per repeat (default: as many as fill about 0.2 s, in steps of 1, 2, 5, 10, ...)",
      "-r <repeats>  repeats (default 7); the spread is the standard deviation across repeats",
      "The statement runs in its own scope; it may await.",
    ],
    example: "%timeit -n 100 values.reduce((a, b) => a + b, 0)",
  },
  {
    name: "lsmagic",
    kind: "line",
    usage: "%lsmagic",
    summary: "list the magics",
    details: [],
    example: "%lsmagic",
  },
  {
    name: "magic",
    kind: "line",
    usage: "%magic",
    summary: "show every magic with its usage and an example (%name? or %%name? for one)",
    details: [],
    example: "%magic\n%%grid?",
  },
];

export const LINE_MAGICS = MAGICS.filter((m) => m.kind === "line").map((m) => m.name);
export const CELL_MAGICS = MAGICS.filter((m) => m.kind === "cell").map((m) => m.name);

/** `%name` or `%%name`. */
export const magicLabel = (m: Pick<MagicInfo, "name" | "kind">): string => `${m.kind === "cell" ? "%%" : "%"}${m.name}`;

export function findMagic(name: string, kind?: MagicKind): MagicInfo | undefined {
  return MAGICS.find((m) => m.name === name && (kind === undefined || m.kind === kind));
}

export function lsmagicText(): string {
  return [
    `Line magics: ${MAGICS.filter((m) => m.kind === "line")
      .map(magicLabel)
      .join("  ")}`,
    `Cell magics: ${MAGICS.filter((m) => m.kind === "cell")
      .map(magicLabel)
      .join("  ")}`,
    "",
    "%magic shows them all with examples; %name? or %%name? shows one.",
  ].join("\n");
}

const indent = (text: string): string =>
  text
    .split("\n")
    .map((l) => `    ${l}`)
    .join("\n");

export function magicHelp(m: MagicInfo): string {
  return [
    `${magicLabel(m)}: ${m.summary}`,
    "",
    `  ${m.usage}`,
    ...(m.details.length > 0 ? ["", ...m.details.map((d) => `  ${d}`)] : []),
    "",
    "  Example:",
    indent(m.example),
  ].join("\n");
}

/** Help for every magic (`%magic`). */
export function allHelp(): string {
  return [
    "Magics of the TypeScript (rbp) kernel. A line starting with % is a line magic; a cell starting",
    "with %% is a cell magic. Everything else is TypeScript, run by tslab.",
    "",
    ...MAGICS.map((m) => magicHelp(m) + "\n"),
  ].join("\n");
}
