/**
 * V8's tiering for one short `rbp predict` process when fewer than two cores are free.
 *
 * V8 compiles a hot function with its optimising compiler on a background thread. In a process that
 * lives a fraction of a second most of that work is wasted: on the N = 1,000, K = 10 Grid it costs
 * about 90 ms of CPU (`node --trace-opt`: the Grid's cell evaluation, the walk, the calibration and
 * the insights, each optimised once the Grid is mostly done), against the ~60 ms the main thread
 * computes. Node gives V8 four such threads: unless two cores are free, one for the main thread and
 * one for them, the compiling takes the main thread's own CPU. There a larger interrupt budget
 * (functions must run 8x longer before V8 optimises them) halves the CPU beyond start-up (174 -> 98
 * ms, load 10-13 on 2 cores, medians of 11), and it shortens the whole process even on a quiet
 * machine of two cores: 116.6 -> 111.2 ms on the N = 1,000 file and 93.6 -> 90.5 on the 7 x 5
 * quickstart at load 1.2 (medians of 31, alternating), 118.4 -> 115.7 and 96.5 -> 93.8 at load 0.3
 * (medians of 15, a second between processes). A long Grid still has its hot functions
 * optimised, a little later.
 *
 * Results do not change: the tiers compute the same IEEE doubles.
 */
import { availableParallelism, loadavg } from "node:os";
import { setFlagsFromString } from "node:v8";

/** V8 11's interrupt budget (67,584) x ~8: the budget of a short process on a busy machine. */
export const BUSY_INTERRUPT_BUDGET = 524_288;

/**
 * Whether the machine is busy for a short process: fewer than two cores free, its cores
 * (os.availableParallelism) less its 1-minute load average.
 *
 * @example
 * machineBusy([0.3, 1, 1], 2); // true
 * machineBusy([0.3, 1, 1], 8); // false
 */
export function machineBusy(load: readonly number[] = loadavg(), cores: number = availableParallelism()): boolean {
  return cores - load[0] < 2;
}

/**
 * Sets the busy-machine interrupt budget when the machine is busy and V8 is the one these figures
 * were measured on (11.x, Node 20; another V8 tiers differently and may not know the flag). Call it
 * before the engine's modules load. Returns whether it did.
 *
 * @example
 * if (command === "predict") tuneShortRun();
 */
export function tuneShortRun(busy: boolean = machineBusy()): boolean {
  if (!busy || !process.versions.v8.startsWith("11.")) return false;
  setFlagsFromString(`--interrupt-budget=${BUSY_INTERRUPT_BUDGET}`);
  return true;
}
