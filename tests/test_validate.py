"""nbgrader's validator passes every model solution and fails every untouched stub."""
from __future__ import annotations

import pytest
from nbgrader.validator import Validator
from traitlets.config import Config

from ctx_course.sandbox.kernels import CLIENT_CLASS, QuickStopKernelManager

from conftest import LESSONS, REPO, SOLUTIONS, notebooks

pytestmark = pytest.mark.heavy


def validator(invert: bool) -> Validator:
    config = Config()
    config.Validator.invert = invert
    config.Execute.timeout = 120
    # How a kernel is found ready and stopped does not change a verdict: the grader's quick ways.
    config.Execute.shutdown_kernel = "immediate"
    config.Execute.kernel_manager_class = QuickStopKernelManager
    config.AsyncKernelManager.client_class = CLIENT_CLASS
    return Validator(config=config)


@pytest.mark.parametrize("path", notebooks(SOLUTIONS), ids=lambda p: p.parent.name)
def test_solution_passes_validation(path):
    """Every autograded check of a source notebook passes with the model solution in place."""
    result = validator(invert=False).validate(str(path))
    assert result == {}, f"{path.relative_to(REPO)}: {result}"


@pytest.mark.parametrize("path", notebooks(LESSONS), ids=lambda p: p.parent.name)
def test_untouched_stub_fails_validation(path):
    """In the released notebook, no autograded check passes before the learner writes any code."""
    result = validator(invert=True).validate(str(path))
    assert "changed" not in result, f"{path.relative_to(REPO)}: read-only cells differ from their checksums"
    assert "passed" not in result, f"{path.relative_to(REPO)}: checks pass on the bare stubs: {result['passed']}"
