"""The grading run's kernels: taken from a pool, and ready as soon as they answer."""
from __future__ import annotations

import pytest
from jupyter_core.utils import run_sync

from ctx_course.kernels import KernelPool, ReadyKernelClient, kernel_failed_to_start


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
        reply = run_sync(client._async_get_shell_msg)(timeout=30)
        assert reply["parent_header"]["msg_id"] == msg_id and reply["content"]["status"] == "ok"
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
        run_sync(manager.shutdown_kernel)(now=True)


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
