import { expect } from "vitest";
import { FrameError } from "../../src/frame/index.js";

/** Runs f, expects a FrameError and returns it. */
export function catchFrameError(f: () => unknown): FrameError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(FrameError);
    return e as FrameError;
  }
  throw new Error("expected a FrameError");
}
