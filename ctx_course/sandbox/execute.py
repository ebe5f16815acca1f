"""nbgrader's Execute running each notebook in a kernel of a KernelPool, with the kernel guard.

Covers: ``PrelaunchedExecute``, which takes a kernel launched ahead from the pool, runs the
notebook in a scratch copy of the submission (in a sandbox) or in its folder, installs the kernel
guard (``kernel_guard.py``, sent as text) before the first cell and puts the kernel's hooks back
before every graded cell, scoring the cell as failed when that does not answer as expected.

Leaves out: launching and stopping kernels (``kernels.py``), what the sandbox lets a kernel see
(``policy.py``), which notebooks run (``ctx_course/grading/grader.py``).
"""
from __future__ import annotations

import os
import secrets
import shutil
from pathlib import Path

import nbformat
from jupyter_core.utils import run_sync
from nbgrader.preprocessors import Execute
from traitlets import Any

from ctx_reference.i18n import N_, _, using

from ..cells import is_graded
from ..editions.translate import submitted_edition
from .kernels import stop_kernel

# The kernel-side code that puts IPython's hooks back before each graded cell (sent as text).
GUARD_SOURCE = Path(__file__).with_name("kernel_guard.py").read_text(encoding="utf-8")
# What a graded cell shows when the kernel did not let its hooks be put back (scored 0); the
# evalue in the notebook's language (``_()`` where it is shown).
GUARD_FAILED = {
    "ename": "GradingGuardError",
    "evalue": N_("评分前无法还原内核的检查环境（之前的代码改动了 IPython 或内置函数），这一格按未通过计分"),
}


class PrelaunchedExecute(Execute):
    """nbgrader's Execute, running each notebook in a kernel taken from a KernelPool.

    The kernel was started in the pool's folder; before the first cell it moves to the
    notebook's folder, where nbgrader would have started it, or, in a sandbox, to a scratch
    copy of it (the grader copies nothing back: nbgrader needs only the executed notebook), and
    takes the notebook's edition as its language (``CTX_LANG``).
    Before the first cell it also takes a snapshot of the kernel (``kernel_guard.install``);
    before each graded cell it puts the kernel back (``kernel_guard.reset``) and scores the
    cell as failed when that does not answer as expected. Without a pool (nbgrader's own
    commands), this is nbgrader's Execute.
    """

    pool = Any(None, allow_none=True, help="a KernelPool shared by a grading run").tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        kernel_name = nb.metadata.get("kernelspec", {}).get("name", self.pool.kernel_name if self.pool else None)
        if self.pool is None or km is not None or kernel_name != self.pool.kernel_name:
            return super().preprocess(nb, resources, km=km)
        folder = os.path.abspath((resources or {}).get("metadata", {}).get("path") or ".")
        manager = self.pool.take()
        self.pool.current = manager
        self.pool.launch_next()
        kernel_folder = getattr(manager, "folder", None)
        if kernel_folder is not None:
            scratch = Path(kernel_folder) / "work"
            shutil.copytree(folder, scratch, symlinks=True, dirs_exist_ok=True)
            folder = str(scratch)
        self._guard_token = secrets.token_hex(8)

        # The kernel reads the checks' messages in the notebook's edition (ctx_reference.i18n).
        language = self._language = submitted_edition(nb)

        async def enter_folder(notebook):
            code = (f"__import__('os').chdir({folder!r})\n__import__('os').environ['CTX_LANG'] = {language!r}\n"
                    f"{_GUARD_INSTALL}")
            reply_to = self.kc.execute(code, silent=True, store_history=False)
            await self.async_wait_for_reply(reply_to)

        self.on_notebook_start = enter_folder
        try:
            return super().preprocess(nb, resources, km=manager)
        finally:
            self.on_notebook_start = None
            self._guard_token = None
            self._language = None
            self.pool.current = None
            if self.kc is not None:
                self.kc.stop_channels()
                self.kc = None
            stop_kernel(manager)
            self.km = None

    async def async_execute_cell(self, cell, cell_index, execution_count=None, store_history=True):
        graded = is_graded(cell)
        guarded = True
        if graded and getattr(self, "_guard_token", None) and self.kc is not None:
            guarded = await self._reset_kernel()
        cell = await super().async_execute_cell(cell, cell_index, execution_count, store_history)
        if not guarded:
            # this coroutine may run in a thread of its own: the language is the one the notebook names
            with using(getattr(self, "_language", None) or "zh_CN"):
                failed = dict(GUARD_FAILED, evalue=_(GUARD_FAILED["evalue"]))
            traceback = [f"{failed['ename']}: {failed['evalue']}"]
            cell.outputs.append(nbformat.v4.new_output("error", traceback=traceback, **failed))
        return cell

    # nbconvert calls the synchronous wrapper, which nbclient made of its own coroutine.
    execute_cell = run_sync(async_execute_cell)

    async def _reset_kernel(self) -> bool:
        """Put the kernel's hooks back; return whether it answered with this notebook's token."""
        expression = f"__import__('sys').modules['_ctx_guard'].reset({self._guard_token!r})"
        msg_id = self.kc.execute("", silent=True, store_history=False, user_expressions={"guard": expression})
        try:
            reply = await self.async_wait_for_reply(msg_id)
        except Exception:
            return False
        answer = (reply or {}).get("content", {}).get("user_expressions", {}).get("guard", {})
        expected = repr(f"ok:{self._guard_token}")
        return answer.get("status") == "ok" and answer.get("data", {}).get("text/plain") == expected


# Run at the start of every notebook: load kernel_guard.py as the module _ctx_guard and snapshot the kernel.
_GUARD_INSTALL = (
    "import sys as _s, types as _t\n"
    "_m = _t.ModuleType('_ctx_guard')\n"
    f"exec(compile({GUARD_SOURCE!r}, '<grading guard>', 'exec'), _m.__dict__)\n"
    "_s.modules['_ctx_guard'] = _m\n"
    "_m.install()\n"
    "del _s, _t, _m\n"
)
