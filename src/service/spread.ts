/**
 * The shared counter of one Grid spread over several pool workers (core.ts `runSpread`,
 * worker.ts "lead" and "draw" parts): one Int32 slot per field below.
 *
 * The pool thread counts a helper as started before its task reaches a worker, and as reported
 * once it has put the helper's partials on the lead's port (or the helper ended without any). The
 * lead, once no chunk is left to draw, waits until every started helper is reported: a helper
 * that starts later draws nothing, since the next chunk is then past the last.
 */
export const SPREAD = {
  /** The next chunk to draw. */
  next: 0,
  /** 1: helpers stop after their current chunk (the service wants a worker back, or the lead is done). */
  stop: 1,
  /** Helpers handed to a worker. */
  started: 2,
  /** Helpers whose partials are on the lead's port, or that ended without any. */
  reported: 3,
  /** 1: a helper failed (the job fails with its reason). */
  failed: 4,
} as const;

/** Int32 slots of a spread Grid's counter. */
export const SPREAD_SLOTS = 5;
