/**
 * `%rbp` line magic: its subcommands (connect, quota, status, options, help) and the arguments of
 * `%rbp connect` (url, access_id, timeout, workers, quota, version; a secret on the line is refused).
 * Pure.
 */
import { ANALYSES } from "../../api/options.js";
import { didYouMean } from "../../internal/suggest.js";
import { parseJson } from "../json.js";
import { Fail, IDENT_PATH, LineBuilder, RESERVED, Token, helpCall, tokenize, unquote } from "./syntax.js";

export const RBP_SUBCOMMANDS = ["connect", "quota", "status", "options", "help"];
export const CONNECT_KEYS = ["url", "access_id", "timeout", "workers", "quota", "version"];
export const SECRET_KEYS = ["api_key", "apikey", "key", "csa_api_key", "token", "secret"];

export function rbpMagic(text: string, from: number, line: number, rt: string, b: LineBuilder): void {
  const tokens = tokenize(text, from, line);
  if (tokens.length === 0) {
    b.add(helpCall(rt, "rbp", "line"));
    return;
  }
  const [sub, ...rest] = tokens;
  const col = (t: Token) => t.column + 1;
  const noMore = (after: Token, what: string) => {
    if (rest.length > 0) {
      const extra = rest[0];
      throw new Fail({ message: `%rbp ${after.text} ${what}, got ${JSON.stringify(extra.text)}`, word: extra.text, line, column: col(extra) });
    }
  };
  switch (sub.text) {
    case "help":
      noMore(sub, "takes no arguments");
      b.add(helpCall(rt, "rbp", "line"));
      return;
    case "quota":
      noMore(sub, "takes no arguments");
      b.add(`await ${rt}.quota();`);
      return;
    case "options": {
      const a = rest[0];
      if (a === undefined) {
        throw new Fail({ message: `%rbp options needs an analysis: %rbp options ${ANALYSES.join(" | ")}`, word: "options", line, column: col(sub) });
      }
      const analysis = a.text.toLowerCase();
      if (!(ANALYSES as readonly string[]).includes(analysis)) {
        throw new Fail({
          message: `unknown analysis ${JSON.stringify(a.text)}${didYouMean(a.text, ANALYSES)}; expected one of ${ANALYSES.join(", ")}`,
          word: a.text,
          line,
          column: col(a),
        });
      }
      if (rest.length > 1) {
        throw new Fail({ message: `%rbp options takes one analysis, got ${JSON.stringify(rest[1].text)} too`, word: rest[1].text, line, column: col(rest[1]) });
      }
      b.add(`await ${rt}.options(${JSON.stringify(analysis)});`);
      return;
    }
    case "status":
      statusMagic(sub, rest, line, rt, b);
      return;
    case "connect":
      b.add(`await ${rt}.connect(${JSON.stringify(connectOptions(rest, line))});`);
      return;
    default:
      throw new Fail({
        message: `unknown %rbp command ${JSON.stringify(sub.text)}${didYouMean(sub.text, RBP_SUBCOMMANDS)}; expected one of ${RBP_SUBCOMMANDS.join(", ")}`,
        word: sub.text,
        line,
        column: sub.column + 1,
      });
  }
}

export function statusMagic(sub: Token, rest: Token[], line: number, rt: string, b: LineBuilder): void {
  const usage = "%rbp status <prediction or receipt variable> | <job_id> <job_code> | <job_id>/<job_code>";
  if (rest.length === 0) throw new Fail({ message: `%rbp status needs a job: ${usage}`, word: "status", line, column: sub.column + 1 });
  const [a, c, ...more] = rest;
  if (more.length > 0)
    throw new Fail({
      message: `%rbp status takes one job, got ${JSON.stringify(more[0].text)} too (${usage})`,
      word: more[0].text,
      line,
      column: more[0].column + 1,
    });
  const receipt = (id: string, code: string, at: Token) => {
    if (!/^\d+$/.test(id))
      throw new Fail({ message: `a job id is a whole number, got ${JSON.stringify(id)} (${usage})`, word: id, line, column: at.column + 1 });
    if (code === "") throw new Fail({ message: `the job code is missing (${usage})`, word: at.text, line, column: at.column + 1 });
    return `{ job_id: ${Number(id)}, job_code: ${JSON.stringify(code)} }`;
  };
  if (c !== undefined) {
    b.add(`await ${rt}.status(${receipt(unquote(a.text, line, a.column + 1), unquote(c.text, line, c.column + 1), a)});`);
    return;
  }
  if (a.text.startsWith("{")) {
    const r = parseJson(a.text);
    if (!r.ok) throw new Fail({ message: `the receipt is not valid JSON: ${r.message}`, word: a.text, line, column: a.column + r.index + 1 });
    const v = r.value as Record<string, unknown>;
    if (typeof v !== "object" || v === null || v.job_id === undefined || v.job_code === undefined) {
      throw new Fail({ message: `a receipt has job_id and job_code: {"job_id": ..., "job_code": ...}`, word: a.text, line, column: a.column + 1 });
    }
    b.add(`await ${rt}.status(${receipt(String(v.job_id), String(v.job_code), a)});`);
    return;
  }
  const slash = /^([^/\s]+)\/([^/\s]+)$/.exec(a.text);
  if (slash !== null && !IDENT_PATH.test(a.text)) {
    b.add(`await ${rt}.status(${receipt(slash[1], slash[2], a)});`);
    return;
  }
  if (!IDENT_PATH.test(a.text) || RESERVED.has(a.text)) {
    throw new Fail({ message: `${JSON.stringify(a.text)} is not a variable name nor a receipt (${usage})`, word: a.text, line, column: a.column + 1 });
  }
  b.add(`await ${rt}.status(`).user(a.text, a.column).add(`);`);
}

export interface ConnectSpec {
  hosted?: boolean;
  baseUrl?: string;
  accessId?: string;
  apiVersion?: "v3" | "v2";
  timeoutMs?: number;
  local?: { workers?: number; quota?: number };
  /** `fresh`: a new connection (a new embedded service) rather than the running one. */
  fresh?: boolean;
}

export function readVersion(v: string, line: number, column: number): "v3" | "v2" {
  const s = v.toLowerCase();
  if (s === "v3" || s === "3") return "v3";
  if (s === "v2" || s === "2") return "v2";
  throw new Fail({ message: `unknown API version ${JSON.stringify(v)}; expected v3 or v2`, word: v, line, column });
}

/** What `%rbp connect` has read so far: the spec, the target its first word named, and the settings given. */
interface ConnectState {
  spec: ConnectSpec;
  target?: "local" | "hosted" | "url";
  seen: Set<string>;
  line: number;
}

export function connectOptions(tokens: Token[], line: number): ConnectSpec {
  const state: ConnectState = { spec: {}, seen: new Set<string>(), line };
  for (const [index, tok] of tokens.entries()) {
    if (tok.text.includes("=")) connectSetting(tok, state);
    else connectWord(tok, index, state);
  }
  return state.spec;
}

/** A word of `%rbp connect`: a version (v3, v2), `fresh`, and first on the line `local`, `hosted` or a URL. */
function connectWord(tok: Token, index: number, state: ConnectState): void {
  const { spec, line } = state;
  const column = tok.column + 1;
  if (/^v?[23]$/i.test(tok.text)) {
    if (spec.apiVersion !== undefined) throw new Fail({ message: `the API version is given twice`, word: tok.text, line, column });
    spec.apiVersion = readVersion(tok.text, line, column);
    state.seen.add("version");
    return;
  }
  if (index === 0 && /^https?:\/\//i.test(tok.text)) {
    try {
      new URL(tok.text);
    } catch {
      throw new Fail({ message: `${JSON.stringify(tok.text)} is not a valid URL`, word: tok.text, line, column });
    }
    state.target = "url";
    spec.hosted = true;
    spec.baseUrl = tok.text;
    return;
  }
  if (tok.text === "fresh") {
    if (spec.fresh === true) throw new Fail({ message: `%rbp connect: fresh is given twice`, word: tok.text, line, column });
    spec.fresh = true;
    return;
  }
  if (index === 0 && (tok.text === "local" || tok.text === "hosted")) {
    state.target = tok.text;
    spec.hosted = tok.text === "hosted";
    return;
  }
  const hint = index === 0 ? didYouMean(tok.text, ["local", "hosted"]) : didYouMean(tok.text, ["v3", "v2", "fresh", ...CONNECT_KEYS.map((k) => `${k}=`)]);
  throw new Fail({
    message: `%rbp connect: unexpected ${JSON.stringify(tok.text)}${hint} (%rbp connect [local | hosted | <url>] [v3 | v2] [fresh] [key=value ...])`,
    word: tok.text,
    line,
    column,
  });
}

/** A `key=value` of `%rbp connect`: a known key (never a secret), given once, with a value, that fits the target. */
function connectSetting(tok: Token, state: ConnectState): void {
  const { line, target, seen } = state;
  const column = tok.column + 1;
  const eq = tok.text.indexOf("=");
  const key = tok.text.slice(0, eq);
  const value = unquote(tok.text.slice(eq + 1), line, column + eq + 1);
  if (SECRET_KEYS.includes(key.toLowerCase())) {
    throw new Fail({
      message: `%rbp connect does not take the API key in the notebook (where it would be saved and shared): set CSA_API_KEY in the environment or in a .env file beside the notebook`,
      word: key,
      line,
      column,
    });
  }
  if (!CONNECT_KEYS.includes(key)) {
    throw new Fail({
      message: `%rbp connect has no setting ${JSON.stringify(key)}${didYouMean(key, CONNECT_KEYS)}; it takes ${CONNECT_KEYS.join(", ")}`,
      word: key,
      line,
      column,
    });
  }
  if (seen.has(key)) throw new Fail({ message: `%rbp connect: ${key} is given twice`, word: key, line, column });
  seen.add(key);
  if (value === "") throw new Fail({ message: `%rbp connect: ${key} needs a value (${key}=<value>)`, word: key, line, column });
  const hostedOnly = key === "url" || key === "access_id";
  const localOnly = key === "workers" || key === "quota";
  if ((hostedOnly && target === "local") || (localOnly && (target === "hosted" || target === "url"))) {
    throw new Fail({
      message: `%rbp connect: ${key} is a setting of ${hostedOnly ? "a hosted" : "the local"} service, not of ${target === "local" ? "the local one" : "a hosted one"}`,
      word: key,
      line,
      column,
    });
  }
  applySetting(state.spec, key, value, line, column, column + eq + 1);
}

/** Sets a checked `key=value` on the spec; `valueColumn` is where a value that does not read is shown. */
function applySetting(spec: ConnectSpec, key: string, value: string, line: number, column: number, valueColumn: number): void {
  const wholeNumber = (min: number): number => {
    if (!/^\d+$/.test(value) || Number(value) < min) {
      throw new Fail({
        message: `%rbp connect: ${key} must be a whole number of at least ${min}, got ${JSON.stringify(value)}`,
        word: value,
        line,
        column: valueColumn,
      });
    }
    return Number(value);
  };
  switch (key) {
    case "url":
      try {
        if (!/^https?:$/.test(new URL(value).protocol)) throw new Error();
      } catch {
        throw new Fail({ message: `%rbp connect: url must be an http(s) address, got ${JSON.stringify(value)}`, word: value, line, column: valueColumn });
      }
      if (spec.baseUrl !== undefined) throw new Fail({ message: `%rbp connect: the address is given twice`, word: key, line, column });
      spec.baseUrl = value;
      spec.hosted = true;
      break;
    case "access_id":
      spec.accessId = value;
      break;
    case "timeout": {
      const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value);
      if (m === null || Number(m[1]) <= 0) {
        throw new Fail({
          message: `%rbp connect: timeout must be a positive duration (30, 30s, 500ms, 2m), got ${JSON.stringify(value)}`,
          word: value,
          line,
          column: valueColumn,
        });
      }
      const unit = m[2] ?? "s";
      spec.timeoutMs = Math.round(Number(m[1]) * (unit === "ms" ? 1 : unit === "s" ? 1000 : 60_000));
      break;
    }
    case "workers":
      spec.local = { ...spec.local, workers: wholeNumber(1) };
      spec.hosted = false;
      break;
    case "quota":
      spec.local = { ...spec.local, quota: wholeNumber(0) };
      spec.hosted = false;
      break;
    case "version":
      spec.apiVersion = readVersion(value, line, valueColumn);
      break;
  }
}
