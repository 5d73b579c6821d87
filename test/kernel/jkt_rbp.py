"""Jupyter's own kernel test suite (jupyter_kernel_test 0.4.5, Debian's python3-jupyter-kernel-test)
against the rbp kernel, with TypeScript samples for every test the suite has.

Run by test/kernel/jupyter-kernel-test.test.ts:
    JUPYTER_PATH=<dir with kernels/rbp> /usr/bin/python3 test/kernel/jkt_rbp.py
in a folder inside the package, so a cell's `import ... from "rbp-notebook"` finds the package itself.
Exits 1 on any failure, error or skip (a skipped test is a test that did not run).
"""

import os
import sys
import unittest

import jupyter_kernel_test


class RbpKernelTests(jupyter_kernel_test.KernelTests):
    kernel_name = os.environ.get("RBP_JKT_KERNEL", "rbp")

    language_name = "typescript"
    file_extension = ".ts"

    code_hello_world = 'console.log("hello, world");'
    code_stderr = 'console.error("to stderr");'

    completion_samples = [
        {"text": "Math.ab", "matches": {"abs"}},
        {"text": "const longVariableName = 1;\nlongVariableNa", "matches": {"longVariableName"}},
    ]

    complete_code_samples = ["1 + 1", "const a = 1;", "function f() {\n  return 1;\n}", "%time 1 + 1"]
    incomplete_code_samples = ["function f() {", "const xs = [1,", "if (true) {\n  console.log(1);"]
    invalid_code_samples = ["const = 1;", "1 +* 2", "}"]

    code_page_something = "Math.max?"

    code_generate_error = 'throw new Error("boom");'

    code_execute_result = [
        {"code": "1 + 2", "result": "3"},
        {"code": '"a" + "b"', "result": "'ab'"},
        {"code": "[1, 2, 3].map((x) => x * 2)", "result": "[ 2, 4, 6 ]"},
        {
            "code": '({ [Symbol.for("Jupyter.display")]: () => ({ "text/html": "<b>rich</b>" }) })',
            "mime": "text/html",
            "result": "<b>rich</b>",
        },
    ]

    code_display_data = [
        {
            "code": 'import { display } from "rbp-notebook";\ndisplay({ "text/plain": "shown", "text/html": "<i>shown</i>" });',
            "mime": "text/html",
        },
        {
            "code": '(globalThis as any)[Symbol.for("rbp.kernel")].display({ "text/plain": "hook" });',
            "mime": "text/plain",
        },
    ]

    # Matches exactly one of code_execute_result's inputs.
    code_history_pattern = "1 +*"
    supported_history_operations = ("tail", "range", "search")

    code_inspect_sample = "Math.max"

    code_clear_output = 'console.log("before");\n(globalThis as any)[Symbol.for("rbp.kernel")].clearOutput(true);'


if __name__ == "__main__":
    program = unittest.main(exit=False, verbosity=2)
    result = program.result
    for test, reason in result.skipped:
        print(f"SKIPPED: {test}: {reason}", file=sys.stderr)
    sys.exit(0 if result.wasSuccessful() and not result.skipped else 1)
