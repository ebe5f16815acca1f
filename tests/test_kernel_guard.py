"""The kernel guard in a real kernel: what ``reset`` stops and what it leaves running before a graded cell."""
from __future__ import annotations

import queue
import time

import pytest
from jupyter_client.manager import start_new_kernel

from ctx_course.sandbox.execute import _GUARD_INSTALL

CELL_LIMIT = 20  # seconds; every cell here takes well under one
# The visible checks call the learner's function under a profile function, as this cell does.
PROFILED_CALL = ("import sys\ndef f():\n    return 1\nsys.setprofile(lambda *a: None)\nf()\nsys.setprofile(None)\n"
                 "print('done')")


@pytest.fixture()
def kernel():
    manager, client = start_new_kernel(kernel_name="python3")
    try:
        yield manager, client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def _run(kernel, code: str, **options) -> dict:
    """Run ``code``; return {"finished": bool, "printed": str, "error": ename or None}."""
    manager, client = kernel
    msg_id = client.execute(code, **options)
    printed, error = [], None
    while True:
        try:
            message = client.get_iopub_msg(timeout=CELL_LIMIT)
        except queue.Empty:
            manager.interrupt_kernel()
            return {"finished": False, "printed": "".join(printed), "error": error}
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = message["msg_type"], message["content"]
        if kind == "stream":
            printed.append(content["text"])
        elif kind == "error":
            error = content["ename"]
        elif kind == "status" and content["execution_state"] == "idle":
            return {"finished": True, "printed": "".join(printed), "error": error}


def _reset(kernel) -> None:
    _run(kernel, "", silent=True, store_history=False,
         user_expressions={"guard": "__import__('sys').modules['_ctx_guard'].reset('t')"})


def test_a_cell_under_a_profiler_runs_after_a_figure_and_a_reset(kernel):
    """A figure (pyzmq then starts its collector thread) followed by a reset does not hang a profiled call."""
    _run(kernel, _GUARD_INSTALL)
    _run(kernel, "%matplotlib inline\nfrom ctx_reference import plots\ndisplay(plots.plot_recall_vs_length())")
    _reset(kernel)
    assert _run(kernel, PROFILED_CALL) == {"finished": True, "printed": "done\n", "error": None}


def test_a_thread_started_by_a_cell_is_still_stopped(kernel):
    """A thread a cell starts with a target of its own is stopped by the reset."""
    _run(kernel, _GUARD_INSTALL)
    _run(kernel, "import threading, time\n"
                 "def again():\n    while True:\n        time.sleep(0.01)\n"
                 "t = threading.Thread(target=again, daemon=True)\nt.start()")
    _reset(kernel)
    outcome = _run(kernel, "t.join(5)\nprint(t.is_alive())")
    assert outcome["printed"] == "False\n"



def test_a_cell_under_a_profiler_runs_after_a_waiting_thread_is_stopped(kernel):
    """An idle worker thread a cell started (waiting in C when stopped) does not hang a profiled call."""
    _run(kernel, _GUARD_INSTALL)
    _run(kernel, "from concurrent.futures import ThreadPoolExecutor\npool = ThreadPoolExecutor(2)\n"
                 "print(pool.submit(abs, -1).result())")
    _reset(kernel)
    assert _run(kernel, PROFILED_CALL) == {"finished": True, "printed": "done\n", "error": None}


def test_a_waiting_thread_is_stopped_when_it_wakes(kernel):
    """A thread waiting when the reset comes ends as it wakes, before running its next line."""
    _run(kernel, _GUARD_INSTALL)
    _run(kernel, "import threading\nwake, ran = threading.Event(), []\n"
                 "def later():\n    wake.wait()\n    ran.append('ran')\n"
                 "t = threading.Thread(target=later, daemon=True)\nt.start()")
    _reset(kernel)
    outcome = _run(kernel, PROFILED_CALL + "\nwake.set()\nt.join(5)\nprint(t.is_alive(), ran)")
    assert outcome["printed"] == "done\nFalse []\n"


def test_a_printing_thread_started_with_thread_is_stopped_by_a_reset(kernel):
    """A _thread thread that prints (Python then lists it as a dummy thread, which cannot be
    joined) is stopped by a reset, and the next cell runs and prints normally."""
    _run(kernel, _GUARD_INSTALL)
    _run(kernel, "import _thread, time\n"
                 "def chatter():\n    while True:\n        print('tick', flush=True)\n        time.sleep(0.01)\n"
                 "_thread.start_new_thread(chatter, ())\ntime.sleep(0.1)")
    _reset(kernel)
    time.sleep(0.2)
    assert _run(kernel, "print('after')")["printed"].endswith("after\n")
