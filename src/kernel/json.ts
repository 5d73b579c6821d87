/**
 * Strict JSON with positions: `parseJson(text)` gives the value, or the index of the first fault
 * and a short message (JSON.parse's messages differ between Node versions and often give no
 * position), so a magic can point at the character that is wrong.
 */

export type JsonResult = { ok: true; value: unknown } | { ok: false; message: string; index: number };

class Fault {
  constructor(
    readonly message: string,
    readonly index: number,
  ) {}
}

/**
 * Reads one JSON value of `text`, or throws a Fault at the first character that is wrong.
 *
 * @example
 * parseJson('{"a": [1, 2]}'); // { ok: true, value: { a: [1, 2] } }
 * parseJson("[1, 2,]"); // { ok: false, message: "a comma before ] (JSON allows no trailing comma)", index: 6 }
 */
export function parseJson(text: string): JsonResult {
  const reader = new JsonReader(text);
  try {
    const v = reader.value();
    reader.ws();
    if (reader.i < text.length) throw new Fault(`unexpected ${reader.show(reader.i)} after the value`, reader.i);
    return { ok: true, value: v };
  } catch (e) {
    if (e instanceof Fault) return { ok: false, message: e.message, index: e.index };
    throw e;
  }
}

/** A recursive-descent reader of strict JSON; `i` is the index of the next character to read. */
class JsonReader {
  i = 0;
  constructor(readonly text: string) {}

  ws(): void {
    while (this.i < this.text.length && /[ \t\r\n]/.test(this.text[this.i])) this.i++;
  }

  show(at: number): string {
    return at >= this.text.length ? "the end" : JSON.stringify(this.text.slice(at, at + 1));
  }

  value(): unknown {
    this.ws();
    const { text, i } = this;
    const c = text[i];
    if (c === "{") return this.object();
    if (c === "[") return this.array();
    if (c === '"') return this.string();
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return this.number();
    for (const [word, v] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (text.startsWith(word, i)) {
        this.i += word.length;
        return v;
      }
    }
    if (c === "'") throw new Fault("strings need double quotes", i);
    if (c === undefined) throw new Fault("expected a value, found the end", i);
    throw new Fault(`expected a value, found ${this.show(i)}`, i);
  }

  object(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const text = this.text;
    this.i++;
    this.ws();
    if (text[this.i] === "}") {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (text[this.i] === "}") throw new Fault("a comma before } (JSON allows no trailing comma)", this.i);
      if (text[this.i] !== '"') throw new Fault(`expected a property name in double quotes, found ${this.show(this.i)}`, this.i);
      const key = this.string();
      this.ws();
      if (text[this.i] !== ":") throw new Fault(`expected ':' after the property name "${key}", found ${this.show(this.i)}`, this.i);
      this.i++;
      out[key] = this.value();
      this.ws();
      if (text[this.i] === ",") {
        this.i++;
        continue;
      }
      if (text[this.i] === "}") {
        this.i++;
        return out;
      }
      throw new Fault(`expected ',' or '}' after the value of "${key}", found ${this.show(this.i)}`, this.i);
    }
  }

  array(): unknown[] {
    const out: unknown[] = [];
    const text = this.text;
    this.i++;
    this.ws();
    if (text[this.i] === "]") {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      if (text[this.i] === "]") throw new Fault("a comma before ] (JSON allows no trailing comma)", this.i);
      out.push(this.value());
      this.ws();
      if (text[this.i] === ",") {
        this.i++;
        continue;
      }
      if (text[this.i] === "]") {
        this.i++;
        return out;
      }
      throw new Fault(`expected ',' or ']' in the list, found ${this.show(this.i)}`, this.i);
    }
  }

  string(): string {
    const text = this.text;
    const start = this.i;
    this.i++;
    while (this.i < text.length) {
      const c = text[this.i];
      if (c === '"') {
        this.i++;
        return JSON.parse(text.slice(start, this.i)) as string;
      }
      if (c === "\\") {
        const e = text[this.i + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(this.i + 2, this.i + 6))) throw new Fault("a \\u escape needs four hex digits", this.i);
          this.i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) this.i += 2;
        else throw new Fault(`unknown escape \\${e ?? ""} in a string`, this.i);
        continue;
      }
      if (c === "\n" || c < " ") throw new Fault("unterminated string", start);
      this.i++;
    }
    throw new Fault("unterminated string", start);
  }

  number(): number {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.i));
    if (m === null) throw new Fault(`expected a number, found ${this.show(this.i)}`, this.i);
    this.i += m[0].length;
    return Number(m[0]);
  }
}
