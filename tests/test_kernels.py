"""The grading run's kernels: taken from a pool, ready as soon as they answer, stopped at once."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from jupyter_core.utils import run_sync

from ctx_course.grading.diagnosis import kernel_failed_to_start
from ctx_course.sandbox.kernels import KernelPool, ReadyKernelClient, stop_kernel


@pytest.fixture()
def pool(tmp_path):
    pool = KernelPool(tmp_path, ahead=False)
    yield pool
    pool.close()


def _client(manager):
    client = manager.client()
    client.start_channels()
    return client


def test_a_ready_kernel_runs_the_first_cell_and_every_output_arrives(pool):
    """The pool's kernels use ReadyKernelClient; once ready, a cell's output and its reply arrive."""
    manager = pool.take()
    client = _client(manager)
    try:
        assert isinstance(client, ReadyKernelClient)
        run_sync(client.wait_for_ready)(timeout=60)
        msg_id = client.execute("print('第一格', 6 * 7)")
        # A late duplicate kernel_info_reply from the readiness probe may come first; nbclient, like
        # this loop, matches replies to their request.
        reply = run_sync(client._async_get_shell_msg)(timeout=30)
        while reply["parent_header"].get("msg_id") != msg_id:
            assert reply["msg_type"] == "kernel_info_reply", reply["msg_type"]
            reply = run_sync(client._async_get_shell_msg)(timeout=30)
        assert reply["content"]["status"] == "ok"
        texts = []
        while True:
            msg = run_sync(client._async_get_iopub_msg)(timeout=30)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                texts.append(msg["content"]["text"])
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        assert "".join(texts) == "第一格 42\n"
    finally:
        client.stop_channels()
        stop_kernel(manager)


def test_a_kernel_that_died_is_reported_as_one_that_failed_to_start(pool):
    """Waiting on a dead kernel raises the error the grading run retries on."""
    manager = pool.take()
    client = _client(manager)
    try:
        manager.provisioner.process.kill()
        manager.provisioner.process.wait()
        with pytest.raises(RuntimeError) as raised:
            run_sync(client.wait_for_ready)(timeout=60)
        assert kernel_failed_to_start({"success": False, "log": str(raised.value)})
    finally:
        client.stop_channels()
        run_sync(manager.cleanup_resources)()
    assert not manager._own_folder.exists(), "cleaning up a dead kernel leaves its socket folder"


def _run(client, code: str) -> dict:
    """Execute ``code`` and return its execute_reply content."""
    msg_id = client.execute(code)
    while True:
        reply = run_sync(client._async_get_shell_msg)(timeout=30)
        if reply["parent_header"]["msg_id"] == msg_id:
            return reply["content"]


def _alive(pid: int) -> bool:
    """Whether a process with this id still runs (a zombie counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def test_stop_kernel_ends_the_kernel_and_what_it_started_and_frees_its_files(pool, tmp_path):
    """The kernel and a process it started are gone once stop_kernel returns; so is its connection file."""
    manager = pool.take()
    client = _client(manager)
    child_file = tmp_path / "child.pid"
    try:
        run_sync(client.wait_for_ready)(timeout=60)
        reply = _run(client, "import subprocess\n"
                             "child = subprocess.Popen(['sleep', '300'])\n"
                             f"open({str(child_file)!r}, 'w').write(str(child.pid))")
        assert reply["status"] == "ok", reply
    finally:
        client.stop_channels()
    kernel_pid, child_pid = manager.provisioner.process.pid, int(child_file.read_text())
    connection_file = Path(manager.connection_file)
    assert _alive(kernel_pid) and _alive(child_pid) and connection_file.exists()
    stop_kernel(manager)
    assert not _alive(kernel_pid), "the kernel process still runs"
    deadline = time.monotonic() + 5  # the child was killed with its process group; init reaps it
    while _alive(child_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child_pid), "a process the kernel started still runs"
    assert not connection_file.exists()
    assert manager.provisioner is None or manager.provisioner.process is None


def test_stop_kernel_on_a_kernel_that_already_died_returns_quietly(pool):
    """A kernel killed from outside (out of memory, say) is stopped without an error, twice over."""
    manager = pool.take()
    manager.provisioner.process.kill()
    manager.provisioner.process.wait()
    stop_kernel(manager)
    stop_kernel(manager)
    assert not Path(manager.connection_file).exists()
