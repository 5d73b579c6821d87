/**
 * A call never leaves a cell's end to share an event-loop turn with its own last line, in a real
 * plain tslab kernel (the hang of a 200-row experiment after a first Grid, docs/limits.md).
 *
 * tslab 1.0.22 sends its messages with zeromq 6, which sends the 513th message of a socket since
 * its last delayed one on the next turn and refuses (EBUSY, thrown by the send) every other
 * message sent in the same turn: a cell's idle status refused that way leaves the front end
 * waiting forever. The cell below finds that boundary itself (two writes in one turn until the
 * second is refused), then places it on each of a call's first 16 messages in turn: it writes one
 * message per turn up to the boundary minus d, makes the call, and writes one line at once after
 * the call returns. That line is refused exactly when the call returned in the turn of a delayed
 * line of its own (before run.ts waited a turn around its lines: for d equal to the number of
 * messages of the call). A single Grid, a 3-row experiment, a refused request and a 3-step backtest are swept.
 *
 * Driven over the wire protocol by Debian's jupyter_client (Python), with the tslab kernelspec the
 * notebook suite writes into the project-local JUPYTER_PATH. Skipped, with the reason printed,
 * without jupyter_client; fails instead when CI is set.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { installKernelspec, KERNEL_NAME, linkPackage, NOTEBOOK_DIR, notebookEnv } from "../../scripts/notebooks/lib.js";
import { IN_CI } from "../ci.js";

const PYTHON = "/usr/bin/python3";
const probe = spawnSync(PYTHON, ["-c", "import jupyter_client"], { encoding: "utf8" });
const available = probe.status === 0;
if (!available && !IN_CI) console.warn(`[test/notebook/tslab-turns] SKIPPED: no jupyter_client for ${PYTHON} (scripts/install-notebook-deps.sh)`);

const dir = mkdtempSync(join(tmpdir(), "rbp-turns-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
/** Created by the driver when it has read a DRAIN line: the front end has taken what was queued before it. */
const DRAINED = join(dir, "drained");

const CELLS = [
  `import * as rbp from "rbp-notebook";`,
  `import { existsSync } from "fs";
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
let written = 0;
/** One line written at once; false when the kernel refused it. */
function write(text: string): boolean {
  written++;
  try {
    process.stdout.write(text);
    return true;
  } catch {
    return false;
  }
}
/** A turn; every 100 lines a pause, so that the front end keeps up (zeromq drops what a slow subscriber has not taken). */
async function next(): Promise<void> {
  if (written >= 100) {
    written = 0;
    await new Promise((resolve) => setTimeout(resolve, 40));
  } else await turn();
}
/** Two lines in one turn until the second is refused: the first was the delayed one; a turn later the count starts again. */
async function boundary(): Promise<boolean> {
  for (let i = 0; i < 2000; i++) {
    write("a");
    const refused = !write("b");
    await next();
    if (refused) return true;
  }
  return false;
}
const X: number[][] = Array.from({ length: 40 }, (_, i) => [i % 7, (i * 3) % 11, (i * 5) % 13]);
const y: number[] = X.map((r) => r[0] + r[1] - r[2] + (r[0] % 3));
const calls: Array<[string, () => Promise<unknown>]> = [
  ["grid", () => rbp.grid({ y: y, X: X }, {})],
  ["experiment", () => rbp.grid({ y: y, X: X }, { theta: [37, 38, 39] })],
  ["refused", () => rbp.grid({ y: y, X: X }, {}, { max_iter: -1 }).catch(() => "refused")],
  ["backtest", () => rbp.backtest({ y: y, X: X }, {}, { options: { threshold: 0.5 }, start: -3 })],
];
async function sweep(): Promise<object> {
  const refusedAfter: string[] = [];
  let boundaries = 0;
  for (const [name, call] of calls) {
    for (let d = 1; d <= 16; d++) {
      if (!(await boundary())) return { error: "no boundary found" };
      boundaries++;
      for (let i = 0; i < 512 - d; i++) {
        write(".");
        await next();
      }
      await call();
      if (!write("after\\n")) refusedAfter.push(name + " " + d);
      await turn();
    }
  }
  return { boundaries, refusedAfter };
}`,
  // The front end first takes what is queued (zeromq drops what a subscriber lets pile up past 1,000
  // messages, and the sweep sent about 50,000): a DRAIN line every 50 ms until the driver, having
  // read one (so everything queued before it), creates DRAINED (at most 2 minutes, then the outcome
  // is sent anyway). The line is then sent alone in its turn and the cell ends a turn later: the
  // test's own output never meets the boundary either.
  `const outcome = await sweep();
for (let i = 0; i < 2400 && !existsSync(${JSON.stringify(DRAINED)}); i++) {
  write("DRAIN\\n");
  await new Promise((resolve) => setTimeout(resolve, 50));
}
console.log("OUTCOME " + JSON.stringify(outcome));
await turn();`,
];

const DRIVER = `
import json, sys, jupyter_client
# tslab 1.0.22 may die at start when a kernel_info request meets its sockets' bind (EBUSY): start again.
for attempt in range(3):
    try:
        km, kc = jupyter_client.manager.start_new_kernel(kernel_name=sys.argv[1], cwd=sys.argv[2], startup_timeout=90)
        break
    except RuntimeError:
        if attempt == 2: raise
cells = json.loads(sys.argv[3])
result = {"cells": []}
try:
    for code in cells:
        mid = kc.execute(code)
        errors, outcome = [], None
        while True:
            try:
                m = kc.get_iopub_msg(timeout=120)
            except Exception:
                result["hung"] = True
                break
            if m["parent_header"].get("msg_id") != mid: continue
            kind = m["msg_type"]
            if kind == "status" and m["content"]["execution_state"] == "idle": break
            if kind == "error": errors.append(m["content"]["evalue"])
            for line in (m["content"]["text"].splitlines() if kind == "stream" else []):
                if line.startswith("OUTCOME "): outcome = json.loads(line[8:])
                if line == "DRAIN": open(sys.argv[4], "w").close()
            if kind == "stream" and m["content"]["name"] == "stderr": errors.append(m["content"]["text"])
        result["cells"].append({"errors": errors, "outcome": outcome})
        if result.get("hung"): break
finally:
    kc.stop_channels(); km.shutdown_kernel(now=True)
print(json.dumps(result))
`;

/** A child process to its end (asynchronously: the worker keeps talking to vitest meanwhile). */
function run(cmd: string, args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { env: notebookEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (s: string) => (stdout += s));
    child.stderr.setEncoding("utf8").on("data", (s: string) => (stderr += s));
    child.on("error", reject);
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

describe.runIf(available || IN_CI)("a call's last line and the cell's end in plain tslab", () => {
  it("never share a turn: whatever the cell sends after a call reaches the front end, and the cell ends", async () => {
    linkPackage();
    installKernelspec();
    const script = join(dir, "driver.py");
    writeFileSync(script, DRIVER);
    const r = await run(PYTHON, [script, KERNEL_NAME, NOTEBOOK_DIR, JSON.stringify(CELLS), DRAINED]);
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout.trim().split("\n").pop()!) as { hung?: boolean; cells: Array<{ errors: string[]; outcome: unknown }> };
    expect(result.hung, JSON.stringify(result)).toBeUndefined();
    expect(result.cells.map((c) => c.errors)).toEqual([[], [], []]);
    // Every placement found the boundary (the mechanism is there to be met), and no line after a call was refused.
    expect(result.cells[2].outcome).toEqual({ boundaries: 64, refusedAfter: [] });
  }, 660_000);
});
