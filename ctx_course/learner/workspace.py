"""Give a learner a private copy of the lessons to work in, and bring corrections of the release into it.

``lessons/`` is the release that nbgrader generates and the tests compare with ``solutions/``;
a learner's answers must not live there, or regenerating the release would overwrite them. The
workspace (``workspace/``, ignored by git) receives a copy of each released notebook that it does
not hold yet; a notebook already there is never overwritten. A copy's ``language_info`` is the one
the learner's kernel reports (``kernel_language_info``), so that opening it in the lab changes
nothing and JupyterLab does not show it as modified. The release's glossary (``glossary.md`` in
``workspace/``, ``glossary.en.md`` in ``workspace-en/``) is copied to the workspace's top, and
replaced whenever the release's differs: it is the course's, not the learner's, and the notebooks'
links (``../glossary.md#cache``) open it inside the lab, whose root is the workspace. The other
edition's glossary, which earlier versions copied too, is removed. The start page
(``course_map.START_PAGE``: the course map and a progress cell) is written at the workspace's top
and rewritten only when its text changes.

Each copy is recorded in the workspace's manifest (``workspace/.lessons-manifest.json``, hidden in
JupyterLab): the digest of the released file and the digest of each of its cells
(``notebook_merge.release_record``). When ``lessons/`` changes later, ``pending_updates`` names the
notebooks whose release differs from the one recorded, and ``update_workspace`` merges the new
release into them (``notebook_merge.merge_notebook``: answers and edited cells kept as they are),
after copying the old file to ``workspace/backups/<time>/``. A notebook copied before manifests
existed has no record: in a git checkout its release is looked up in the history of ``lessons/``
(``release_history``); otherwise it is merged conservatively (see ``notebook_merge``). Either way
the learner is told.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import nbformat

from ctx_reference.i18n import _, language, normalize

from ..cells import source_text
from ..editions.translate import EDITIONS, GLOSSARY
from .course_map import START_PAGE, course_map, start_page
from .notebook_merge import MergeReport, merge_notebook, release_record
from .release_history import find_record

WORKSPACE = "workspace"
WORKSPACES = {"zh_CN": WORKSPACE, "en": "workspace-en"}
"""The learner's folder of each edition (the release it copies is ``translation.EDITIONS``)."""
MANIFEST = ".lessons-manifest.json"
BACKUPS = "backups"
MANIFEST_FORMAT = 1


class WorkspaceError(ValueError):
    """A workspace file cannot be read or the update cannot go ahead; nothing was changed."""


@dataclass(frozen=True)
class Pending:
    """A notebook of the workspace whose release changed since it was copied."""

    name: str  # path inside lessons/ and workspace/, e.g. "02-remaining/remaining.ipynb"
    recorded: bool  # False: copied before manifests existed
    from_history: bool = False  # unrecorded, but its release was found in the checkout's git history


@dataclass(frozen=True)
class Updated:
    """What ``update_workspace`` did to one notebook."""

    name: str
    report: MergeReport
    recorded: bool
    backup: Path | None  # the old file's copy; None when the notebook's cells did not change
    from_history: bool = False  # unrecorded; merged against the release found in git history


def _lessons(root: str | os.PathLike, language: str = "zh_CN") -> Path:
    folder = EDITIONS[normalize(language)]
    lessons = Path(root) / folder
    if not lessons.is_dir():
        raise ValueError(f"root must hold a {folder}/ folder (got {str(root)!r})")
    return lessons


def _target(root: str | os.PathLike, target: str | os.PathLike | None, language: str = "zh_CN") -> Path:
    return Path(root) / WORKSPACES[normalize(language)] if target is None else Path(target)


def _released(lessons: Path) -> list[Path]:
    return sorted(p for p in lessons.glob("*/*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def file_digest(path: Path) -> str:
    """Return the SHA-256 (hex) of a file's bytes: what identifies a version of the release."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_manifest(target: Path) -> dict[str, dict]:
    """Return the manifest's notebooks (``{name: {"release": digest, "cells": record}}``), {} if none."""
    path = target / MANIFEST
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        notebooks = data["notebooks"]
        if data.get("format") != MANIFEST_FORMAT or not all(
            isinstance(entry["release"], str) and isinstance(entry["cells"], dict) for entry in notebooks.values()
        ):
            raise ValueError("unknown format")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise WorkspaceError(
            _("{path} 不是有效的版本记录（{reason}）：把它改名或移走后再运行，"
              "每本笔记本会按“复制时没有记录版本”处理").format(path=path, reason=exc)
        ) from None
    return notebooks


def _write_atomically(path: Path, text: str) -> None:
    scratch = path.with_name(f".{path.name}.writing")
    scratch.write_text(text, encoding="utf-8")
    os.replace(scratch, path)


def _write_manifest(target: Path, notebooks: dict[str, dict]) -> None:
    text = json.dumps({"format": MANIFEST_FORMAT, "notebooks": notebooks}, indent=1, sort_keys=True)
    _write_atomically(target / MANIFEST, text + "\n")


def read_notebook(path: Path, shown: Path) -> dict:
    """Read and validate a notebook; raise WorkspaceError naming ``shown`` if it is not one."""
    try:
        notebook = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
        nbformat.validate(notebook)
    except Exception as exc:  # nbformat raises JSON, validation and conversion errors of many types
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise WorkspaceError(_("{path} 不是能读的笔记本（{reason}）").format(path=shown, reason=reason[:200])) from None
    return notebook


def _entry(lesson: Path, notebook: dict | None = None) -> dict:
    if notebook is None:
        notebook = json.loads(lesson.read_text(encoding="utf-8"))
    return {"release": file_digest(lesson), "cells": release_record(notebook)}


def prepare_workspace(
    root: str | os.PathLike = ".", target: str | os.PathLike | None = None, *, language: str = "zh_CN"
) -> list[Path]:
    """Copy every released notebook missing from the workspace, record it; return the copies made.

    A notebook copied before manifests existed whose every cell but the answers is still as the
    release has it (nothing to update) is recorded too, so that later corrections reach it.

    Example: on a fresh clone, ``prepare_workspace(".")`` copies every released notebook to
    ``workspace/01-window-math/window_math.ipynb`` … and the glossary to ``workspace/glossary.md``;
    run again, it copies nothing. With ``language="en"`` it copies ``lessons-en/`` into
    ``workspace-en/``, with ``workspace-en/glossary.en.md``.
    """
    lessons = _lessons(root, language)
    target = _target(root, target, language)
    manifest = read_manifest(target)
    copied = []
    changed = False
    for lesson in _released(lessons):
        name = lesson.relative_to(lessons).as_posix()
        destination = target / name
        if destination.exists():
            if name not in manifest and _agrees_without_record(lesson, destination):
                manifest[name] = _entry(lesson)
                changed = True
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        _copy_lesson(lesson, destination)
        manifest[name] = _entry(lesson)
        copied.append(destination)
        changed = True
    if changed:
        _write_manifest(target, manifest)
    _copy_glossary(lessons, target, normalize(language))
    _write_start_page(lessons, target, normalize(language))
    return copied


def _write_start_page(lessons: Path, target: Path, language: str) -> None:
    """Write the start page (``course_map.start_page``) at the workspace's top, unless it already says the same.

    The page is the course's: when its cells' text changed it is replaced (a saved run of its
    progress cell goes with it); otherwise it is left as it is, outputs included.
    """
    released = [(path.relative_to(lessons).as_posix(), json.loads(path.read_text(encoding="utf-8")))
                for path in _released(lessons)]
    page = with_language_info(start_page(course_map(released, language), language), kernel_language_info())
    destination = target / START_PAGE
    if destination.is_file():
        try:
            mine = json.loads(destination.read_text(encoding="utf-8"))
            if [(c.get("id"), source_text(c.get("source", ""))) for c in mine["cells"]] == [
                    (c["id"], c["source"]) for c in page["cells"]]:
                return
        except (ValueError, KeyError, TypeError, AttributeError):
            pass  # not a notebook as written here: replaced
    target.mkdir(parents=True, exist_ok=True)
    _write_atomically(destination, json.dumps(page, ensure_ascii=False, indent=1, sort_keys=True) + "\n")


def kernel_language_info() -> dict:
    """Return the ``language_info`` a Python kernel of this interpreter reports (ipykernel's, as it sends it).

    The learner's lab starts its kernels with the interpreter that runs ``python -m ctx_course lab``.
    """
    from ipykernel.ipkernel import IPythonKernel  # the lab's kernel; imported only when a lesson is copied

    return json.loads(json.dumps(IPythonKernel.language_info))


def with_language_info(notebook: dict, info: dict) -> dict:
    """Return ``notebook`` whose metadata holds ``info`` as its ``language_info``; the input is not changed.

    >>> with_language_info({"metadata": {"kernelspec": {}}, "cells": []}, {"name": "python", "version": "3.11.2"})
    {'metadata': {'kernelspec': {}, 'language_info': {'name': 'python', 'version': '3.11.2'}}, 'cells': []}
    """
    return {**notebook, "metadata": {**notebook.get("metadata", {}), "language_info": dict(info)}}


def _copy_lesson(lesson: Path, destination: Path) -> None:
    """Copy a released notebook to the workspace with the kernel's ``language_info`` (else byte for byte)."""
    notebook = json.loads(lesson.read_text(encoding="utf-8"))
    text = json.dumps(with_language_info(notebook, kernel_language_info()), ensure_ascii=False, indent=1,
                      sort_keys=True)
    _write_atomically(destination, text + "\n")


def _copy_glossary(lessons: Path, target: Path, language: str) -> None:
    """Give the workspace the release's glossary of its edition, as the release has it; remove the other's."""
    for edition, name in GLOSSARY.items():
        released, mine = lessons / name, target / name
        if edition != language:
            if mine.is_file():
                mine.unlink()
        elif released.is_file() and not (mine.is_file() and mine.read_bytes() == released.read_bytes()):
            target.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(released, mine)


def _agrees_without_record(lesson: Path, mine: Path) -> bool:
    """True if an unrecorded copy has every release cell, each as released (answers aside)."""
    try:
        learner = read_notebook(mine, mine)
    except WorkspaceError:
        return False
    return _agrees(learner, json.loads(lesson.read_text(encoding="utf-8")))


def _agrees(learner: dict, release: dict) -> bool:
    _, report = merge_notebook(learner, release, None)
    return not report.changed and not report.kept_edited


def _unrecorded(root: str | os.PathLike, lesson: Path, name: str, mine: Path) -> Pending | None:
    """The pending update of a notebook copied before manifests existed, or None if nothing is to do."""
    try:
        learner = read_notebook(mine, mine)
    except WorkspaceError:
        return Pending(name, recorded=False)  # the update names the problem
    if _agrees(learner, json.loads(lesson.read_text(encoding="utf-8"))):
        return None
    return Pending(name, recorded=False, from_history=find_record(root, name, learner) is not None)


def pending_updates(
    root: str | os.PathLike = ".", target: str | os.PathLike | None = None, *, language: str = "zh_CN"
) -> list[Pending]:
    """Return the workspace's notebooks whose release changed since they were copied, in reading order.

    An unrecorded notebook (copied before manifests existed) is pending unless it agrees with the
    release (see ``prepare_workspace``). Reads nothing but the manifest, the release and unrecorded
    notebooks; changes nothing.
    """
    lessons = _lessons(root, language)
    target = _target(root, target, language)
    manifest = read_manifest(target)
    pending = []
    for lesson in _released(lessons):
        name = lesson.relative_to(lessons).as_posix()
        if not (target / name).exists():
            continue  # prepare_workspace copies it
        if name in manifest:
            if manifest[name]["release"] != file_digest(lesson):
                pending.append(Pending(name, recorded=True))
        elif (item := _unrecorded(root, lesson, name, target / name)) is not None:
            pending.append(item)
    return pending


def _backup_folder(target: Path, now: datetime) -> Path:
    base = target / BACKUPS / now.strftime("%Y-%m-%d-%H%M%S")
    folder, number = base, 1
    while folder.exists():
        number += 1
        folder = base.with_name(f"{base.name}-{number}")
    return folder


def update_workspace(
    root: str | os.PathLike = ".",
    target: str | os.PathLike | None = None,
    *,
    now: datetime | None = None,
    language: str = "zh_CN",
) -> list[Updated]:
    """Merge the current release into every pending notebook of the workspace; return what was done.

    Copies missing notebooks first (``prepare_workspace``). Every pending notebook is read and
    merged before anything is written: if one cannot be read, WorkspaceError names it and no file
    changes. Then, per notebook, the old file is copied to ``workspace/backups/<time>/<name>``,
    the merged notebook replaces it, and the manifest records the new release.

    Example: after a correction to ``lessons/02-remaining/remaining.ipynb``, ``update_workspace(".")``
    returns one ``Updated`` for it; the learner's answer to ``remaining`` is unchanged.
    """
    prepare_workspace(root, target, language=language)
    lessons = _lessons(root, language)
    target = _target(root, target, language)
    manifest = read_manifest(target)
    plans = []
    for item in pending_updates(root, target, language=language):
        lesson, mine = lessons / item.name, target / item.name
        learner = read_notebook(mine, mine)
        release = read_notebook(lesson, lesson)
        record = manifest[item.name]["cells"] if item.recorded else find_record(root, item.name, learner)
        merged, report = merge_notebook(learner, release, record)
        try:
            nbformat.validate(nbformat.from_dict(merged))
        except nbformat.ValidationError as exc:
            raise WorkspaceError(
                _("合并 {path} 得到的笔记本无效（{reason}）").format(path=mine, reason=str(exc).splitlines()[0])
            ) from None
        plans.append((item, lesson, mine, merged, report, release, record is not None and not item.recorded))
    backups = _backup_folder(target, now or datetime.now()) if any(plan[4].changed for plan in plans) else None
    done = []
    for item, lesson, mine, merged, report, release, from_history in plans:
        backup = None
        if report.changed and backups is not None:  # a backup folder is made whenever a report changed
            backup = backups / item.name
            backup.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(mine, backup)
            _write_atomically(mine, nbformat.writes(nbformat.from_dict(merged)))
        manifest[item.name] = _entry(lesson, release)
        _write_manifest(target, manifest)
        done.append(Updated(item.name, report, item.recorded, backup, from_history))
    return done


def _shown(keys: Iterable[str]) -> str:
    keys = list(keys)
    shown = _("、").join(keys[:6])
    return _("{cells} 等 {count} 格").format(cells=shown, count=len(keys)) if len(keys) > 6 else shown


def _folders() -> tuple[str, str]:
    """Return the workspace and the release folder of the reader's language (``workspace``, ``lessons``)."""
    return WORKSPACES[language()], EDITIONS[language()]


def format_pending(pending: list[Pending], command: str) -> list[str]:
    """Return the lines that tell a learner which notebooks changed and how to update them ([] if none)."""
    if not pending:
        return []
    lines = [_("课程有更新：下面 {count} 本笔记本在你复制之后改过了。").format(count=len(pending))]
    for item in pending:
        note = ""
        if item.from_history:
            note = _("（复制时还没有记录版本：按 git 历史里你复制的那一版判断哪些格子你改过）")
        elif not item.recorded:
            note = _("（复制时还没有记录版本：跟新版不一样的格子都会当作你改过的，原样保留）")
        lines.append(f"  {item.name}{note}")
    lines.append(
        _("要把新版带进来，先在 JupyterLab 里关掉这些笔记本，再运行：{command}。"
          "你写的答案和你改过的格子原样保留，旧文件先备份到 {backups}/。").format(
            command=command, backups=f"{_folders()[0]}/{BACKUPS}")
    )
    return lines


def format_updated(updated: Updated) -> list[str]:
    """Return the lines that tell a learner what an update did to one notebook."""
    report = updated.report
    if not report.changed:
        head = _("{name}：没有要换的格子").format(name=updated.name)
    else:
        head = _("{name}：换成新版 {updated} 格，新增 {added} 格，去掉 {removed} 格").format(
            name=updated.name, updated=len(report.updated), added=len(report.added), removed=len(report.removed)
        )
    answers, edited = len(report.kept_answers), len(report.kept_edited)
    if updated.recorded or updated.from_history:
        head += _("；原样保留你的答案 {answers} 格、你改过的 {edited} 格").format(answers=answers, edited=edited)
    else:
        head += _("；原样保留你的答案 {answers} 格、跟新版不同的 {edited} 格").format(answers=answers, edited=edited)
    if report.own:
        head += _("、你自己加的 {count} 格").format(count=report.own)
    lines = [head]
    if report.kept_behind:
        lines.append("  " + _("新版也改了这些你保留的格子：{cells}（新版在 {release}）").format(
            cells=_shown(report.kept_behind), release=f"{_folders()[1]}/{updated.name}"))
    if report.left_deleted:
        lines.append("  " + _("你删掉的格子没有补回：{cells}").format(cells=_shown(report.left_deleted)))
    if updated.from_history:
        lines.append("  " + _("这本笔记本复制时还没有记录版本：按 git 历史里你复制的那一版判断了哪些格子你改过"))
    elif not updated.recorded:
        lines.append("  " + _("这本笔记本复制时还没有记录版本：跟新版不一样的格子都当作你改过的，原样保留"))
    if updated.backup is not None:
        lines.append("  " + _("旧文件备份在 {path}").format(path=updated.backup))
    return lines
