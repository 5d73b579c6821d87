/** Runs cells through the kernel's executor in-process (real TypeScript, real vm), as the shell would. */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { createExecutor, type KernelExecutor } from "../../src/kernel/execute.js";
import type { CellOutput, ExecuteContext, ExecuteOutcome } from "../../src/kernel/contract.js";

/** The folder of the corpus' local modules (util.js, util.d.ts, data.json). */
export const LANG_FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "fixtures", "lang");

export interface CellRun {
  outcome: ExecuteOutcome;
  stdout: string;
  stderr: string;
  /** Stream events in order. */
  events: Array<[name: "stdout" | "stderr", text: string]>;
}

export class Session {
  readonly executor: KernelExecutor;
  private count = 0;

  constructor(cwd = LANG_FIXTURES) {
    this.executor = createExecutor({ cwd });
  }

  /** Runs a cell; `input` answers input(). */
  async run(code: string, options: Partial<ExecuteContext> & { answer?: string } = {}): Promise<CellRun> {
    const events: CellRun["events"] = [];
    const output: CellOutput = {
      stream: (name, text) => events.push([name, text]),
      display: () => undefined,
      clearOutput: () => undefined,
      input: (prompt) => (options.answer === undefined ? Promise.reject(new Error("no stdin")) : Promise.resolve(`${options.answer} (${prompt})`)),
    };
    const outcome = await this.executor.execute(code, {
      executionCount: ++this.count,
      output,
      signal: options.signal ?? new AbortController().signal,
      sourcePosition: options.sourcePosition,
    });
    const text = (name: "stdout" | "stderr") =>
      events
        .filter((e) => e[0] === name)
        .map((e) => e[1])
        .join("");
    return { outcome, stdout: text("stdout"), stderr: text("stderr"), events };
  }

  /** Runs a cell that must succeed and returns its last value (throws with the error text otherwise). */
  async value(code: string): Promise<unknown> {
    const { outcome } = await this.run(code);
    if (outcome.status !== "ok") throw new Error(`cell failed: ${JSON.stringify(outcome)}`);
    return outcome.value?.value;
  }

  dispose(): Promise<void> {
    return this.executor.dispose();
  }
}
