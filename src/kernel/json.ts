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

export function parseJson(text: string): JsonResult {
  let i = 0;
  const ws = () => {
    while (i < text.length && /[ \t\r\n]/.test(text[i])) i++;
  };
  const show = (at: number) => (at >= text.length ? "the end" : JSON.stringify(text.slice(at, at + 1)));

  function value(): unknown {
    ws();
    const c = text[i];
    if (c === "{") return object();
    if (c === "[") return array();
    if (c === '"') return string();
    if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return number();
    for (const [word, v] of [
      ["true", true],
      ["false", false],
      ["null", null],
    ] as const) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    if (c === "'") throw new Fault("strings need double quotes", i);
    if (c === undefined) throw new Fault("expected a value, found the end", i);
    throw new Fault(`expected a value, found ${show(i)}`, i);
  }

  function object(): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    i++;
    ws();
    if (text[i] === "}") {
      i++;
      return out;
    }
    for (;;) {
      ws();
      if (text[i] === "}") throw new Fault("a comma before } (JSON allows no trailing comma)", i);
      if (text[i] !== '"') throw new Fault(`expected a property name in double quotes, found ${show(i)}`, i);
      const key = string();
      ws();
      if (text[i] !== ":") throw new Fault(`expected ':' after the property name "${key}", found ${show(i)}`, i);
      i++;
      out[key] = value();
      ws();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "}") {
        i++;
        return out;
      }
      throw new Fault(`expected ',' or '}' after the value of "${key}", found ${show(i)}`, i);
    }
  }

  function array(): unknown[] {
    const out: unknown[] = [];
    i++;
    ws();
    if (text[i] === "]") {
      i++;
      return out;
    }
    for (;;) {
      ws();
      if (text[i] === "]") throw new Fault("a comma before ] (JSON allows no trailing comma)", i);
      out.push(value());
      ws();
      if (text[i] === ",") {
        i++;
        continue;
      }
      if (text[i] === "]") {
        i++;
        return out;
      }
      throw new Fault(`expected ',' or ']' in the list, found ${show(i)}`, i);
    }
  }

  function string(): string {
    const start = i;
    i++;
    while (i < text.length) {
      const c = text[i];
      if (c === '"') {
        i++;
        return JSON.parse(text.slice(start, i)) as string;
      }
      if (c === "\\") {
        const e = text[i + 1];
        if (e === "u") {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) throw new Fault("a \\u escape needs four hex digits", i);
          i += 6;
        } else if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else throw new Fault(`unknown escape \\${e ?? ""} in a string`, i);
        continue;
      }
      if (c === "\n" || c < " ") throw new Fault("unterminated string", start);
      i++;
    }
    throw new Fault("unterminated string", start);
  }

  function number(): number {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (m === null) throw new Fault(`expected a number, found ${show(i)}`, i);
    i += m[0].length;
    return Number(m[0]);
  }

  try {
    const v = value();
    ws();
    if (i < text.length) throw new Fault(`unexpected ${show(i)} after the value`, i);
    return { ok: true, value: v };
  } catch (e) {
    if (e instanceof Fault) return { ok: false, message: e.message, index: e.index };
    throw e;
  }
}
