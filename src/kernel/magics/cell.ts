/**
 * Cell magics (`%%grid`, `%%maxfit`, `%%psr`): the header (data, y/X/theta columns, inline
 * options, `-> name`) and the generated runtime call; the body is options-body.ts's. Pure.
 */
import { OPTION_KEYS, type Analysis } from "../../api/options.js";
import { parseJson } from "../json.js";
import { findMagic } from "../catalog.js";
import {
  Fail,
  IDENT,
  IDENT_PATH,
  LineBuilder,
  Out,
  RESERVED,
  Token,
  helpCall,
  magicHead,
  readValue,
  splitCommas,
  tokenize,
  unknownMagic,
  unquote,
} from "./syntax.js";
import { COLUMN_KEYS, checkOptions, readBody, unknownOption, type Located } from "./options-body.js";

// Cell magics.

/** What a cell magic's header says: the data, the y/X/theta columns, the inline options, the name to bind. */
type ColumnSpec = Partial<Record<"y" | "X" | "theta", { code?: string; user?: Token; value?: unknown }>>;

/** The magic being read, for its messages: `%%grid`, its line and its analysis. */
interface Header {
  label: string;
  line: number;
  analysis: Analysis;
}

export function cellMagic(lines: string[], index: number, rt: string, out: Out): void {
  const line = index + 1;
  const text = lines[index];
  const at = text.indexOf("%%");
  const head = magicHead(text, at, "%%", line);
  const label = `%%${head.name}`;
  const finish = (code: LineBuilder) => {
    out.lines.push(code.text);
    out.segments.push(...code.segments);
    out.magicLines.push({ line, column: at });
    out.magics.push(head.name === "" ? "%%?" : label);
    out.usesRuntime = true;
    // The body's lines stay, blank, so that later lines keep their numbers.
    for (let i = index + 1; i < lines.length; i++) out.lines.push("");
  };
  const b = new LineBuilder(line).add(text.slice(0, at));
  if (head.help) {
    if (head.name !== "" && findMagic(head.name) === undefined) throw unknownMagic(head.name, "cell", line, at + 1);
    const info = findMagic(head.name, "cell") ?? findMagic(head.name);
    return finish(b.add(helpCall(rt, info?.name, info?.kind)));
  }
  const magic = findMagic(head.name, "cell");
  if (magic === undefined) throw unknownMagic(head.name, "cell", line, at + 1);
  const header: Header = { label, line, analysis: magic.name as Analysis };

  const tokens = tokenize(text, head.rest, line);
  if (tokens.some((t) => t.text === "--help" || t.text === "-h")) return finish(b.add(helpCall(rt, magic.name, "cell")));
  const dataTok = dataToken(tokens.shift(), magic.usage, header, at);
  const { spec, options, bind } = readSettings(tokens, dataTok, header);
  readBody(lines, index + 1, header.analysis, label, options);
  checkOptions(header.analysis, label, options);
  finish(runCall(b, rt, header.analysis, dataTok, spec, options, bind));
}

/** The data token (the first after the magic's name): a variable's name, or a Fail saying what to write. */
function dataToken(dataTok: Token | undefined, usage: string, { label, line }: Header, at: number): Token {
  if (dataTok === undefined) {
    throw new Fail({
      message: `${label} needs the data: the name of a dataframe (or rows, or columns) in scope, as in ${usage}`,
      word: label,
      line,
      column: at + 1,
    });
  }
  if (dataTok.text === "->" || dataTok.text.includes("=")) {
    throw new Fail({
      message: `${label} needs the data first, before ${JSON.stringify(dataTok.text)}: ${usage}`,
      word: dataTok.text,
      line,
      column: dataTok.column + 1,
    });
  }
  if (!IDENT_PATH.test(dataTok.text) || RESERVED.has(dataTok.text.split(".")[0])) {
    throw new Fail({
      message: `${label}: ${JSON.stringify(dataTok.text)} is not the name of a variable; name the dataframe (or rows, or columns) in scope, as in ${usage}`,
      word: dataTok.text,
      line,
      column: dataTok.column + 1,
    });
  }
  return dataTok;
}

/** The settings after the data: y=, X=, theta=, the analysis' options as key=value, and `-> name` last. */
function readSettings(tokens: Token[], dataTok: Token, header: Header): { spec: ColumnSpec; options: Map<string, Located>; bind?: string } {
  const { label, line, analysis } = header;
  const known = OPTION_KEYS[analysis];
  const spec: ColumnSpec = {};
  const options = new Map<string, Located>();
  for (let i = 0; i < tokens.length; i++) {
    const tok = tokens[i];
    const column = tok.column + 1;
    if (tok.text === "->") return { spec, options, bind: bindName(tokens, i, dataTok, header) };
    const eq = tok.text.indexOf("=");
    if (eq < 0) {
      const hint = tok.text.toLowerCase() === "last" || /^-?\d+$/.test(tok.text) ? ` (theta=${tok.text}?)` : "";
      throw new Fail({
        message: `${label}: unexpected ${JSON.stringify(tok.text)}${hint}; after the data come key=value settings (y=<column>, X=<columns>, theta=<rows>) and -> <name>`,
        word: tok.text,
        line,
        column,
      });
    }
    const key = tok.text.slice(0, eq);
    const raw = tok.text.slice(eq + 1);
    const valueColumn = tok.column + eq + 1;
    if (key === "") throw new Fail({ message: `${label}: ${JSON.stringify(tok.text)} has no name before =`, word: tok.text, line, column });
    const col = COLUMN_KEYS[key];
    if (col !== undefined) {
      if (spec[col] !== undefined) throw new Fail({ message: `${label}: ${col} is given twice`, word: key, line, column });
      if (raw === "")
        throw new Fail({
          message: `${label}: ${key}= needs a value${col === "theta" ? " (last, a row position, positions like 0,-1, or a variable)" : ""}`,
          word: key,
          line,
          column,
        });
      spec[col] = columnValue(col, raw, line, valueColumn, label);
      continue;
    }
    if (known.includes(key)) {
      if (options.has(key)) throw new Fail({ message: `${label}: option ${key} is given twice`, word: key, line, column });
      options.set(key, { value: readValue(raw, { label, key, line, keyColumn: column, column: valueColumn + 1 }), key, line, column });
      continue;
    }
    throw unknownOption(key, analysis, label, line, column, true);
  }
  return { spec, options };
}

/** The name after `->` (tokens[arrow]): a valid variable name, not the data's, ending the line. */
function bindName(tokens: Token[], arrow: number, dataTok: Token, { label, line }: Header): string {
  const column = tokens[arrow].column + 1;
  const name = tokens[arrow + 1];
  if (name === undefined) throw new Fail({ message: `-> needs a variable name to bind the prediction to: ${label} ... -> fit1`, word: "->", line, column });
  if (!IDENT.test(name.text) || RESERVED.has(name.text)) {
    throw new Fail({
      message: `-> ${name.text}: ${RESERVED.has(name.text) ? `${name.text} is a reserved word` : "not a valid variable name"}; use letters, digits, _ and $, not starting with a digit`,
      word: name.text,
      line,
      column: name.column + 1,
    });
  }
  if (name.text === dataTok.text.split(".")[0]) {
    throw new Fail({
      message: `-> ${name.text} would replace the data the cell reads; choose another name`,
      word: name.text,
      line,
      column: name.column + 1,
    });
  }
  const after = tokens[arrow + 2];
  if (after !== undefined) {
    throw new Fail({
      message: `-> ${name.text} must end the line, got ${JSON.stringify(after.text)} after it`,
      word: after.text,
      line,
      column: after.column + 1,
    });
  }
  return name.text;
}

/** The runtime call, all on the magic's line: `const fit1 = await $rbp.run("grid", df, { y: ..., X: ... }, {...}); const _ = fit1; fit1`. */
function runCall(
  b: LineBuilder,
  rt: string,
  analysis: Analysis,
  dataTok: Token,
  spec: ColumnSpec,
  options: Map<string, Located>,
  bind: string | undefined,
): LineBuilder {
  const name = bind ?? "_";
  // Several row positions are an experiment: typed as one (a variable's rows are only known at run time).
  const theta = spec.theta?.value;
  const call = Array.isArray(theta) && theta.length > 1 ? "runExperiment" : "run";
  b.add(`const ${name} = await ${rt}.${call}(${JSON.stringify(analysis)}, `)
    .user(dataTok.text, dataTok.column)
    .add(", {");
  const parts = (["y", "X", "theta"] as const).filter((k) => spec[k] !== undefined);
  parts.forEach((k, i) => {
    const v = spec[k]!;
    b.add(`${i > 0 ? ", " : " "}${k}: `);
    if (v.user !== undefined) b.user(v.user.text, v.user.column);
    else b.add(JSON.stringify(v.value));
  });
  const opts: Record<string, unknown> = {};
  for (const [k, v] of options) opts[k] = v.value;
  b.add(`${parts.length > 0 ? " " : ""}}, ${JSON.stringify(opts)}); `);
  if (name !== "_") b.add(`const _ = ${name}; `);
  return b.add(name);
}

export function columnValue(col: "y" | "X" | "theta", raw: string, line: number, column: number, label: string): { value?: unknown; user?: Token } {
  const at = column + 1;
  if (col === "y") {
    if (raw.startsWith("[") || splitCommas(raw).length > 1) {
      throw new Fail({ message: `${label}: y names one column (the outcome), got ${raw}`, word: raw, line, column: at });
    }
    return { value: unquote(raw, line, at) };
  }
  if (col === "X") {
    if (raw.startsWith("[")) {
      const r = parseJson(raw);
      if (!r.ok) throw new Fail({ message: `${label}: X=${raw} is not a valid JSON list: ${r.message}`, word: raw, line, column: at + r.index });
      if (!Array.isArray(r.value) || r.value.length === 0 || !r.value.every((v) => typeof v === "string" && v !== "")) {
        throw new Fail({ message: `${label}: X lists column names, e.g. X=["Horsepower", "Weight_in_lbs"], got ${raw}`, word: raw, line, column: at });
      }
      return { value: r.value };
    }
    const names = splitCommas(raw).map((p) => {
      if (p.text.trim() === "") throw new Fail({ message: `${label}: an empty column name in X=${raw}`, word: raw, line, column: at });
      return unquote(p.text, line, at + p.offset);
    });
    return { value: names };
  }
  // theta
  if (raw.toLowerCase() === "last") return { value: "last" };
  if (/^-?\d+$/.test(raw)) return { value: Number(raw) };
  const rows = (list: unknown[]): number[] =>
    list.map((v) => {
      if (typeof v !== "number" || !Number.isInteger(v)) {
        throw new Fail({ message: `${label}: theta positions are whole row numbers (negative from the end), got ${raw}`, word: raw, line, column: at });
      }
      return v;
    });
  if (raw.startsWith("[")) {
    const r = parseJson(raw);
    if (!r.ok || !Array.isArray(r.value))
      throw new Fail({
        message: `${label}: theta=${raw} is not a list of row positions${r.ok ? "" : `: ${r.message}`}`,
        word: raw,
        line,
        column: at + (r.ok ? 0 : r.index),
      });
    return { value: rows(r.value) };
  }
  if (raw.includes(",")) {
    const parts = splitCommas(raw);
    return { value: rows(parts.map((p) => (/^\s*-?\d+\s*$/.test(p.text) ? Number(p.text) : p.text))) };
  }
  if (IDENT_PATH.test(raw) && !RESERVED.has(raw.split(".")[0])) return { user: { text: raw, column: column } };
  throw new Fail({
    message: `${label}: theta takes last, a row position (0-based, negative from the end), positions like 0,-1, or the name of a variable holding new circumstances; got ${raw}`,
    word: raw,
    line,
    column: at,
  });
}
