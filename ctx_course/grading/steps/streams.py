"""One output per run of text a cell printed: consecutive stream outputs of one name merged.

A kernel sends what a cell prints in as many messages as it flushed its buffer, and when it
flushes depends on the machine's load: ``print("done")`` is one stream output on a quiet machine
and two (``"done"``, then ``"\\n"``) on a busy one. nbclient keeps one output per message, so the
autograded notebook and the feedback page of the same submission would differ from run to run.
Here consecutive stream outputs with the same name (``stdout``, ``stderr``) become one, whose
text is theirs joined in order; nothing is reordered, so a stderr output between two stdout
outputs keeps them apart (nbclient's ``coalesce_streams`` gathers every stream of a name into
its first output and moves stdout before stderr, which changes what the learner's code did).

Covers: ``merge_streams`` (the pure function, on a list of outputs) and ``MergeStreams`` (the
preprocessor that applies it to every code cell), placed right after the kernel ran in the
autograde steps and first in the feedback steps (a notebook autograded before this step existed).

Leaves out: carriage returns and backspaces inside the text (kept as printed), the order in which
a kernel sends stdout and stderr (kept as received), outputs that are not streams.

Vocabulary: a *stream output* is an output of type ``stream`` with a ``name`` and a ``text``
(a string, or a list of strings in a notebook file).
"""
from __future__ import annotations

import copy
from collections.abc import Iterable

from nbgrader.preprocessors import NbGraderPreprocessor


def _text(output) -> str:
    text = output.get("text", "")
    return "".join(text) if isinstance(text, list) else str(text)


def merge_streams(outputs: Iterable) -> list:
    """Return ``outputs`` with every run of consecutive stream outputs of one name merged into the first.

    The outputs given are not changed: a merged output is a copy of the first of its run, with
    the run's text joined.

    >>> out = merge_streams([
    ...     {"output_type": "stream", "name": "stdout", "text": "✓ done"},
    ...     {"output_type": "stream", "name": "stdout", "text": "\\n"},
    ...     {"output_type": "stream", "name": "stderr", "text": "warning\\n"},
    ...     {"output_type": "stream", "name": "stdout", "text": ["a\\n"]},
    ...     {"output_type": "stream", "name": "stdout", "text": "b\\n"},
    ... ])
    >>> [(o["name"], o["text"]) for o in out]
    [('stdout', '✓ done\\n'), ('stderr', 'warning\\n'), ('stdout', 'a\\nb\\n')]
    """
    merged: list = []
    copied: set[int] = set()  # the places in ``merged`` that hold a copy of this function's own
    for output in outputs:
        last = merged[-1] if merged else None
        if (
            last is not None
            and output.get("output_type") == "stream"
            and last.get("output_type") == "stream"
            and last.get("name") == output.get("name")
        ):
            if len(merged) - 1 not in copied:  # still the caller's output: copy it before changing it
                last = merged[-1] = copy.deepcopy(last)
                copied.add(len(merged) - 1)
            last["text"] = _text(last) + _text(output)
        else:
            merged.append(output)
    return merged


class MergeStreams(NbGraderPreprocessor):
    """Merge consecutive stream outputs of one name in every code cell (``merge_streams``).

    Example: a check cell whose kernel flushed ``"✓ 全部 13 个检查通过。"`` and ``"\\n"`` apart
    shows one output ``"✓ 全部 13 个检查通过。\\n"``, as it does when the kernel flushed once.
    """

    def preprocess_cell(self, cell, resources, cell_index):
        if cell.cell_type == "code" and cell.get("outputs"):
            cell.outputs = merge_streams(cell.outputs)
        return cell, resources
