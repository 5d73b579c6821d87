/**
 * Completion, inspect and is-complete for cells, from TypeScript's language service and scanner.
 *
 * Cursor positions are Unicode code points (the protocol's count); the service counts UTF-16 units.
 *
 * @example
 * completionResult(checker, "rbp.gr", 6).matches; // ["grid"]
 * isCompleteWith(ts, "for (const x of xs) {"); // { status: "incomplete", indent: "  " }
 */
import type ts from "typescript";
import type { CellChecker } from "./check.js";
import type { CompletionResult, InspectResult, IsCompleteResult } from "./contract.js";

/** The UTF-16 offset of a code-point position. */
export function codePointToOffset(code: string, cursor: number): number {
  let offset = 0;
  for (let i = 0; i < cursor && offset < code.length; i++) offset += (code.codePointAt(offset) ?? 0) > 0xffff ? 2 : 1;
  return offset;
}

/** The code-point position of a UTF-16 offset. */
export function offsetToCodePoint(code: string, offset: number): number {
  let count = 0;
  for (let i = 0; i < offset && i < code.length; count++) i += (code.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
  return count;
}

const WORD = /[\p{L}\p{N}_$]/u;

/** The start of the identifier that ends at `offset`. */
function wordStart(code: string, offset: number): number {
  let start = offset;
  while (start > 0 && WORD.test(code[start - 1])) start--;
  return start;
}

/** Names the kernel generates: never offered. */
const HIDDEN = /^(__rbp_|\$rbp\$)/;

/** Completions at a cursor (code points) of a cell not yet run, seeing the earlier cells. */
export function completionResult(checker: CellChecker, code: string, cursorPos: number): CompletionResult {
  const offset = codePointToOffset(code, cursorPos);
  const start = wordStart(code, offset);
  const prefix = code.slice(start, offset);
  const lower = prefix.toLowerCase();
  const info = checker.completions(code, offset, prefix);
  const entries = (info?.entries ?? [])
    .filter((e) => !HIDDEN.test(e.name) && e.name.toLowerCase().startsWith(lower))
    .sort((a, b) => rank(a.name, prefix) - rank(b.name, prefix) || a.sortText.localeCompare(b.sortText) || a.name.localeCompare(b.name));
  const seen = new Set<string>();
  const unique = entries.filter((e) => !seen.has(e.name) && seen.add(e.name));
  const cursorStart = offsetToCodePoint(code, start);
  return {
    matches: unique.map((e) => e.name),
    cursorStart,
    cursorEnd: cursorPos,
    metadata: {
      _jupyter_types_experimental: unique.map((e) => ({ start: cursorStart, end: cursorPos, text: e.name, type: e.kind })),
    },
  };
}

/** Exact-case prefix matches first. */
function rank(name: string, prefix: string): number {
  return name.startsWith(prefix) ? 0 : 1;
}

function partsText(parts: readonly ts.SymbolDisplayPart[] | undefined): string {
  return (parts ?? []).map((p) => p.text).join("");
}

/** The type and doc comment of the name at a cursor (code points). */
export function inspectResult(checker: CellChecker, code: string, cursorPos: number, detailLevel: 0 | 1): InspectResult {
  const info = checker.quickInfo(code, codePointToOffset(code, cursorPos));
  if (!info) return { found: false, data: {} };
  const signature = partsText(info.displayParts);
  const documentation = partsText(info.documentation);
  const tags = (info.tags ?? []).filter((t) => detailLevel === 1 || t.name !== "example").map((t) => `@${t.name}${t.text ? ` ${partsText(t.text)}` : ""}`);
  const plain = [signature, documentation, ...tags].filter((s) => s.length > 0).join("\n\n");
  const markdown = ["```ts\n" + signature + "\n```", documentation, ...tags.map((t) => `*${t.split(" ")[0]}* ${t.split(" ").slice(1).join(" ")}`)]
    .filter((s) => s.trim().length > 0)
    .join("\n\n");
  return { found: true, data: { "text/plain": plain, "text/markdown": markdown } };
}

const OPENERS: Record<number, string> = {};
const CLOSERS: Record<number, string> = {};

/** Tokens after which `/` divides (an expression ended); elsewhere it starts a regular expression. */
function endsExpression(ts: typeof import("typescript"), kind: ts.SyntaxKind): boolean {
  return (
    kind === ts.SyntaxKind.Identifier ||
    kind === ts.SyntaxKind.NumericLiteral ||
    kind === ts.SyntaxKind.BigIntLiteral ||
    kind === ts.SyntaxKind.StringLiteral ||
    kind === ts.SyntaxKind.RegularExpressionLiteral ||
    kind === ts.SyntaxKind.NoSubstitutionTemplateLiteral ||
    kind === ts.SyntaxKind.TemplateTail ||
    kind === ts.SyntaxKind.CloseParenToken ||
    kind === ts.SyntaxKind.CloseBracketToken ||
    kind === ts.SyntaxKind.CloseBraceToken ||
    kind === ts.SyntaxKind.ThisKeyword ||
    kind === ts.SyntaxKind.SuperKeyword ||
    kind === ts.SyntaxKind.TrueKeyword ||
    kind === ts.SyntaxKind.FalseKeyword ||
    kind === ts.SyntaxKind.NullKeyword ||
    kind === ts.SyntaxKind.PlusPlusToken ||
    kind === ts.SyntaxKind.MinusMinusToken
  );
}

/**
 * Whether a cell can run as it is: `complete`; `incomplete` (an open bracket, template or comment,
 * or a statement cut at the end, such as `const x =`) with the indent of the next line; or `invalid`
 * (a syntax error no further line can fix, such as a `)` without its `(`).
 */
export function isCompleteWith(ts: typeof import("typescript"), code: string): IsCompleteResult {
  if (code.trim() === "") return { status: "complete" };
  if (Object.keys(OPENERS).length === 0) {
    OPENERS[ts.SyntaxKind.OpenParenToken] = ")";
    OPENERS[ts.SyntaxKind.OpenBracketToken] = "]";
    OPENERS[ts.SyntaxKind.OpenBraceToken] = "}";
    CLOSERS[ts.SyntaxKind.CloseParenToken] = ")";
    CLOSERS[ts.SyntaxKind.CloseBracketToken] = "]";
    CLOSERS[ts.SyntaxKind.CloseBraceToken] = "}";
  }
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, code);
  const stack: string[] = [];
  let previous = ts.SyntaxKind.Unknown;
  for (let kind = scanner.scan(); kind !== ts.SyntaxKind.EndOfFileToken; kind = scanner.scan()) {
    if ((kind === ts.SyntaxKind.SlashToken || kind === ts.SyntaxKind.SlashEqualsToken) && !endsExpression(ts, previous)) {
      kind = scanner.reScanSlashToken();
    }
    if (kind === ts.SyntaxKind.CloseBraceToken && stack[stack.length - 1] === "${") {
      kind = scanner.reScanTemplateToken(false);
      if (scanner.isUnterminated()) return { status: "incomplete", indent: "" };
      if (kind === ts.SyntaxKind.TemplateTail) stack.pop();
      previous = kind;
      continue;
    }
    if (scanner.isUnterminated()) {
      // A string cannot span lines; a template literal or a comment can.
      return kind === ts.SyntaxKind.StringLiteral ? { status: "invalid" } : { status: "incomplete", indent: "" };
    }
    if (kind === ts.SyntaxKind.TemplateHead) stack.push("${");
    else if (OPENERS[kind]) stack.push(OPENERS[kind]);
    else if (CLOSERS[kind]) {
      if (stack.pop() !== CLOSERS[kind]) return { status: "invalid" };
    }
    previous = kind;
  }
  if (stack.length > 0) return { status: "incomplete", indent: "  ".repeat(stack.filter((s) => s !== "${").length) };
  const source = ts.createSourceFile("cell.mts", code, ts.ScriptTarget.Latest, false);
  const diagnostics = (source as unknown as { parseDiagnostics?: ts.Diagnostic[] }).parseDiagnostics ?? [];
  if (diagnostics.length === 0) return { status: "complete" };
  const end = code.trimEnd().length;
  return diagnostics.every((d) => (d.start ?? 0) >= end) ? { status: "incomplete", indent: "" } : { status: "invalid" };
}
