import { describe, expect, it } from "vitest";
import { OPTION_KEYS } from "../../src/api/options.js";
import { CELL_MAGICS, LINE_MAGICS, MAGICS, allHelp, lsmagicText, magicHelp } from "../../src/kernel/catalog.js";
import { parseJson } from "../../src/kernel/json.js";
import { blankMagics, locateMagics, sourcePosition, translate, type MagicError, type Translation } from "../../src/kernel/magics.js";
import { formatTime, timeitText } from "../../src/kernel/runtime.js";
import { LineScanner, splitLineComment } from "../../src/kernel/scan.js";
import { editDistance, suggest } from "../../src/internal/suggest.js";
import { completeMagic, magicTraceback } from "../../src/kernel/magic-cells.js";

function ok(source: string): Translation {
  const r = translate(source);
  if ("error" in r) throw new Error(`expected a translation of ${JSON.stringify(source)}, got: ${r.error.message}`);
  // The generated code always has the cell's lines.
  expect(r.code.split("\n")).toHaveLength(source.split(/\r?\n/).length);
  return r;
}

function fail(source: string): MagicError {
  const r = translate(source);
  if (!("error" in r)) throw new Error(`expected an error for ${JSON.stringify(source)}, got code: ${r.code}`);
  return r.error;
}

/** The text a segment covers in the generated code equals the text it names in the cell. */
function expectSegmentsFaithful(source: string, t: Translation): void {
  const src = source.split("\n");
  const gen = t.code.split("\n");
  for (const s of t.segments) {
    expect(gen[s.line - 1].slice(s.column, s.column + s.length)).toBe(src[s.line - 1].slice(s.sourceColumn, s.sourceColumn + s.length));
  }
}

describe("cells without magics", () => {
  it.each([
    "const a = 1;\na + 1",
    "",
    "   ",
    "const r = 17\n  % 5;",
    "const s = `\n%d items\n%time x\n`;",
    "/*\n%time x\n*/ 1",
    "foo(1,\n%b)",
    "const list = [\n%x\n]",
    "const t = 'it\\\n%time x';",
    "const re = /%time/; re.source",
    "const q = `a ${`\n%b`} c`",
    "// %time in a comment\n1",
    "const pct = 50\n% 7",
  ])("%j reaches tslab unchanged", (source) => {
    const t = ok(source);
    expect(t.code).toBe(source.replace(/\r\n/g, "\n"));
    expect(t.magics).toEqual([]);
    expect(t.usesRuntime).toBe(false);
  });
});

describe("%time", () => {
  it("times an expression and keeps its value as the statement's value", () => {
    const src = "const a = 1\n%time a + 1";
    const t = ok(src);
    expect(t.code).toBe("const a = 1\n$rbp.timed($rbp.timeStart(2), (a + 1));");
    expect(t.magics).toEqual(["%time"]);
    expect(t.usesRuntime).toBe(true);
    expectSegmentsFaithful(src, t);
  });

  it("times a declaration at the top level (the name stays in scope), keeping a trailing comment", () => {
    const src = "%time const x = await fetchData(); // slow";
    const t = ok(src);
    expect(t.code).toBe("$rbp.timeStart(1); const x = await fetchData(); $rbp.timeEnd(1); // slow");
    expectSegmentsFaithful(src, t);
  });

  it.each([
    ["%time for (let i = 0; i < 3; i++) f(i)", "statement"],
    ["%time a(); b()", "statement"],
    ["%time if (x) y()", "statement"],
    ["%time x = compute()", "expression"],
    ["%time await p", "expression"],
    ["%time f(';')", "expression"],
  ])("%s is timed as a %s", (src, kind) => {
    const t = ok(src);
    expect(t.code.startsWith(kind === "expression" ? "$rbp.timed(" : "$rbp.timeStart(1); ")).toBe(true);
    expectSegmentsFaithful(src, t);
  });

  it("keeps the indentation inside a block", () => {
    const src = "for (const n of [1, 2]) {\n  %time n * 2\n}";
    expect(ok(src).code).toBe("for (const n of [1, 2]) {\n  $rbp.timed($rbp.timeStart(2), (n * 2));\n}");
  });
});

describe("%timeit", () => {
  it.each([
    ["%timeit f(x)", "$rbp.timeit(() => { f(x); }, {});"],
    ["%timeit -n 10 f(x)", '$rbp.timeit(() => { f(x); }, {"n":10});'],
    ["%timeit -n10 -r 3 f(x);", '$rbp.timeit(() => { f(x); }, {"n":10,"r":3});'],
    ["%timeit -r2 -n 5 f(x)", '$rbp.timeit(() => { f(x); }, {"r":2,"n":5});'],
    ["%timeit await g()", "await $rbp.timeitAsync(async () => { await g(); }, {});"],
    ["%timeit -1 + f()", "$rbp.timeit(() => { -1 + f(); }, {});"],
    ["%timeit f() // note", "$rbp.timeit(() => { f(); }, {}); // note"],
  ])("%s", (src, code) => {
    const t = ok(src);
    expect(t.code).toBe(code);
    expectSegmentsFaithful(src, t);
  });
});

describe("%rbp", () => {
  it.each([
    ["%rbp connect", "await $rbp.connect({});"],
    ["%rbp connect local", 'await $rbp.connect({"hosted":false});'],
    ["%rbp connect local fresh", 'await $rbp.connect({"hosted":false,"fresh":true});'],
    ["%rbp connect local v2 workers=2 quota=50", 'await $rbp.connect({"hosted":false,"apiVersion":"v2","local":{"workers":2,"quota":50}});'],
    ["%rbp connect hosted", 'await $rbp.connect({"hosted":true});'],
    [
      "%rbp connect hosted url=https://rbp.example.com/v3 access_id=me timeout=30s",
      'await $rbp.connect({"hosted":true,"baseUrl":"https://rbp.example.com/v3","accessId":"me","timeoutMs":30000});',
    ],
    ["%rbp connect http://127.0.0.1:8765 v2", 'await $rbp.connect({"hosted":true,"baseUrl":"http://127.0.0.1:8765","apiVersion":"v2"});'],
    ["%rbp connect hosted version=3 timeout=500ms", 'await $rbp.connect({"hosted":true,"apiVersion":"v3","timeoutMs":500});'],
    ["%rbp connect hosted timeout=2m", 'await $rbp.connect({"hosted":true,"timeoutMs":120000});'],
    ["%rbp quota", "await $rbp.quota();"],
    ["%rbp options grid", 'await $rbp.options("grid");'],
    ["%rbp options MaxFit", 'await $rbp.options("maxfit");'],
    ["%rbp status fit1", "await $rbp.status(fit1);"],
    ["%rbp status results.first", "await $rbp.status(results.first);"],
    ["%rbp status 12 abc", 'await $rbp.status({ job_id: 12, job_code: "abc" });'],
    ["%rbp status 12/abc", 'await $rbp.status({ job_id: 12, job_code: "abc" });'],
    ['%rbp status {"job_id":7,"job_code":"x"}', 'await $rbp.status({ job_id: 7, job_code: "x" });'],
    ["%rbp", '$rbp.help("rbp", "line");'],
    ["%rbp help", '$rbp.help("rbp", "line");'],
  ])("%s", (src, code) => {
    const t = ok(src);
    expect(t.code).toBe(code);
    expect(t.magics).toEqual(["%rbp"]);
    expectSegmentsFaithful(src, t);
  });
});

describe("help", () => {
  it.each([
    ["%lsmagic", "$rbp.lsmagic();"],
    ["%magic", "$rbp.help();"],
    ["%?", "$rbp.help();"],
    ["%time?", '$rbp.help("time", "line");'],
    ["%timeit??", '$rbp.help("timeit", "line");'],
    ["%rbp?", '$rbp.help("rbp", "line");'],
    ["%%grid?", '$rbp.help("grid", "cell");'],
    ["%%psr?\nignored body", '$rbp.help("psr", "cell");\n'],
    ["%grid?", '$rbp.help("grid", "cell");'],
    ["%%maxfit --help", '$rbp.help("maxfit", "cell");'],
    ["const a = 1\n%%grid?", 'const a = 1\n$rbp.help("grid", "cell");'],
  ])("%s", (src, code) => {
    expect(ok(src).code).toBe(code);
  });

  it("%lsmagic lists every magic, %magic shows each with its usage and example", () => {
    const list = lsmagicText();
    for (const name of LINE_MAGICS) expect(list).toContain(`%${name}`);
    for (const name of CELL_MAGICS) expect(list).toContain(`%%${name}`);
    const all = allHelp();
    for (const m of MAGICS) {
      expect(all).toContain(m.usage);
      expect(all).toContain(m.example.split("\n")[0]);
      expect(magicHelp(m)).toContain("Example:");
    }
  });

  it("every example in the help translates", () => {
    for (const m of MAGICS) {
      const r = translate(m.example);
      expect("error" in r ? r.error.message : "", m.example).toBe("");
    }
  });
});

describe("cell magics", () => {
  it("%%grid with columns, theta=last, a name and key: value options", () => {
    const src = "%%grid cars y=Miles_per_Gallon X=Horsepower,Weight_in_lbs theta=last -> fit1\n# the options\nthreshold: [0, 0.2, 0.5, 0.8]\ncensor_type: both";
    const t = ok(src);
    expect(t.code).toBe(
      'const fit1 = await $rbp.run("grid", cars, { y: "Miles_per_Gallon", X: ["Horsepower","Weight_in_lbs"], theta: "last" }, {"threshold":[0,0.2,0.5,0.8],"censor_type":"both"}); const _ = fit1; fit1\n\n\n',
    );
    expect(t.magics).toEqual(["%%grid"]);
    expect(t.magicLines).toEqual([{ line: 1, column: 0 }]);
    expectSegmentsFaithful(src, t);
  });

  it("%%psr with a quoted outcome, theta from a variable and a JSON body; bound to _", () => {
    const src = '%%psr cars y="Miles per Gallon" theta=newCars\n{\n  "threshold": [0, 0.5],\n  "censor_type": "relevance"\n}';
    const t = ok(src);
    expect(t.code.split("\n")[0]).toBe(
      'const _ = await $rbp.run("psr", cars, { y: "Miles per Gallon", theta: newCars }, {"threshold":[0,0.5],"censor_type":"relevance"}); _',
    );
    expectSegmentsFaithful(src, t);
    expect(t.segments.map((s) => s.length)).toEqual([4, 7]);
  });

  it.each([
    ["theta=0", "theta: 0"],
    ["theta=-1", "theta: -1"],
    ["theta=0,-1", "theta: [0,-1]"],
    ["theta=[0, 2]", "theta: [0,2]"],
    ["theta=LAST", 'theta: "last"'],
    ["theta=frames.next", "theta: frames.next"],
    ['X=["Horse power", "Weight"]', 'X: ["Horse power","Weight"]'],
    ["X='Horse power',Weight", 'X: ["Horse power","Weight"]'],
    ["x=a", 'X: ["a"]'],
    ["Y=a", 'y: "a"'],
  ])("%%maxfit cars %s", (arg, expected) => {
    const t = ok(`%%maxfit cars ${arg}`);
    expect(t.code).toContain(`{ ${expected} }`);
  });

  it("takes options on the first line too, and v2 names", () => {
    const t = ok("%%grid data theta=last threshold=[0,0.5] seed=7\neval_type: all\nk: 2");
    expect(t.code).toContain('{"threshold":[0,0.5],"seed":7,"eval_type":"all","k":2}');
  });

  it("reads values as JSON when it can, else as text; strips comments and a trailing comma", () => {
    const t = ok("%%grid d\ncensor_type: 'similarity'\ninclude_linear_regression: true\nmax_iter: 100, # cap\ninv_method: pinv // alias\n\n// done");
    expect(t.code).toContain('{"censor_type":"similarity","include_linear_regression":true,"max_iter":100,"inv_method":"pinv"}');
  });

  it("accepts blank lines before the magic and a CRLF cell", () => {
    const t = ok("\n  \n%%grid d y=a\r\nseed: 3\r\n");
    expect(t.code.split("\n")[2]).toContain('{"seed":3}');
  });

  it("types several theta rows as an experiment", () => {
    expect(ok("%%psr d theta=0,-1 -> e").code).toMatch(/^const e = await \$rbp\.runExperiment\("psr", d, \{ theta: \[0,-1\] \}/);
    expect(ok("%%psr d theta=[3]").code).toMatch(/^const _ = await \$rbp\.run\(/);
    expect(ok("%%psr d theta=rows").code).toMatch(/^const _ = await \$rbp\.run\(/);
  });

  it("binds a name only once, and _ every time", () => {
    expect(ok("%%psr d theta=1 -> p").code).toMatch(/^const p = await .*; const _ = p; p$/);
    expect(ok("%%psr d theta=1 -> _").code).toMatch(/^const _ = await .*; _$/);
  });
});

describe("malformed magics answer with a message naming the word", () => {
  const cases: Array<[string, RegExp, string, number, number]> = [
    // [cell, message, word, line, column]
    ["%tme 1+1", /^unknown line magic %tme; did you mean %time\?/, "%tme", 1, 1],
    ["const a = 1\n  %timit f()", /unknown line magic %timit; did you mean %timeit\?/, "%timit", 2, 3],
    ["%%gird cars y=a", /^unknown cell magic %%gird; did you mean %%grid\?/, "%%gird", 1, 1],
    ["%%time f()", /^%%time is not a cell magic; %time is a line magic: %time <statement>/, "%%time", 1, 1],
    ["%grid cars y=a", /^%grid is a cell magic: start the cell with %%grid/, "%grid", 1, 1],
    ["a = 1\n%%grid cars y=a", /^the cell magic %%grid must be the first line of its cell/, "%%grid", 2, 1],
    ["%time(f())", /separate a magic from its arguments with a space/, "%time(f())", 1, 1],
    ["%%", /a magic name must follow %% directly/, "%%", 1, 1],
    ["%tim?", /^unknown line magic %tim; did you mean %time\?/, "%tim", 1, 1],
    ["%time", /^%time needs a statement to time/, "%time", 1, 1],
    ["%time   ;", /^%time needs a statement/, "%time", 1, 1],
    ["%timeit -x 5 f()", /^%timeit has no option -x/, "-x", 1, 9],
    ["%timeit -n 0 f()", /^%timeit -n needs a whole number of loops of at least 1, got "0"/, "0", 1, 12],
    ["%timeit -n many f()", /^%timeit -n needs a whole number of loops/, "many", 1, 12],
    ["%timeit -n0 f()", /^%timeit -n needs a whole number of loops of at least 1, got "0"/, "0", 1, 11],
    ["%timeit -r 2 -r 3 f()", /^%timeit -r is given twice/, "-r", 1, 14],
    ["%timeit -n 5", /^%timeit needs a statement to time/, "%timeit", 1, 1],
    ["%lsmagic all", /^%lsmagic takes no arguments, got "all"/, "all", 1, 10],
    ["%rbp qouta", /^unknown %rbp command "qouta"; did you mean "quota"\?/, "qouta", 1, 6],
    ["%rbp quota now", /^%rbp quota takes no arguments, got "now"/, "now", 1, 12],
    ["%rbp options", /^%rbp options needs an analysis: %rbp options psr \| maxfit \| grid/, "options", 1, 6],
    ["%rbp options gird", /^unknown analysis "gird"; did you mean "grid"\?/, "gird", 1, 14],
    ["%rbp options grid psr", /^%rbp options takes one analysis, got "psr" too/, "psr", 1, 19],
    ["%rbp status", /^%rbp status needs a job/, "status", 1, 6],
    ["%rbp status abc/def", /^a job id is a whole number, got "abc"/, "abc", 1, 13],
    ["%rbp status 1 2 3", /^%rbp status takes one job, got "3" too/, "3", 1, 17],
    ["%rbp status fit-1", /^"fit-1" is not a variable name nor a receipt/, "fit-1", 1, 13],
    ['%rbp status {"job_id": 1}', /^a receipt has job_id and job_code/, '{"job_id": 1}', 1, 13],
    ["%rbp connect locl", /^%rbp connect: unexpected "locl"; did you mean "local"\?/, "locl", 1, 14],
    ["%rbp connect local v4", /^%rbp connect: unexpected "v4"/, "v4", 1, 20],
    ["%rbp connect hosted version=4", /^unknown API version "4"; expected v3 or v2/, "4", 1, 29],
    ["%rbp connect api_key=abc123", /^%rbp connect does not take the API key in the notebook/, "api_key", 1, 14],
    ["%rbp connect hosted urll=https://x", /^%rbp connect has no setting "urll"; did you mean "url"\?/, "urll", 1, 21],
    ["%rbp connect local url=https://x", /^%rbp connect: url is a setting of a hosted service, not of the local one/, "url", 1, 20],
    ["%rbp connect hosted workers=2", /^%rbp connect: workers is a setting of the local service/, "workers", 1, 21],
    ["%rbp connect hosted url=ftp://x", /^%rbp connect: url must be an http\(s\) address/, "ftp://x", 1, 25],
    ["%rbp connect local workers=0", /^%rbp connect: workers must be a whole number of at least 1, got "0"/, "0", 1, 28],
    ["%rbp connect hosted timeout=soon", /^%rbp connect: timeout must be a positive duration/, "soon", 1, 29],
    ["%rbp connect local quota=1 quota=2", /^%rbp connect: quota is given twice/, "quota", 1, 28],
    ["%rbp connect local fresh fresh", /^%rbp connect: fresh is given twice/, "fresh", 1, 26],
    ["%rbp connect local frsh", /^%rbp connect: unexpected "frsh"; did you mean "fresh"\?/, "frsh", 1, 20],
    ["%rbp connect hosted access_id=", /^%rbp connect: access_id needs a value/, "access_id", 1, 21],
    ["%%grid", /^%%grid needs the data: the name of a dataframe/, "%%grid", 1, 1],
    ["%%grid y=Miles_per_Gallon", /^%%grid needs the data first, before "y=Miles_per_Gallon"/, "y=Miles_per_Gallon", 1, 8],
    ["%%grid 42 y=a", /^%%grid: "42" is not the name of a variable/, "42", 1, 8],
    ["%%grid class y=a", /^%%grid: "class" is not the name of a variable/, "class", 1, 8],
    ["%%grid cars yy=a", /^%%grid: unknown option "yy"; did you mean "y"\?/, "yy", 1, 13],
    ["%%grid cars y=a y=b", /^%%grid: y is given twice/, "y", 1, 17],
    ["%%grid cars y=", /^%%grid: y= needs a value/, "y", 1, 13],
    ["%%grid cars y=a,b", /^%%grid: y names one column \(the outcome\), got a,b/, "a,b", 1, 15],
    ["%%grid cars X=a,,b", /^%%grid: an empty column name in X=a,,b/, "a,,b", 1, 15],
    ["%%grid cars X=[1, 2]", /^%%grid: X lists column names/, "[1, 2]", 1, 15],
    ['%%grid cars X=["a",', /^unclosed bracket in X=\["a",: expected \]/, 'X=["a",', 1, 13],
    ['%%grid cars y="Miles per Gallon', /^unterminated string: "Miles per Gallon has no closing "/, '"Miles per Gallon', 1, 15],
    ["%%grid cars theta=1.5", /^%%grid: theta takes last, a row position/, "1.5", 1, 19],
    ["%%grid cars theta=0,x", /^%%grid: theta positions are whole row numbers/, "0,x", 1, 19],
    ["%%grid cars theta=", /^%%grid: theta= needs a value \(last, a row position/, "theta", 1, 13],
    ["%%grid cars last", /^%%grid: unexpected "last" \(theta=last\?\)/, "last", 1, 13],
    ["%%grid cars y=a ->", /^-> needs a variable name/, "->", 1, 17],
    ["%%grid cars y=a -> 1fit", /^-> 1fit: not a valid variable name/, "1fit", 1, 20],
    ["%%grid cars y=a -> const", /^-> const: const is a reserved word/, "const", 1, 20],
    ["%%grid cars y=a -> fit extra", /^-> fit must end the line, got "extra" after it/, "extra", 1, 24],
    ["%%grid cars y=a -> cars", /^-> cars would replace the data the cell reads/, "cars", 1, 20],
    ["%%grid cars =a", /^%%grid: "=a" has no name before =/, "=a", 1, 13],
    ["%%grid cars y=a\nthreshhold: [0, 0.5]", /^%%grid: unknown option "threshhold"; did you mean "threshold"\?/, "threshhold", 2, 1],
    ["%%grid cars y=a\ncensor-type: both", /^%%grid: unknown option "censor-type"; did you mean "censor_type"\?/, "censor-type", 2, 1],
    ["%%psr cars y=a theta=0\nmax_k: 3", /^%%psr: max_k is an option of grid, not of psr/, "max_k", 2, 1],
    ["%%psr cars theta=0 objective=fit", /^%%psr: objective is an option of maxfit and grid, not of psr/, "objective", 1, 20],
    [
      "%%grid cars y=a\ncensor_type: sideways",
      /^%%grid: bad value for option censor_type: expected one of "relevance", "similarity", "both".*got "sideways"/,
      "censor_type",
      2,
      1,
    ],
    ["%%grid cars y=a\nseed: 1.5", /^%%grid: bad value for option seed: expected an integer >= 0; got 1.5/, "seed", 2, 1],
    ['%%grid cars y=a\nthreshold: [0, "half"]', /^%%grid: bad value for option threshold/, "threshold", 2, 1],
    [
      "%%grid cars y=a\ncensor_type: both\neval_type: relevance",
      /^%%grid: bad value for option censor_type\/eval_type: expected one value for censor_type/,
      "censor_type",
      2,
      1,
    ],
    [
      "%%grid cars y=a\nthreshold: [0, 0.5",
      /^%%grid: the value of option threshold is not valid JSON: expected ',' or '\]' in the list, found the end/,
      "[0, 0.5",
      2,
      12,
    ],
    ["%%grid cars y=a\nthreshold:", /^%%grid: option threshold needs a value/, "threshold", 2, 1],
    ["%%grid cars y=a\nseed: 1\nseed: 2", /^%%grid: option seed is given twice/, "seed", 3, 1],
    ["%%grid cars seed=1\nseed: 2", /^%%grid: option seed is given twice/, "seed", 2, 1],
    ["%%grid cars y=a\nthreshold [0, 0.5]", /^%%grid: expected an option as key: value, got "threshold \[0, 0.5\]"/, "threshold", 2, 1],
    ["%%grid cars y=a\nseed = 3", /^%%grid: expected an option as key: value \(write seed: \.\.\. with a colon\)/, "seed", 2, 1],
    ["%%grid cars\ny: Miles_per_Gallon", /^%%grid: y belongs on the first line/, "y", 2, 1],
    ['%%grid cars y=a\n{ "threshold": [0, 0.5], }', /^%%grid: the options are not valid JSON: a comma before \}/, "}", 2, 26],
    ['%%grid cars y=a\n{\n  "threshold": [0 0.5]\n}', /^%%grid: the options are not valid JSON: expected ',' or '\]' in the list, found "0"/, "0.5]", 3, 19],
    ["%%grid cars y=a\n{ threshold: [0] }", /^%%grid: the options are not valid JSON: expected a property name in double quotes/, "threshold:", 2, 3],
    ["%%grid cars y=a\n[0, 0.5]", /^%%grid: expected an option as key: value/, "[0,", 2, 1],
    ['%%grid cars y=a\n{"threshhold": [0]}', /^%%grid: unknown option "threshhold"; did you mean "threshold"\?/, "threshhold", 2, 3],
  ];

  it(`has at least 20 cases (${cases.length})`, () => expect(cases.length).toBeGreaterThanOrEqual(20));

  it.each(cases)("%j", (source, message, word, line, column) => {
    const e = fail(source);
    expect(e.message).toMatch(message);
    expect({ word: e.word, line: e.line, column: e.column }).toEqual({ word, line, column });
    // The word is where the error says it is.
    expect(source.split(/\r?\n/)[line - 1].slice(column - 1)).toMatch(new RegExp(`^${word.slice(0, 3).replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  });

  it("a JSON body that is not an object", () => {
    const e = fail('%%grid cars y=a\n{"threshold": [0]} {');
    expect(e.message).toMatch(/not valid JSON: unexpected "\{" after the value/);
  });

  it("the traceback shows the line with a caret under the word", () => {
    const src = "const a = 1\n  %timit f()";
    expect(magicTraceback(src, fail(src))).toEqual([
      "MagicError: unknown line magic %timit; did you mean %timeit? (%lsmagic lists the magics)",
      "line 2:   %timit f()",
      "          ^^^^^^",
    ]);
  });
});

describe("positions", () => {
  it("moves a diagnostic on a generated line back to the user's word", () => {
    const src = "%%grid carz y=a theta=nextRow\nseed: 1";
    const t = ok(src);
    const gen = t.code.split("\n")[0];
    const at = (word: string) => gen.indexOf(word) + 1;
    expect(sourcePosition(t, 1, at("carz"))).toEqual({ line: 1, column: 8 });
    expect(sourcePosition(t, 1, at("carz") + 2)).toEqual({ line: 1, column: 10 });
    expect(sourcePosition(t, 1, at("nextRow"))).toEqual({ line: 1, column: 23 });
    // Generated code that is not the user's: the magic itself.
    expect(sourcePosition(t, 1, 3)).toEqual({ line: 1, column: 1 });
    // Lines without magics are unchanged.
    expect(sourcePosition(ok("let a = 1\n%time a"), 1, 5)).toEqual({ line: 1, column: 5 });
  });

  it("%time of a statement", () => {
    const src = "  %time const y: number = 'a'";
    const t = ok(src);
    const col = t.code.indexOf("y:") + 1;
    expect(sourcePosition(t, 1, col)).toEqual({ line: 1, column: src.indexOf("y:") + 1 });
  });

  it("blanks magics for tslab's completion and checks, keeping every offset", () => {
    const src = "const a = 1\n%time a\r\na.toFixed()";
    const blank = blankMagics(src);
    expect(blank).toHaveLength(src.length);
    expect(blank).toBe("const a = 1\n       \r\na.toFixed()");
    expect(blankMagics("%%grid d\nseed: 1")).toBe("        \n       ");
    expect(locateMagics(["x", "%time x", "`", "%time y", "`"])).toEqual({ cell: -1, lines: [1] });
    expect(locateMagics(["", "%%psr d"])).toEqual({ cell: 1, lines: [] });
  });

  it("completes magic names and option names", () => {
    expect(completeMagic("%ti", 3)).toEqual({ start: 0, end: 3, candidates: ["%time", "%timeit"] });
    expect(completeMagic("a\n%%g", 5)).toEqual({ start: 2, end: 5, candidates: ["%%grid"] });
    expect(completeMagic("%%psr d theta=0\nthr", 19)?.candidates).toEqual(["threshold", "threshold_range"]);
    expect(completeMagic("const a = 1\na.to", 16)).toBeUndefined();
  });
});

describe("scanner, suggestions, JSON, timing text", () => {
  it("tells code lines from lines inside strings, templates, comments and brackets", () => {
    const s = new LineScanner();
    const states: boolean[] = [];
    for (const line of ["const a = `x ${ {b: `", "inner`} }", "y`;", "f(1,", "2)", "/* a", "b */ const re = /[/]/", "x"]) {
      states.push(s.atStatementLevel);
      s.feed(line);
    }
    expect(states).toEqual([true, false, false, true, false, true, false, true]);
    expect(splitLineComment("f('//', 2) // note")).toEqual({ code: "f('//', 2)", comment: "// note" });
    expect(splitLineComment("x = /\\/\\//.test(s)")).toEqual({ code: "x = /\\/\\//.test(s)", comment: "" });
  });

  it("suggests the nearest known word", () => {
    expect(editDistance("grdi", "grid")).toBe(1);
    expect(suggest("threshhold", OPTION_KEYS.grid)).toBe("threshold");
    expect(suggest("thresh", OPTION_KEYS.grid)).toBe("threshold");
    expect(suggest("zzz", OPTION_KEYS.grid)).toBeUndefined();
  });

  it("parses JSON with the position of the first fault", () => {
    expect(parseJson('{"a": [1, 2.5e3, null, true, "\\u00e9"]}')).toEqual({ ok: true, value: { a: [1, 2500, null, true, "é"] } });
    expect(parseJson("[1, 2")).toEqual({ ok: false, message: "expected ',' or ']' in the list, found the end", index: 5 });
    expect(parseJson("{'a': 1}")).toMatchObject({ ok: false, index: 1 });
    expect(parseJson('"abc')).toMatchObject({ ok: false, message: "unterminated string", index: 0 });
    expect(parseJson("01")).toMatchObject({ ok: false, index: 1 });
  });

  it("writes times as IPython does", () => {
    expect(formatTime(1.5e-3)).toBe("1.5 ms");
    expect(formatTime(0.000123456)).toBe("123 µs");
    expect(formatTime(2.5e-8)).toBe("25 ns");
    expect(formatTime(12.3456)).toBe("12.3 s");
    expect(formatTime(0)).toBe("0 ns");
    expect(formatTime(125)).toBe("2min 5s");
    expect(timeitText({ loops: 1000, repeats: 7, perLoop: [], mean: 1.23e-3, stdev: 4.56e-5 })).toBe(
      "1.23 ms ± 45.6 µs per loop (mean ± std. dev. of 7 runs, 1,000 loops each)",
    );
    expect(timeitText({ loops: 1, repeats: 1, perLoop: [], mean: 2, stdev: 0 })).toBe("2 s ± 0 ns per loop (mean ± std. dev. of 1 run, 1 loop each)");
  });
});
