"""The real rulers load offline from installed package data, verified, and fail in one line without it."""
from __future__ import annotations

import ast
import base64
import gzip
import hashlib
import inspect
import json
import subprocess
import sys
import textwrap
from dataclasses import replace

import pytest

from ctx_reference import Tokenizer, WindowLedger
from ctx_reference.rulers import (
    O200K_BASE,
    O200K_BASE_SHA256,
    QWEN,
    RULER_SPECS,
    RulerSpec,
    RulerUnavailable,
    load_ruler,
    locate_data,
    read_ranks,
    real_rulers,
)

from conftest import REPO

tiktoken = pytest.importorskip("tiktoken", reason="the tokenizers extra is not installed")


def _toy_spec(data: bytes, gzipped: bool = False) -> RulerSpec:
    return RulerSpec("toy", "toy_pkg", "toy-pkg", "vocab.tiktoken", gzipped, hashlib.sha256(data).hexdigest(), ".", ())


def test_o200k_digest_is_the_one_tiktoken_expects():
    """O200K_BASE_SHA256 is the expected_hash written in the installed tiktoken's o200k_base()."""
    import tiktoken_ext.openai_public as openai_public

    source = inspect.getsource(openai_public.o200k_base)
    assert f'expected_hash="{O200K_BASE_SHA256}"' in source


def test_o200k_pattern_is_the_one_tiktoken_uses():
    """Our o200k_base pre-tokenizer is the "|".join([...]) of string literals in tiktoken's o200k_base()."""
    import tiktoken_ext.openai_public as openai_public

    tree = ast.parse(textwrap.dedent(inspect.getsource(openai_public.o200k_base)))
    (join,) = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
               and node.func.attr == "join" and getattr(node.func.value, "value", None) == "|"]
    assert "|".join(ast.literal_eval(join.args[0])) == O200K_BASE.pattern


def test_qwen_pattern_is_the_one_dashscope_uses():
    """Our Qwen pre-tokenizer is the PAT_STR of the installed dashscope's Qwen tokenizer (read, not imported)."""
    path = locate_data(QWEN).parent.parent / "tokenizers" / "qwen_tokenizer.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    (value,) = [node.value for node in tree.body if isinstance(node, ast.Assign)
                and [getattr(t, "id", None) for t in node.targets] == ["PAT_STR"]]
    assert ast.literal_eval(value) == QWEN.pattern


def test_real_rulers_load_from_installed_packages_without_network():
    """Both real rulers load with no note, in a process where any socket connection raises."""
    code = textwrap.dedent("""
        import json, socket
        def refuse(*args, **kwargs):
            raise OSError("no network in this test")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        from ctx_reference.rulers import real_rulers
        rulers, notes = real_rulers()
        print(json.dumps([sorted(rulers), list(notes)]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout
    assert json.loads(out) == [["Qwen", "o200k_base"], []]


def test_o200k_counts_hello_world_as_tiktoken_does():
    """o200k_base encodes "hello world" as [24912, 2375], the ids tiktoken's own test suite gives."""
    ruler = load_ruler(O200K_BASE)
    assert ruler.encoding.encode_ordinary("hello world") == [24912, 2375]
    assert ruler.count("hello world") == 2


def test_qwen_counts_hello_world_with_qwen_ids():
    """The Qwen ruler encodes "Hello world" as [9707, 1879], Qwen's published ids, and has 151,851 ids."""
    ruler = load_ruler(QWEN)
    assert ruler.encoding.encode_ordinary("Hello world") == [9707, 1879]
    assert ruler.encoding.n_vocab == 151_643 + 208  # 3 named special tokens + 205 extras


def test_qwen_normalizes_to_nfc():
    """Qwen counts a decomposed "é" (e + combining accent) as it counts the composed one."""
    ruler = load_ruler(QWEN)
    assert ruler.count("caf\u0065\u0301") == ruler.count("caf\u00e9")


def test_special_tokens_in_text_are_counted_as_text():
    """A text containing "<|endoftext|>" is counted as plain text, not refused and not one token."""
    ruler = load_ruler(O200K_BASE)
    assert ruler.count("<|endoftext|>") > 1


def test_real_ruler_is_a_tokenizer_the_ledger_accepts():
    """A real ruler satisfies the Tokenizer protocol and a WindowLedger records with it unchanged."""
    ruler = load_ruler(O200K_BASE)
    assert isinstance(ruler, Tokenizer)
    entry = WindowLedger(tokenizer=ruler).record("greet", task_state="hello world", history="hello world")
    assert (dict(entry.tokens), entry.total) == ({"system": 0, "task_state": 2, "tool_results": 0, "history": 2}, 4)


def test_real_ruler_rejects_non_text():
    """count(None) raises ValueError naming text."""
    with pytest.raises(ValueError, match="text must be a str"):
        load_ruler(O200K_BASE).count(None)


def test_read_ranks_parses_a_verified_file():
    """Two base64 lines with ranks 0 and 1 give {b'a': 0, b'b': 1}."""
    data = base64.b64encode(b"a") + b" 0\n" + base64.b64encode(b"b") + b" 1\n"
    assert read_ranks(_toy_spec(data), data) == {b"a": 0, b"b": 1}
    assert read_ranks(_toy_spec(data, gzipped=True), gzip.compress(data)) == {b"a": 0, b"b": 1}


def test_corrupt_bytes_give_one_line_naming_the_ruler():
    """One changed byte raises RulerUnavailable: one line naming the ruler, 'corrupt' and the package to reinstall."""
    data = base64.b64encode(b"a") + b" 0\n"
    with pytest.raises(RulerUnavailable) as error:
        read_ranks(_toy_spec(data), data.replace(b"0", b"1"))
    message = str(error.value)
    assert "\n" not in message and message.startswith("toy: ") and "corrupt" in message and "toy-pkg" in message


def test_file_that_does_not_decompress_gives_one_line():
    """A gzipped spec given bytes that are not gzip raises RulerUnavailable in one line."""
    with pytest.raises(RulerUnavailable, match="^toy: the data file does not decompress") as error:
        read_ranks(_toy_spec(b"x", gzipped=True), b"not gzip at all")
    assert "\n" not in str(error.value)


def test_missing_package_gives_one_line_with_the_install_command():
    """A spec whose package is not installed raises RulerUnavailable naming it and the extra to install."""
    spec = replace(O200K_BASE, package="no_such_tokenizer_package", distribution="no-such-tokenizer-package")
    with pytest.raises(RulerUnavailable) as error:
        locate_data(spec)
    message = str(error.value)
    assert "\n" not in message and "no-such-tokenizer-package is not installed" in message
    assert '.[tokenizers]' in message


def test_corrupt_installed_file_gives_one_line(tmp_path, monkeypatch):
    """An installed package whose o200k_base file lost its last line: load_ruler raises one line saying corrupt."""
    good = gzip.decompress(locate_data(O200K_BASE).read_bytes())
    package = tmp_path / "broken_bpe"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "data" / "o200k_base.tiktoken.gz").write_bytes(gzip.compress(good.rsplit(b"\n", 2)[0] + b"\n"))
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = replace(O200K_BASE, package="broken_bpe", distribution="broken-bpe")
    with pytest.raises(RulerUnavailable, match=r"^o200k_base: the data file is corrupt \(SHA-256 .*broken-bpe$"):
        load_ruler(spec)


def test_real_rulers_collect_one_note_per_missing_ruler():
    """With one spec pointing at a missing package, real_rulers returns the other ruler and one note."""
    missing = replace(QWEN, package="no_such_tokenizer_package", distribution="no-such-tokenizer-package")
    rulers, notes = real_rulers((O200K_BASE, missing))
    assert list(rulers) == ["o200k_base"] and len(notes) == 1 and notes[0].startswith("Qwen: ")


def test_without_tiktoken_every_ruler_is_one_note():
    """In a process where tiktoken cannot be imported, real_rulers returns no ruler and one line per ruler."""
    code = textwrap.dedent("""
        import json, sys
        sys.modules["tiktoken"] = None   # import tiktoken now raises ImportError
        from ctx_reference.rulers import real_rulers
        rulers, notes = real_rulers()
        print(json.dumps([list(rulers), list(notes)]))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO).stdout
    rulers, notes = json.loads(out)
    assert rulers == []
    assert [n.split(":")[0] for n in notes] == [spec.name for spec in RULER_SPECS]
    assert all("tiktoken is not installed" in n and "\n" not in n for n in notes)


FALLBACK_RUN = """
import contextlib, io, json, sys
sys.modules["tiktoken"] = None   # the tokenizers extra hidden: import tiktoken raises ImportError
sys.path.insert(0, {tests!r})
import matplotlib
matplotlib.use("Agg")
from notebook_cells import cells, source, _runnable
out = io.StringIO()
namespace = {{"__name__": "__main__"}}
with contextlib.redirect_stdout(out):
    for cell in cells("09-context-ledger"):
        if cell["cell_type"] == "code":
            exec(compile(_runnable(source(cell)), cell["id"], "exec"), namespace)
print(json.dumps(out.getvalue()))
"""


def test_notebook_section_falls_back_to_the_fake_ruler_without_the_extra():
    """Notebook 09 runs to its end with tiktoken hidden: one line per ruler, the fake ruler in its place, fits shown."""
    code = FALLBACK_RUN.format(tests=str(REPO / "tests"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    printed = json.loads(done.stdout)
    assert "没有载入： o200k_base: tiktoken is not installed" in printed
    assert "没有载入： Qwen: tiktoken is not installed" in printed
    assert "下面用 FakeTokenizer 代替真实的一列" in printed
    assert "尺子： FakeTokenizer、EstimateTokenizer、FakeTokenizer（代替）" in printed
    assert "o200k_base：每个 ASCII 字符 0.280 token" in printed  # the exercise uses recorded receipts
