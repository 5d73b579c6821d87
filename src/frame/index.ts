/** Data in: danfo DataFrames, row objects, column objects and plain arrays to y, X and theta. */
export { toRequest, type FrameRequest, type FrameSpec, type ThetaData, type ThetaSpec } from "./request.js";
export { FrameError } from "./errors.js";
export {
  isColumnObject,
  isDataFrameLike,
  isPlainArrays,
  isSeriesLike,
  readTable,
  type ColumnObject,
  type DataFrameLike,
  type FrameInput,
  type PlainArrays,
  type RowObject,
  type SeriesLike,
  type Table,
  type TableKind,
} from "./table.js";
export { cellKind, type CellKind } from "./cells.js";
export { outputFrame, frameCsv, writeFrameCsv, type FrameColumns, type FrameForm, type OutCell, type ToFrameOptions } from "./out.js";
export { useDataFrames, sessionDataFrame, type DanfoModule, type DataFrameClass } from "./danfo.js";
export { toKeptRequest } from "./request.js";
export { keptRequest, rowsChanged } from "./kept.js";
