import { brand, RbpBaseError } from "../errors/index.js";

/** A data input the notebook helper cannot turn into a request; names the column and row at fault. */
export class FrameError extends RbpBaseError {
  static {
    brand(this, "FrameError");
  }
  override readonly name = "FrameError";
  /** The column at fault, by name. */
  readonly column: string | undefined;
  /** The row at fault, by label (a frame's index label or the row position). */
  readonly row: string | undefined;

  constructor(message: string, where: { column?: string; row?: string } = {}) {
    super(message, "invalid_data");
    this.column = where.column;
    this.row = where.row;
  }
}
