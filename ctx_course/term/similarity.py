"""Similarity report: answers of one assignment that are unusually alike, and answers alike the model answer.

Computed locally with ``copydetect`` (winnowing, as MOSS does: the code is tokenised, names and
literals are normalised, and k-grams of tokens are fingerprinted), from the answer cells of each
submission as handed in (``<work>/submitted/<student>/<assignment>/``). The released template
code (the stubs of the answer cells) is excluded as boilerplate, so a signature and a docstring
that everybody received count for nothing. Two students are compared with the model answer
(``solutions/``) excluded too: what an obvious correct solution shares with every other is not
evidence; each student is compared with the model answer separately.

A *pair* is reported when the larger of its two similarities (the share of one answer's
fingerprinted tokens found in the other) reaches ``threshold``. The report is for the instructor
to read: nothing here reads or writes the gradebook, and no score changes.

Covers: ``answer_code`` (pure: the answer cells' code of a notebook), ``compare_answers`` (pure:
the pairs of one assignment), ``similarity_report`` (the class, from a work folder),
``write_similarity_csv`` and ``format_similarity_html``.

Leaves out: free-response (Markdown) answers, and answers across assignments or years.

Vocabulary: *fingerprints* are copydetect's hashes of k-grams that survive winnowing; *noise*
is the k-gram length below which a match counts for nothing (``NOISE`` characters of filtered
code); a *template* is the release's version of the answer cells.
"""

from __future__ import annotations

import html
import io
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from copydetect import CodeFingerprint, compare_files
from copydetect.utils import highlight_overlap

from ..cells import source_lines, source_text
from ..grading.csv_files import write_csv

# copydetect's defaults: matches shorter than NOISE characters of filtered code are ignored,
# matches of GUARANTEE or more are always found (winnowing window GUARANTEE - NOISE + 1).
NOISE = 25
GUARANTEE = 30
THRESHOLD = 0.5  # share of one answer's fingerprinted code found in the other
# A correct answer shares much with the model answer anyway: alike it means nearly all of it.
MODEL_THRESHOLD = 0.8
MODEL = "model answer"  # the name the model answer goes by in a pair
SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
CSV_COLUMNS = ("assignment", "kind", "first", "second", "similarity", "first_share", "second_share", "shared_tokens")


@dataclass(frozen=True)
class Pair:
    """Two answers of one assignment found alike: ``kind`` "students" or "model answer"."""

    assignment: str
    kind: str
    first: str
    second: str
    first_share: float  # of the first answer's fingerprinted tokens, the share found in the second
    second_share: float
    shared_tokens: int
    first_code: str = ""
    second_code: str = ""
    first_slices: tuple = ()
    second_slices: tuple = ()

    @property
    def similarity(self) -> float:
        """The larger of the two shares."""
        return max(self.first_share, self.second_share)


def answer_code(cells: Sequence[Mapping], answer_ids: Sequence[str] | None = None) -> str:
    """Return the code of a notebook's answer cells (code cells with a solution), in order, markers removed.

    ``answer_ids`` keeps only those cells (the answer cells of the release). Example: a cell
    ``def f():\\n    ### BEGIN SOLUTION\\n    return 1\\n    ### END SOLUTION`` gives ``def f():\\n    return 1``.
    """
    parts = []
    for cell in cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") != "code" or not meta.get("solution"):
            continue
        if answer_ids is not None and meta.get("grade_id") not in answer_ids:
            continue
        lines = source_lines(source_text(cell.get("source", "")))
        parts.append("\n".join(line for line in lines if line.strip() not in SOLUTION_MARKERS))
    return "\n\n".join(parts)


def compare_answers(
    assignment: str,
    answers: Mapping[str, str],
    template: str,
    model: str = "",
    threshold: float = THRESHOLD,
    model_threshold: float = MODEL_THRESHOLD,
) -> list[Pair]:
    """Return the pairs of students alike at ``threshold`` or more, then the students alike the model answer.

    A student is alike the model answer when ``model_threshold`` of what she wrote is in it.
    Pairs of students come first, most alike first. An answer that is all template (nothing
    written) is compared with nothing.
    """
    check_thresholds(threshold, model_threshold)
    template_hashes = _hashes(template)
    both = np.unique(np.concatenate([template_hashes, _hashes(model)]))
    students = {s: _fingerprint(s, code, both) for s, code in sorted(answers.items())}
    students = {s: fp for s, fp in students.items() if fp.token_coverage > 0}
    pairs = []
    names = sorted(students)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            pair = _pair(assignment, "students", first, second, students[first], students[second])
            if pair is not None and pair.similarity >= threshold:
                pairs.append(pair)
    pairs.sort(key=lambda p: (-p.similarity, p.first, p.second))
    if model.strip():
        reference = _fingerprint(MODEL, model, template_hashes)
        alike = []
        for student in sorted(answers):
            mine = _fingerprint(student, answers[student], template_hashes)
            if mine.token_coverage == 0:
                continue
            pair = _pair(assignment, MODEL, student, MODEL, mine, reference)
            # Alike the model answer: most of what the student wrote is in it.
            if pair is not None and pair.first_share >= model_threshold:
                alike.append(pair)
        pairs += sorted(alike, key=lambda p: (-p.first_share, p.first))
    return pairs


def similarity_report(
    root: str | os.PathLike,
    work: str | os.PathLike,
    assignments: Sequence[str] = (),
    threshold: float = THRESHOLD,
    model_threshold: float = MODEL_THRESHOLD,
) -> list[Pair]:
    """Return the pairs of every assignment submitted under ``<work>/submitted`` (or of ``assignments``)."""
    check_thresholds(threshold, model_threshold)
    root, work = Path(root), Path(work)
    submitted = work / "submitted"
    found: dict[str, dict[str, Path]] = {}
    for folder in sorted(submitted.glob("*/*")):
        if folder.is_dir() and not folder.name.startswith(".") and not folder.parent.name.startswith("."):
            found.setdefault(folder.name, {})[folder.parent.name] = folder
    pairs = []
    for assignment in sorted(found):
        if assignments and assignment not in assignments:
            continue
        release = _release_folder(root, work, assignment)
        if release is None:
            continue
        template_parts: list[str] = []
        model_parts: list[str] = []
        answers: dict[str, list[str]] = {s: [] for s in found[assignment]}
        for notebook in sorted(release.glob("*.ipynb")):
            released = _cells(notebook)
            ids = [
                c["metadata"]["nbgrader"]["grade_id"]
                for c in released
                if c.get("metadata", {}).get("nbgrader", {}).get("solution") and c.get("cell_type") == "code"
            ]
            template_parts.append(answer_code(released, ids))
            model_parts.append(answer_code(_cells(root / "solutions" / assignment / notebook.name), ids))
            for student, folder in found[assignment].items():
                answers[student].append(answer_code(_cells(folder / notebook.name), ids))
        pairs += compare_answers(
            assignment,
            {s: "\n\n".join(parts) for s, parts in answers.items()},
            "\n\n".join(template_parts),
            "\n\n".join(model_parts),
            threshold,
            model_threshold,
        )
    return pairs


def check_thresholds(threshold: float, model_threshold: float) -> None:
    """Raise ValueError unless both thresholds are shares in (0, 1]."""
    for name, value in (("threshold", threshold), ("model_threshold", model_threshold)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
            raise ValueError(f"{name} must be a share in (0, 1] (got {value!r})")


def write_similarity_csv(pairs: Sequence[Pair], path: str | os.PathLike) -> Path:
    """Write the pairs as a CSV (columns CSV_COLUMNS); return the path."""
    rows = (
        [p.assignment, p.kind, p.first, p.second, f"{p.similarity:.2f}", f"{p.first_share:.2f}",
         f"{p.second_share:.2f}", p.shared_tokens]
        for p in pairs
    )
    return write_csv(rows, path, header=CSV_COLUMNS)


def format_similarity_html(
    pairs: Sequence[Pair], threshold: float = THRESHOLD, model_threshold: float = MODEL_THRESHOLD
) -> str:
    """Return an HTML page listing the pairs, each with both answers side by side and the shared code marked."""
    rows, details = [], []
    for number, p in enumerate(pairs, start=1):
        rows.append(
            f"<tr><td><a href='#p{number}'>{number}</a></td><td>{html.escape(p.assignment)}</td>"
            f"<td>{html.escape(p.kind)}</td><td>{html.escape(p.first)}</td><td>{html.escape(p.second)}</td>"
            f"<td>{p.first_share:.0%}</td><td>{p.second_share:.0%}</td></tr>"
        )
        details.append(
            f"<h2 id='p{number}'>{number}. {html.escape(p.assignment)}: "
            f"{html.escape(p.first)} / {html.escape(p.second)}</h2>"
            "<div class='pair'>"
            + _marked(p.first_code, p.first_slices)
            + _marked(p.second_code, p.second_slices)
            + "</div>"
        )
    body = (
        (
            "<table><tr><th>#</th><th>assignment</th><th>kind</th><th>first</th><th>second</th>"
            "<th>first's share found in second</th><th>second's share found in first</th></tr>"
            + "".join(rows)
            + "</table>"
            + "".join(details)
        )
        if pairs
        else "<p>No pair reaches the threshold.</p>"
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Similarity report</title><style>"
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px}"
        ".pair{display:flex;gap:1em}.pair pre{flex:1;background:#f6f6f6;padding:8px;overflow:auto}"
        "mark{background:#ffd27f}</style></head><body><h1>Similarity report</h1>"
        f"<p>Answer cells compared with copydetect (winnowing; k = {NOISE}); the released template is excluded, "
        f"and between students the model answer too. Pairs of students at {threshold:.0%} or more; "
        f"students with {model_threshold:.0%} or more of their answer in the model answer. "
        "Alike is not proof of copying: read the code. No score was changed.</p>" + body + "</body></html>"
    )


# --------------------------------------------------------------------------------------------
# Small helpers


def _fingerprint(name: str, code: str, boilerplate) -> CodeFingerprint:
    return CodeFingerprint(
        f"{name}.py", NOISE, GUARANTEE - NOISE + 1, boilerplate=boilerplate, language="python", fp=io.StringIO(code)
    )


def _hashes(code: str) -> np.ndarray:
    """Every fingerprint of ``code`` (window 1, as copydetect takes boilerplate)."""
    if not code.strip():
        return np.array([], dtype=np.int64)
    fingerprint = CodeFingerprint("template.py", NOISE, 1, language="python", fp=io.StringIO(code))
    return np.unique(np.array(list(fingerprint.hashes), dtype=np.int64))


def _pair(assignment: str, kind: str, first: str, second: str, a: CodeFingerprint, b: CodeFingerprint) -> Pair | None:
    overlap, (share_a, share_b), (slices_a, slices_b) = compare_files(a, b)
    if not overlap:
        return None
    return Pair(
        assignment,
        kind,
        first,
        second,
        float(share_a),
        float(share_b),
        int(overlap),
        a.raw_code,
        b.raw_code,
        _tuple(slices_a),
        _tuple(slices_b),
    )


def _tuple(slices) -> tuple:
    array = np.asarray(slices)
    return tuple(map(tuple, array.tolist())) if array.size else ()


def _marked(code: str, slices: tuple) -> str:
    if not slices:
        return f"<pre>{html.escape(code)}</pre>"
    marked, _ = highlight_overlap(code, np.array(slices), "<mark>", "</mark>", escape_html=True)
    return f"<pre>{marked}</pre>"


def _release_folder(root: Path, work: Path, assignment: str) -> Path | None:
    for folder in (work / "release" / assignment, root / "lessons" / assignment):
        if folder.is_dir() and any(folder.glob("*.ipynb")):
            return folder
    return None


def _cells(path: Path) -> list[dict]:
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("cells", [])
    except (OSError, ValueError):
        return []
