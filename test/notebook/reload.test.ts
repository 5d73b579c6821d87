/**
 * A page reload needs no remedy (issue 14): in a real tslab kernel, after the charts of a session
 * carried plotly.js once, a front end that connects again (a reloaded page asks for kernel_info)
 * makes the next chart carry plotly.js again, so the reloaded page draws it.
 *
 * Driven over the wire protocol by Debian's jupyter_client (Python), with the tslab kernelspec the
 * notebook suite writes into the project-local JUPYTER_PATH. Skipped, with the reason printed,
 * without jupyter_client; fails instead when CI is set.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { installKernelspec, KERNEL_NAME, linkPackage, NOTEBOOK_DIR, notebookEnv } from "../../scripts/notebooks/lib.js";
import { IN_CI } from "../ci.js";

const PYTHON = "/usr/bin/python3";
const probe = spawnSync(PYTHON, ["-c", "import jupyter_client"], { encoding: "utf8" });
const available = probe.status === 0;
if (!available && !IN_CI) console.warn(`[test/notebook/reload] SKIPPED: no jupyter_client for ${PYTHON} (scripts/install-notebook-deps.sh)`);

const DRIVER = `
import json, sys, jupyter_client
km, kc = jupyter_client.manager.start_new_kernel(kernel_name=sys.argv[1], cwd=sys.argv[2])
def run(code):
    mid = kc.execute(code)
    outs = []
    while True:
        m = kc.get_iopub_msg(timeout=120)
        if m["parent_header"].get("msg_id") != mid: continue
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle": break
        if m["msg_type"] in ("display_data", "stream", "error"): outs.append(m["content"])
    kc.get_shell_msg(timeout=120)
    return outs
def carries(outs):
    return any("data-rbp-plotly" in str(o.get("data", {}).get("text/html", "")) for o in outs)
result = {}
try:
    run('import * as rbp from "rbp-notebook";\\nconst f = { data: [{ type: "bar", x: [1, 2], y: [3, 4] }], layout: {} };')
    result["first"] = carries(run("rbp.display(f);"))
    result["second"] = carries(run("rbp.display(f);"))
    kc.kernel_info(); kc.get_shell_msg(timeout=60)  # what a reloaded page asks first
    result["after reconnect"] = carries(run("rbp.display(f);"))
    result["next"] = carries(run("rbp.display(f);"))
finally:
    kc.stop_channels(); km.shutdown_kernel(now=True)
print(json.dumps(result))
`;

const dir = mkdtempSync(join(tmpdir(), "rbp-reload-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.runIf(available || IN_CI)("a front end that connects again (page reload) in tslab", () => {
  it("gets plotly.js with the next chart, without calling resetPlotlySession()", () => {
    linkPackage();
    installKernelspec();
    const script = join(dir, "driver.py");
    writeFileSync(script, DRIVER);
    const r = spawnSync(PYTHON, [script, KERNEL_NAME, NOTEBOOK_DIR], { encoding: "utf8", env: notebookEnv(), timeout: 180_000 });
    expect(r.status, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout.trim().split("\n").pop()!) as Record<string, boolean>;
    expect(result).toEqual({ first: true, second: false, "after reconnect": true, next: false });
  }, 200_000);
});
