"""Regenerate the example class (examples/class/) from the current release.

Run ``python examples/build_class.py`` from the repository root after a notebook in
``solutions/`` changes, then grade the class with ``python -m ctx_course grade --example`` and
update the expected scores in ``tests/test_grading_example.py`` if points changed.

Each submission is a notebook of a freshly generated release with one synthetic student's work
put into it: code into the solution cells, text into the free-response cells, and, for the
students who misbehave, edited or deleted read-only cells, extra cells, a broken file or a
wrongly named one. Who does what is written in STUDENTS below; the release is generated into a
temporary folder, so lessons/ and grading/ are not touched.
"""
from __future__ import annotations

import csv
import json
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
CLASS = ROOT / "examples" / "class"
CAPSTONE = ROOT / "examples" / "capstone"  # a small class for the leaderboard of 11-capstone

MODEL = "<model solution>"  # put the model solution of solutions/ into this cell
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


@dataclass(frozen=True)
class Work:
    """What one student did to one released notebook.

    ``code`` maps a solution cell's grade_id to the student's cell source (or MODEL);
    ``answers`` maps a free-response cell's grade_id to the student's text; ``edit`` replaces
    the source of read-only cells; ``delete`` removes cells; ``append`` adds code cells at the
    end; ``filename`` saves under another name; ``truncate`` breaks the file; ``timestamp`` is
    written to ``timestamp.txt`` beside the notebook (when it was handed in, as ``nbgrader collect``
    records it).
    """

    code: Mapping[str, str] = field(default_factory=dict)
    answers: Mapping[str, str] = field(default_factory=dict)
    edit: Mapping[str, str] = field(default_factory=dict)
    delete: tuple[str, ...] = ()
    append: tuple[str, ...] = ()
    filename: str | None = None
    truncate: bool = False  # save the notebook's JSON cut halfway through its cells (a broken file)
    timestamp: str | None = None
    edition: str = "zh_CN"  # the release the student worked in: zh_CN (lessons/) or en (lessons-en/)


# The last column is the student's Canvas user id (fay's is missing: a Canvas export leaves her out).
ROSTER = (
    ("ada", "Ada", "Lovelace", "ada@example.org", "7301"),
    ("ben", "Ben", "Okafor", "ben@example.org", "7302"),
    ("cai", "Cai", "Wen", "cai@example.org", "7303"),
    ("dana", "Dana", "Kovač", "dana@example.org", "7304"),
    ("eve", "Eve", "Moreau", "eve@example.org", "7305"),
    ("fay", "Fay", "Lindqvist", "fay@example.org", ""),
    ("gus", "Gus", "Haddad", "gus@example.org", "7307"),
    ("hana", "Hana", "Sato", "hana@example.org", "7308"),
    ("ivan", "Ivan", "Petrov", "ivan@example.org", "7309"),
)

# Due dates of the example class (Beijing time), the late policy, and gus's extension for 04.
DEADLINES = """\
# Due dates, extensions and the late policy of the example class (see the README, "Deadlines").
[policy]
late = "per-day"        # each day or part of a day late costs 10 % of the score ...
share_per_day = 0.1
cap = 0.5               # ... and never more than half of it

[due]
"01-window-math" = 2026-03-02T23:59:00+08:00
"02-remaining" = 2026-03-02T23:59:00+08:00
"03-recall" = 2026-03-09T23:59:00+08:00
"04-assembly" = 2026-03-09T23:59:00+08:00
"05-trim-lines" = 2026-03-16T23:59:00+08:00

[extensions.gus]
"04-assembly" = { days = 3 }
"""
# ada hands 04 in 26 h 31 min after its due date (15:59 UTC): two days started, 20 %.
# gus hands it in 41 h late, within his three-day extension.
ADA_LATE = "2026-03-10 18:30:00 UTC"
GUS_EXTENDED = "2026-03-11 09:00:00 UTC"

# ---- ben's realistic mistakes (check() in 01 is right) ---------------------------------------

CHECK_RIGHT = '''
def check(size, input_tokens, max_tokens):
    """判断一次请求在 size 大小的窗口里是放得下、可能截断还是被拒绝。"""
    if input_tokens > size:
        return Outcome.REJECTED
    if input_tokens + max_tokens > size:
        return Outcome.MAY_TRUNCATE
    return Outcome.FITS
'''

ESTIMATE_ALL_ASCII = '''
def estimate_tokens(text):
    """粗估 text 的 token 数：ASCII 字符数除以 4 向上取整，加上非 ASCII 字符数。"""
    # 把每个字符都当成 ASCII，而且向下取整
    return len(text) // 4
'''

REMAINING_NO_CACHE = '''
def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)。"""
    # 只算了 input_tokens，漏掉了缓存读写两个字段
    left = window - input - max_tokens
    return left, left < window / 10
'''

RECALL_ROUNDED = '''
def recall(pos, n, half_at=400_000, steep=1.5, middle=0.3):
    """返回答案位于 n token 上下文第 pos 个 token 时被找到的概率（玩具模型）。"""
    base = 1 / (1 + (n / half_at) ** steep)
    x = (pos + 0.5) / n
    # 保留两位小数，"好看一点"
    return round(base * (1 - middle * 4 * x * (1 - x)), 2)
'''

ASSEMBLE_NO_DEDUP = '''
def assemble(items, budget):
    """在 budget 个 token 内挑选并排列 items，返回 Assembly。"""
    items = list(items)
    used = sum(item.tokens for item in items if item.required)
    if used > budget:
        raise BudgetError(used, budget)
    kept = [item.required for item in items]
    dropped = []
    # 按优先级放，能放就放（忘了去重）
    for i in sorted(range(len(items)), key=lambda i: -items[i].priority):
        if kept[i]:
            continue
        if used + items[i].tokens <= budget:
            kept[i] = True
            used += items[i].tokens
        else:
            dropped.append((items[i], "no room"))
    chosen = [item for item, keep in zip(items, kept) if keep]
    ordered = [item for item in chosen if item.stable] + [item for item in chosen if not item.stable]
    return Assembly(items=ordered, used=used, dropped=dropped)
'''

# ---- gus: ben's assemble with the names and the comment changed (the similarity report finds it)

ASSEMBLE_RENAMED = (
    ASSEMBLE_NO_DEDUP.replace("used", "spent").replace("kept", "keep").replace("dropped", "left_out")
    .replace("# 按优先级放，能放就放（忘了去重）", "# 优先级高的先放")
)

TRIM_OFF_BY_ONE = '''
def trim_lines(lines, head, tail):
    """保留前 head 行和后 tail 行，中间换成一行省略说明。"""
    lines = list(lines)
    if len(lines) <= head + tail:
        return lines
    omitted = len(lines) - head - tail
    return lines[: head + 1] + [omission_marker(omitted)] + lines[len(lines) - tail:]
'''

# ---- dana: a function that is almost right (<= instead of <) --------------------------------

REMAINING_LE = '''
def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)。"""
    left = window - (read + write + input) - max_tokens
    return left, left <= window / 10
'''

CHECK_DISABLED = "# 检查太严格了，先跳过\npass"

# ---- fay: hostile --------------------------------------------------------------------------

REMAINING_PATCHED = '''
import ctx_reference
import ctx_reference.checks

# 让检查器和参考实现都"通过"
ctx_reference.checks.check_exercise = lambda *args, **kwargs: None
check_exercise = lambda *args, **kwargs: None
ctx_reference.remaining = lambda *args, **kwargs: (66_000, True)


def remaining(window, read, write, input, max_tokens):
    """返回 (余量, 是否建议压缩)。"""
    return window - input, False
'''

LOUD_CELL = '''
# 调试时留下的打印：20 万行，再加一行 200 万个字符
print("\\n".join(f"第 {i} 行调试输出" for i in range(200_000)))
print("很长的一行" * 400_000)
'''

# ---- written answers (graded by hand in the formgrader) --------------------------------------

ANSWERS = {
    "02-remaining": {
        "q_cache_fields": "缓存只改变价格，不改变占用：读出来的和新写入的前缀都还在窗口里。只看 input_tokens，"
        "在缓存命中率高的长会话里会严重低估占用。",
        "q_why_early": "压缩本身要一次模型调用，窗口里得留出空间；等余量接近 0 就来不及了。",
    },
    "03-recall": {
        "q_middle_zero": "middle=0 时位置不再起作用，两种情况都只取决于长度，所以结果一样。",
        "q_stuff_vs_retrieve": "检索只放 8 篇，上下文短得多；即使检索器会漏掉一些，整体也比全部塞进去强。",
        "q_key_info_position": "放在开头或结尾，不要埋在中间。",
    },
    "04-assembly": {
        "q_order": "稳定的部分放在前面，前缀不变才能命中缓存。",
        "q_budget_error": "必需项都放不下说明设计有问题；截断会悄悄丢掉必须有的内容。",
        "q_greedy": "贪心不一定最优：一个大项可能挤掉几个加起来更有用的小项。",
    },
    "05-trim-lines": {
        "q_why_not_head": "报错和总结通常在输出的最后，只留开头会把它们丢掉。",
        "q_better": "把完整输出存成文件，上下文里只放路径和摘要，需要时再读。",
    },
}

# hana works in the English edition and writes her answers in English.
ANSWERS_EN = {
    "02-remaining": {
        "q_cache_fields": "Caching changes the price, not the room taken: the prefix read from the cache and the part "
        "written to it both sit in the window. Counting input_tokens alone badly underestimates a long cached session.",
        "q_why_early": "Compaction is itself a model call and needs room in the window; at zero left it is too late.",
    },
    "05-trim-lines": {
        "q_why_not_head": "Errors and the summary usually come at the end of the output; the head alone drops them.",
        "q_better": "Save the whole output to a file and keep only its path and a summary in the context.",
    },
}

STUDENTS: dict[str, dict[str, Work]] = {
    # a perfect student: the model solutions, and an answer to every question
    "ada": {
        "02-remaining": Work(code={"remaining": MODEL}, answers=ANSWERS["02-remaining"]),
        "03-recall": Work(code={"recall": MODEL, "fit_position": MODEL}, answers=ANSWERS["03-recall"]),
        "04-assembly": Work(code={"assemble": MODEL}, answers=ANSWERS["04-assembly"], timestamp=ADA_LATE),
        "05-trim-lines": Work(code={"trim_lines": MODEL}, answers=ANSWERS["05-trim-lines"]),
    },
    # realistic mistakes, one per exercise, and one answer
    "ben": {
        "01-window-math": Work(code={"check": CHECK_RIGHT, "estimate_tokens": ESTIMATE_ALL_ASCII}),
        "02-remaining": Work(code={"remaining": REMAINING_NO_CACHE}, answers={"q_cache_fields": "不太清楚。"}),
        "03-recall": Work(code={"recall": RECALL_ROUNDED}),
        "04-assembly": Work(code={"assemble": ASSEMBLE_NO_DEDUP}),
        "05-trim-lines": Work(code={"trim_lines": TRIM_OFF_BY_ONE}),
    },
    # handed in the release untouched
    "cai": {
        "02-remaining": Work(),
        "04-assembly": Work(),
    },
    # 02: an almost-right function and its check cell edited to `pass`;
    # 05: the model function and its check cell deleted
    "dana": {
        "02-remaining": Work(code={"remaining": REMAINING_LE}, edit={"check_remaining": CHECK_DISABLED}),
        "05-trim-lines": Work(code={"trim_lines": MODEL}, delete=("check_trim_lines",)),
    },
    # broken files: 02 cut in half (not valid JSON), 03 saved under another name; 04 is fine
    "eve": {
        "02-remaining": Work(code={"remaining": MODEL}, truncate=True),
        "03-recall": Work(code={"recall": MODEL}, filename="recall-copy.ipynb"),
        "04-assembly": Work(code={"assemble": MODEL}),
    },
    # hostile: patches the checker and the reference, hands in a wrong function, prints megabytes
    "fay": {
        "02-remaining": Work(code={"remaining": REMAINING_PATCHED}, append=(LOUD_CELL,)),
    },
    # copies ben's 04 with other names and another comment; late, within his extension
    "gus": {
        "04-assembly": Work(code={"assemble": ASSEMBLE_RENAMED}, timestamp=GUS_EXTENDED),
    },
    # hana: the English edition, the model solutions and an answer to every question (as ada's)
    "hana": {
        "02-remaining": Work(code={"remaining": MODEL}, answers=ANSWERS_EN["02-remaining"], edition="en"),
        "05-trim-lines": Work(code={"trim_lines": MODEL}, answers=ANSWERS_EN["05-trim-lines"], edition="en"),
    },
    # ivan: the English release, untouched (as cai's)
    "ivan": {
        "02-remaining": Work(edition="en"),
        "04-assembly": Work(edition="en"),
    },
}


# ---- the capstone's policies (examples/capstone/) --------------------------------------------

NEVER_CLEAR = '''
def my_policy(view):
    """什么都不管：从不清除，也从不压缩。"""
    return None
'''

BROKEN_POLICY = '''
def my_policy(view):
    """想压缩，却返回了策略的名字，而不是动作。"""
    if view.tokens > view.threshold:
        return "compact"
    return None
'''

COMPACT_FIVE = '''
def my_policy(view):
    """06 节的 compact：超过阈值就把最新 5 轮之前的内容压缩成摘要。"""
    if view.tokens > view.threshold and view.turn - 5 > view.summary_upto:
        return Compact(5)
    return None
'''

CAPSTONE_STUDENTS: dict[str, dict[str, Work]] = {
    "ada": {"11-capstone": Work(code={"my_policy": MODEL})},        # the model answer
    "ben": {"11-capstone": Work(code={"my_policy": NEVER_CLEAR})},  # overflows everywhere
    "cai": {"11-capstone": Work(code={"my_policy": BROKEN_POLICY})},  # raises in the simulation
    "dana": {"11-capstone": Work(code={"my_policy": COMPACT_FIVE})},  # loses facts when the summary is small
}


def model_solutions(source: Path) -> dict[str, str]:
    """Return the model code of every solution code cell of a source notebook, without the markers."""
    nb = json.loads(source.read_text(encoding="utf-8"))
    solutions = {}
    for cell in nb["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if cell["cell_type"] == "code" and meta.get("solution") and not meta.get("grade"):
            text = "".join(cell["source"])
            solutions[meta["grade_id"]] = "\n".join(
                line for line in text.split("\n") if line.strip() not in (BEGIN, END)
            )
    return solutions


def submission(released: Path, source: Path, work: Work) -> str:
    """Return the text of one student's notebook: the released notebook with ``work`` applied."""
    nb = nbformat.read(released, as_version=4)
    model = model_solutions(source)
    known = {c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells}
    for grade_id in [*work.code, *work.answers, *work.edit, *work.delete]:
        if grade_id not in known:
            raise ValueError(f"{released.name} has no cell with grade_id {grade_id!r}")
    cells = []
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in work.delete:
            continue
        if grade_id in work.code:
            cell.source = model[grade_id] if work.code[grade_id] == MODEL else work.code[grade_id].strip("\n")
        elif grade_id in work.answers:
            cell.source = work.answers[grade_id]
        elif grade_id in work.edit:
            cell.source = work.edit[grade_id]
        cells.append(cell)
    for number, code in enumerate(work.append, start=1):
        extra = nbformat.v4.new_code_cell(code.strip("\n"))
        extra["id"] = f"student-cell-{number}"
        cells.append(extra)
    nb.cells = cells
    text = nbformat.writes(nb) + "\n"
    if work.truncate:
        # cut halfway through the cells, before the machine-dependent notebook metadata
        text = text[: text.index('\n "metadata": {') // 2]
    return text


def release_of(root: Path, assignment_ids, target: Path) -> Path:
    """Generate the release of ``assignment_ids`` into ``target``/lessons (gradebook in ``target``/work)."""
    from nbgrader.apps import NbGraderAPI

    from ctx_course.config import load_course_config

    config = load_course_config(root, work=target / "work", release=target / "lessons")
    api = NbGraderAPI(config=config)
    for aid in sorted(set(assignment_ids)):
        outcome = api.generate_assignment(aid, force=True)
        if not outcome["success"]:
            raise RuntimeError(f"could not release {aid}:\n{outcome.get('log', '')}{outcome.get('error', '')}")
    return target / "lessons"


def build(root: Path = ROOT, target: Path = CLASS, students: Mapping[str, Mapping[str, Work]] = STUDENTS,
          deadlines: str | None = DEADLINES) -> list[Path]:
    """Write the roster, every submission and ``deadlines.toml`` under ``target``; return the files written."""
    written = []
    with tempfile.TemporaryDirectory() as tmp:
        releases = {"zh_CN": release_of(root, [aid for works in students.values() for aid in works], Path(tmp))}
        if any(work.edition == "en" for works in students.values() for work in works.values()):
            from ctx_course.release import generate_release

            releases["en"] = Path(tmp) / "lessons-en"
            generate_release(root, release=releases["en"], work=Path(tmp) / "work-en", language="en")
        submitted = target / "submitted"
        if submitted.exists():
            shutil.rmtree(submitted)
        for student, works in students.items():
            for assignment, work in works.items():
                notebooks = sorted((releases[work.edition] / assignment).glob("*.ipynb"))
                if len(notebooks) != 1:
                    raise ValueError(f"assignment {assignment!r} must have one released notebook "
                                     f"(got {len(notebooks)})")
                released = notebooks[0]
                source = root / "solutions" / assignment / released.name
                folder = submitted / student / assignment
                folder.mkdir(parents=True)
                path = folder / (work.filename or released.name)
                path.write_text(submission(released, source, work), encoding="utf-8")
                written.append(path)
                if work.timestamp is not None:
                    (folder / "timestamp.txt").write_text(work.timestamp + "\n", encoding="utf-8")
                    written.append(folder / "timestamp.txt")
    target.mkdir(parents=True, exist_ok=True)
    roster = target / "roster.csv"
    with roster.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["id", "first_name", "last_name", "email", "lms_user_id"])
        writer.writerows(ROSTER)
    if deadlines is not None:
        (target / "deadlines.toml").write_text(deadlines, encoding="utf-8")
        written.append(target / "deadlines.toml")
    return [roster, *written]


if __name__ == "__main__":
    for path in [*build(), *build(target=CAPSTONE, students=CAPSTONE_STUDENTS, deadlines=None)]:
        print(path.relative_to(ROOT))
