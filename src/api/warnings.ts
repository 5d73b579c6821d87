/**
 * Warnings about a request as data (issue 26, item 5): what was ignored or adjusted, by `code`,
 * with the `key` the caller wrote and the `reason`, rendered to text only for people
 * (`warningText`: the v3 `warnings` strings, a result's `warnings`, the CLI's notes). The v2
 * receipt's `ignored_options` are the keys themselves, never read back from the text.
 *
 * | code | key | text |
 * | --- | --- | --- |
 * | ignored_option | the option key | `ignored option "<key>" (<reason>)` |
 * | ignored_field | the top-level key (v3) | `ignored field "<key>" (<reason>)` |
 * | ignored_value | the option key; `value` the item | `ignored retain key "<value>" in "<key>" (<reason>)` |
 * | adjusted_option | the option key | the reason, a sentence |
 * | more_warnings | - | `... and N more warnings like these (not listed)` |
 *
 * Names are quoted in the text to 64 characters (`quoteName`); in the data they are whole (a name
 * is at most MAX_NAME_CHARS long, refused beyond).
 */

type WarningCode = "ignored_option" | "ignored_field" | "ignored_value" | "adjusted_option" | "more_warnings";

export interface RequestWarning {
  code: WarningCode;
  /** The key the caller wrote (absent for more_warnings). */
  key?: string;
  /** ignored_value: the item of the key's value that was ignored. */
  value?: string;
  /** Why, in words (adjusted_option: the whole sentence). */
  reason: string;
}

/** Warnings a receipt lists at most; the rest are counted in one last entry. */
export const MAX_WARNINGS = 20;

/** Longest name a warning quotes whole (issue 11: a 5 MB option name was copied into every job). */
export const QUOTED_NAME_CHARS = 64;

/**
 * A name the caller sent, as a warning quotes it: at most QUOTED_NAME_CHARS characters, the rest
 * replaced by "...(N characters)"; double quotes and control characters escaped, so the name
 * cannot end the quotation it stands in.
 *
 * @example
 * quoteName("x".repeat(1000)); // "xxxx...x...(1000 characters)" (64 x's)
 */
export function quoteName(name: string): string {
  const short = name.length > QUOTED_NAME_CHARS ? name.slice(0, QUOTED_NAME_CHARS) : name;
  const escaped = JSON.stringify(short).slice(1, -1);
  return name.length > QUOTED_NAME_CHARS ? `${escaped}...(${name.length} characters)` : escaped;
}

/**
 * The text of a warning, for people.
 *
 * @example
 * warningText({ code: "ignored_option", key: "foo", reason: "not a grid option" }); // 'ignored option "foo" (not a grid option)'
 */
export function warningText(w: RequestWarning): string {
  switch (w.code) {
    case "ignored_option":
      return `ignored option "${quoteName(w.key ?? "")}" (${w.reason})`;
    case "ignored_field":
      return `ignored field "${quoteName(w.key ?? "")}" (${w.reason})`;
    case "ignored_value":
      return `ignored retain key "${quoteName(w.value ?? "")}" in "${quoteName(w.key ?? "")}" (${w.reason})`;
    case "adjusted_option":
    case "more_warnings":
      return w.reason;
  }
}

/**
 * The first MAX_WARNINGS warnings, then one `more_warnings` entry counting the rest.
 *
 * @example
 * capWarnings(list).map(warningText); // the receipt's `warnings`
 */
export function capWarnings(list: readonly RequestWarning[]): RequestWarning[] {
  if (list.length <= MAX_WARNINGS) return [...list];
  const more = list.length - MAX_WARNINGS;
  return [...list.slice(0, MAX_WARNINGS), { code: "more_warnings", reason: `... and ${more} more warning${more === 1 ? "" : "s"} like these (not listed)` }];
}
