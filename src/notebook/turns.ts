/** Waiting for the event loop's next turn, so that a kernel's messages do not share a turn (why: below). */
/**
 * One turn of the event loop, around the lines a call shows. Plain tslab (1.0.22, on zeromq 6)
 * sends a kernel's 513th message since its last delayed one on the next turn, and throws away
 * (EBUSY) every message sent after it in the same turn: the rest of a cell's output, and at the
 * cell's end its idle status, so that the front end waits for the cell forever. A call's first
 * and final lines (progress, error box) are each sent first in a turn, and the call returns a
 * turn later: whatever a cell sends after it cannot share a turn with a delayed line of the call.
 * (An in-process call otherwise runs from its submission to its result in one turn.) The
 * progress line's `begin` and `end` (progress.ts) do this for grid, maxfit, psr and backtest; run.ts
 * also around the error box. (`end` waits for no turn in the rbp kernel: its sends are queued one
 * after another, kernel/protocol/channels.ts.) The regression test is test/notebook/tslab-turns.test.ts, in a real
 * tslab kernel.
 *
 * @example
 * await nextTurn();
 * progress.finish("completed");
 */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
