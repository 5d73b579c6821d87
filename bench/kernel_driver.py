"""Runs cells in a Jupyter kernel named by its kernelspec, for `npm run bench:notebook`.

Reads {"kernel": name, "cwd": dir, "cells": [code, ...], "timeout": seconds} as JSON on stdin,
starts the kernel with jupyter_client (the kernelspec is found on JUPYTER_PATH), and sends each
cell as a plain execute_request. Prints one JSON line per cell on stdout: the wall time from the
request to the kernel's idle status, the cell's stdout and stderr, its execute_result's text/plain, how many
display_data / update_display_data messages it sent, the `BENCH ` lines it sent as display data (Deno's
kernel loses plain stdout at random), and its error (ename, evalue) if any. Uses
only execute_request, stream, display_data, update_display_data, execute_result, error and status:
any kernel that speaks the protocol can be measured. Debian's /usr/bin/python3 (jupyter-client).
"""

import json
import sys
import time

from jupyter_client.manager import KernelManager


def main():
    job = json.load(sys.stdin)
    timeout = float(job.get("timeout", 600))
    started = time.perf_counter()
    km = KernelManager(kernel_name=job["kernel"])
    km.start_kernel(cwd=job["cwd"])
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=timeout)
        print(json.dumps({"ready_ms": (time.perf_counter() - started) * 1000}), flush=True)
        for index, code in enumerate(job["cells"]):
            sent = time.perf_counter()
            msg_id = kc.execute(code, store_history=True, allow_stdin=False)
            out = {"cell": index, "stdout": "", "stderr": "", "bench": "", "result": None, "displays": 0, "error": None}
            while True:
                msg = kc.get_iopub_msg(timeout=timeout)
                if msg["parent_header"].get("msg_id") != msg_id:
                    continue
                kind = msg["msg_type"]
                content = msg["content"]
                if kind == "stream":
                    out[content.get("name") == "stderr" and "stderr" or "stdout"] += content.get("text", "")
                elif kind == "execute_result":
                    out["result"] = content.get("data", {}).get("text/plain")
                elif kind in ("display_data", "update_display_data"):
                    out["displays"] += 1
                    text = content.get("data", {}).get("text/plain", "")
                    if kind == "display_data" and isinstance(text, str) and text.startswith("BENCH "):
                        out["bench"] += text + "\n"
                elif kind == "error":
                    out["error"] = {"ename": content.get("ename"), "evalue": content.get("evalue")}
                elif kind == "status" and content.get("execution_state") == "idle":
                    break
            out["ms"] = (time.perf_counter() - sent) * 1000
            print(json.dumps(out), flush=True)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)


if __name__ == "__main__":
    main()
