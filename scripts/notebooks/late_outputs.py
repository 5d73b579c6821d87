"""
nbconvert's ExecutePreprocessor, reading a little past each cell's end, for Deno's kernel.

Deno 2.9's kernel can publish a cell's `status: idle` before the cell's last stream or
execute_result messages (both belong to the cell: same parent header). nbconvert, like JupyterLab
and the classic Notebook, stops listening to a cell at its idle status, so those outputs are lost
(docs/kernels.md). rbp-notebook's own outputs do not depend on this: in Deno it awaits every
display before a call returns. This preprocessor keeps reading the cell's messages for `grace`
seconds after idle, adds what arrives to the cell as usual, and lists the positions of those late
outputs in the cell's metadata (`rbp.late_outputs`), so the check in scripts/notebooks/lib.ts can
fail a late output of rbp-notebook's and count Deno's own.

Used as:
  PYTHONPATH=scripts/notebooks jupyter nbconvert --to notebook \
    --NotebookExporter.preprocessors='["late_outputs.LateOutputsPreprocessor"]' \
    --LateOutputsPreprocessor.enabled=True --LateOutputsPreprocessor.kernel_name=rbp-deno ...
"""
import asyncio
from queue import Empty

from nbclient.exceptions import CellExecutionComplete
from nbclient.util import ensure_async
from nbconvert.preprocessors import ExecutePreprocessor
from traitlets import Float


class LateOutputsPreprocessor(ExecutePreprocessor):
    grace = Float(0.4, help="Seconds a cell's messages are still read after its idle status.").tag(config=True)

    async def _async_poll_output_msg(self, parent_msg_id, cell, cell_index):
        await super()._async_poll_output_msg(parent_msg_id, cell, cell_index)
        loop = asyncio.get_event_loop()
        deadline = loop.time() + self.grace
        late = []
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            try:
                msg = await ensure_async(self.kc.iopub_channel.get_msg(timeout=remaining))
            except Empty:
                break
            if msg["parent_header"].get("msg_id") != parent_msg_id or msg["msg_type"] == "status":
                continue
            before = len(cell.outputs)
            try:
                self.process_message(msg, cell, cell_index)
            except CellExecutionComplete:
                pass
            late.extend(range(before, len(cell.outputs)))
        if late:
            cell.metadata.setdefault("rbp", {})["late_outputs"] = late
