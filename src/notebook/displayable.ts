/**
 * Tables and charts returned by prediction methods are plain values (an HtmlTable `{ html, text }`,
 * a plotly Figure `{ data, layout, config }`) that also display themselves: a non-enumerable
 * `Symbol.for("Jupyter.display")` (Deno's kernel shows a cell's last value through it, and
 * `display()` reads it) and a short `util.inspect` text (what tslab prints for a cell's last
 * value), so neither JSON nor Object.keys sees anything but the data.
 */
import {
  defineDisplay,
  figureBundle,
  figureTitle,
  tableBundle,
  traceTypes,
  type OwnDisplayable,
  type Figure,
  type HtmlTable,
  type MimeBundle,
} from "../display/index.js";

const INSPECT = Symbol.for("nodejs.util.inspect.custom");

/** A plotly figure that displays itself. */
export type DisplayFigure = Figure & OwnDisplayable;
/** An HTML table that displays itself. */
export type DisplayTable = HtmlTable & OwnDisplayable;

function decorate<T extends object>(value: T, bundle: () => MimeBundle, text: () => string): T & OwnDisplayable {
  Object.defineProperty(value, INSPECT, { value: text, enumerable: false, configurable: true });
  return defineDisplay(value, bundle);
}

export function displayFigure(figure: Figure): DisplayFigure {
  return decorate(
    figure,
    () => figureBundle(figure),
    () => `<Figure: ${figureTitle(figure)} (${[...new Set(traceTypes(figure))].join(", ")})> display() draws it`,
  );
}

export function displayTable(table: HtmlTable): DisplayTable {
  return decorate(
    table,
    () => tableBundle(table),
    () => table.text,
  );
}
