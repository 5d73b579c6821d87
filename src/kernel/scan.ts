/**
 * Just enough of a TypeScript lexer to tell, line by line, whether a line begins in code: a line
 * that starts inside a template literal, a block comment, a string continued with a backslash, or
 * inside parentheses or brackets (`foo(a\n%b)`: a modulo) is never a magic.
 *
 * It follows strings, template literals (with `${...}` nesting), comments, and regular expression
 * literals, which it tells from division by the token before the slash (the usual heuristic: a
 * slash after an operator, an opening bracket, a keyword such as `return` or the start of input
 * begins a regular expression).
 */

type Frame = { kind: "code"; braces: number } | { kind: "template" };

const REGEX_AFTER_CHARS = new Set("(,=:[!&|?{};+-*%<>~^");
const REGEX_AFTER_WORDS = new Set(["return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield", "await"]);

const isIdentChar = (c: string): boolean => /[\w$]/.test(c);

export class LineScanner {
  #stack: Frame[] = [{ kind: "code", braces: 0 }];
  #blockComment = false;
  /** A quote whose string continues on the next line (a backslash before the newline). */
  #openQuote: string | undefined;
  #depth = 0;
  /** The last significant character of code, "" at the start. */
  #lastChar = "";
  #lastWord = "";

  /** Whether the next line starts in code, outside any bracket or parenthesis. */
  get atStatementLevel(): boolean {
    return this.inCode && this.#depth === 0;
  }

  /** Whether the next line starts in code (not in a comment, string or template). */
  get inCode(): boolean {
    return !this.#blockComment && this.#openQuote === undefined && this.#top().kind === "code";
  }

  /** Skips a line without lexing it (a magic line): the state stays as it was before it. */
  skip(): void {
    this.#lastChar = ";";
    this.#lastWord = "";
  }

  #top(): Frame {
    return this.#stack[this.#stack.length - 1];
  }

  #regexAllowed(): boolean {
    return this.#lastChar === "" || REGEX_AFTER_CHARS.has(this.#lastChar) || REGEX_AFTER_WORDS.has(this.#lastWord);
  }

  /** Lexes one line (without its newline). */
  feed(line: string): void {
    let i = 0;
    const n = line.length;
    if (this.#openQuote !== undefined) {
      const q = this.#openQuote;
      this.#openQuote = undefined;
      i = this.#skipString(line, 0, q);
    }
    while (i < n) {
      if (this.#blockComment) {
        const end = line.indexOf("*/", i);
        if (end < 0) return;
        this.#blockComment = false;
        i = end + 2;
        continue;
      }
      const top = this.#top();
      const c = line[i];
      if (top.kind === "template") {
        if (c === "\\") i += 2;
        else if (c === "`") {
          this.#stack.pop();
          this.#lastChar = "`";
          this.#lastWord = "";
          i++;
        } else if (c === "$" && line[i + 1] === "{") {
          this.#stack.push({ kind: "code", braces: 0 });
          this.#lastChar = "{";
          this.#lastWord = "";
          i += 2;
        } else i++;
        continue;
      }
      if (c === " " || c === "\t" || c === "\r") {
        i++;
        continue;
      }
      if (c === "/" && line[i + 1] === "/") return;
      if (c === "/" && line[i + 1] === "*") {
        this.#blockComment = true;
        i += 2;
        continue;
      }
      if (c === "'" || c === '"') {
        i = this.#skipString(line, i + 1, c);
        this.#lastChar = c;
        this.#lastWord = "";
        continue;
      }
      if (c === "`") {
        this.#stack.push({ kind: "template" });
        i++;
        continue;
      }
      if (c === "/" && this.#regexAllowed()) {
        i = skipRegex(line, i + 1);
        this.#lastChar = "/";
        this.#lastWord = "";
        continue;
      }
      if (isIdentChar(c)) {
        let j = i + 1;
        while (j < n && isIdentChar(line[j])) j++;
        this.#lastWord = line.slice(i, j);
        this.#lastChar = line[j - 1];
        i = j;
        continue;
      }
      if (c === "(" || c === "[") this.#depth++;
      else if ((c === ")" || c === "]") && this.#depth > 0) this.#depth--;
      else if (c === "{") top.braces++;
      else if (c === "}") {
        if (top.braces > 0) top.braces--;
        else if (this.#stack.length > 1) this.#stack.pop(); // the end of a ${...}
      }
      this.#lastChar = c;
      this.#lastWord = "";
      i++;
    }
  }

  /** Skips a string body from `i`; remembers a string continued past the line's end. */
  #skipString(line: string, i: number, quote: string): number {
    while (i < line.length) {
      const c = line[i];
      if (c === "\\") {
        if (i === line.length - 1) {
          this.#openQuote = quote;
          return line.length;
        }
        i += 2;
        continue;
      }
      if (c === quote) return i + 1;
      i++;
    }
    return i; // an unterminated string ends with its line
  }
}

function skipRegex(line: string, i: number): number {
  let inClass = false;
  while (i < line.length) {
    const c = line[i];
    if (c === "\\") i += 2;
    else if (c === "[") ((inClass = true), i++);
    else if (c === "]") ((inClass = false), i++);
    else if (c === "/" && !inClass) return i + 1;
    else i++;
  }
  return i;
}

/**
 * Splits a line of code at a trailing `//` comment (outside strings, templates and regular
 * expressions): `{ code, comment }`, the comment with its slashes, or "".
 */
export function splitLineComment(line: string): { code: string; comment: string } {
  let i = 0;
  let quote: string | undefined;
  let lastSignificant = "";
  while (i < line.length) {
    const c = line[i];
    if (quote !== undefined) {
      if (c === "\\") i += 2;
      else {
        if (c === quote) quote = undefined;
        i++;
      }
      continue;
    }
    if (c === "'" || c === '"' || c === "`") {
      quote = c;
      lastSignificant = c;
      i++;
      continue;
    }
    if (c === "/" && line[i + 1] === "/") return { code: line.slice(0, i).trimEnd(), comment: line.slice(i) };
    if (c === "/" && line[i + 1] === "*") {
      const end = line.indexOf("*/", i + 2);
      i = end < 0 ? line.length : end + 2;
      continue;
    }
    if (c === "/" && (lastSignificant === "" || REGEX_AFTER_CHARS.has(lastSignificant))) {
      i = skipRegex(line, i + 1);
      lastSignificant = "/";
      continue;
    }
    if (c !== " " && c !== "\t") lastSignificant = c;
    i++;
  }
  return { code: line.trimEnd(), comment: "" };
}
