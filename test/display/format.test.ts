/** The display's escaping and number formatting (src/display/format.ts), each rule pinned. */
import { describe, expect, it } from "vitest";
import { escapeHtml, formatCount, formatNumber, MISSING, scriptJson, textTable } from "../../src/display/format.js";

describe("escapeHtml", () => {
  it("escapes the five characters that matter in content and in both kinds of attribute quotes", () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe("&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
    expect(escapeHtml("'")).toBe("&#39;");
    expect(escapeHtml("it's")).toBe("it&#39;s");
    expect(escapeHtml('"')).toBe("&quot;");
    expect(escapeHtml("a & b")).toBe("a &amp; b");
  });

  it("every occurrence, not the first; other text and non-strings as they are", () => {
    expect(escapeHtml("''<<>>&&")).toBe("&#39;&#39;&lt;&lt;&gt;&gt;&amp;&amp;");
    expect(escapeHtml("plain text, 1.5 é")).toBe("plain text, 1.5 é");
    expect(escapeHtml(42)).toBe("42");
    expect(escapeHtml(null)).toBe("null");
  });
});

describe("formatNumber", () => {
  it("six significant digits, trailing zeros trimmed", () => {
    expect(formatNumber(3.285239701887985)).toBe("3.28524");
    expect(formatNumber(1.5)).toBe("1.5");
    expect(formatNumber(2.50000001)).toBe("2.5");
    expect(formatNumber(-0.125)).toBe("-0.125");
    expect(formatNumber(3.285239701887985, 3)).toBe("3.29");
    expect(formatNumber(123456.7)).toBe("123457");
  });

  it("integers as they are below 1e9; exponents from 1e9 and below 1e-4", () => {
    expect(formatNumber(0)).toBe("0");
    expect(formatNumber(-0)).toBe("0");
    expect(formatNumber(999_999_999)).toBe("999999999");
    expect(formatNumber(1e9)).toBe("1e+9");
    expect(formatNumber(-2.5e9)).toBe("-2.5e+9");
    expect(formatNumber(1e-4)).toBe("0.0001");
    expect(formatNumber(0.0000123456)).toBe("1.235e-5");
    expect(formatNumber(-0.00005)).toBe("-5e-5");
    expect(formatNumber(1.23456789e-7, 8)).toBe("1.23457e-7");
  });

  it("a dash for null, undefined, NaN and the infinities", () => {
    for (const x of [null, undefined, NaN, Infinity, -Infinity]) expect(formatNumber(x)).toBe(MISSING);
    expect(MISSING).toBe("—");
  });
});

describe("formatCount, scriptJson, textTable", () => {
  it("counts with thousands separators", () => {
    expect(formatCount(9000)).toBe("9,000");
    expect(formatCount(1_234_567)).toBe("1,234,567");
    expect(formatCount(12)).toBe("12");
  });

  it("JSON safe inside <script>: no tag, comment or line separator survives; non-finite numbers are null", () => {
    const text = scriptJson({ s: "</script><!-- & \u2028\u2029", n: [1.5, NaN, Infinity, -Infinity] });
    expect(text).not.toMatch(/[<>&\u2028\u2029]/);
    expect(text).toBe('{"s":"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u2028\\u2029","n":[1.5,null,null,null]}');
    expect(JSON.parse(text)).toEqual({ s: "</script><!-- & \u2028\u2029", n: [1.5, null, null, null] });
  });

  it("pads plain-text columns: the first to the left, the others to the right, no trailing spaces", () => {
    expect(
      textTable(
        ["row", "yhat"],
        [
          ["1", "3.29"],
          ["2", "-0.5"],
        ],
      ),
    ).toBe("row  yhat\n---  ----\n1    3.29\n2    -0.5");
    expect(textTable(["a", "b"], [["long", "1"], ["x"]])).toBe("a     b\n----  -\nlong  1\nx");
  });
});

describe("the edges mutation testing found", () => {
  it("a rounded number without a decimal point keeps its zeros; the right-hand columns are padded on the left", () => {
    expect(formatNumber(100000.4)).toBe("100000");
    expect(formatNumber(-250000.2)).toBe("-250000");
    expect(
      textTable(
        ["n", "value"],
        [
          ["1", "2.5"],
          ["22", "-10"],
        ],
      ),
    ).toBe("n   value\n--  -----\n1     2.5\n22    -10");
  });
});
