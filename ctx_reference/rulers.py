"""Real tokenizers as rulers for the context ledger, loaded offline from installed packages.

What the module covers: `TiktokenRuler` wraps a `tiktoken` encoding so that it satisfies the
ledger's `Tokenizer` protocol (``count(text) -> int``) and can be injected into `measure` or
`WindowLedger` exactly like `FakeTokenizer`; nothing in the ledger changes. Two rulers are
described by a `RulerSpec` each:

* ``o200k_base``: OpenAI's encoding of the GPT-4o / GPT-4.1 / o-series models. tiktoken itself
  downloads its file at run time; here the file comes from the ``bpe-openai`` package, which ships
  it gzipped, and must have the SHA-256 that tiktoken's own ``tiktoken_ext/openai_public.py``
  expects (`O200K_BASE_SHA256`), so it is byte for byte the file OpenAI publishes.
* ``Qwen``: the byte-level BPE vocabulary of Alibaba's Qwen models (151,643 tokens), the file
  ``qwen.tiktoken`` that Alibaba Cloud's ``dashscope`` SDK ships for its local token counter;
  it must have the SHA-256 of the file the Qwen team publishes beside its models
  (`QWEN_SHA256`). Text is NFC-normalized first, as Qwen's tokenizer does.

Both packages are the optional ``tokenizers`` extra (``pip install -e ".[tokenizers]"``; ``make
lab`` and ``make test`` install it). Only their data files are read: neither package is imported.

What it leaves out: chat templates (the few tokens a provider adds around every message),
images and tool schemas; special tokens written in a text (``<|endoftext|>``) are counted as
plain text. A ruler counts a text; the bill is still the API's usage receipt.

Failure: a missing package, a missing file, a file that does not decompress or whose SHA-256
differs raises `RulerUnavailable` with one line saying which ruler, what is wrong and how to fix
it. `real_rulers` loads every spec it can and returns one such line per ruler it could not, so a
notebook can fall back to the fake ruler with a note instead of a traceback.

Vocabulary:
    ruler      -- anything with ``count(text) -> int`` (the ledger's `Tokenizer`).
    data file  -- a ``.tiktoken`` file: one ``base64(token bytes) rank`` pair per line.

Used by notebook 09-context-ledger (section "对账：校准估算") and ``benchmarks/bench_rulers.py``.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import importlib.util
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctx_reference._validate import require_str
from ctx_reference.tokens import Tokenizer

__all__ = [
    "RulerUnavailable",
    "RulerSpec",
    "TiktokenRuler",
    "O200K_BASE",
    "QWEN",
    "RULER_SPECS",
    "O200K_BASE_SHA256",
    "QWEN_SHA256",
    "read_ranks",
    "locate_data",
    "load_ruler",
    "real_rulers",
]

#: The SHA-256 that tiktoken expects of o200k_base.tiktoken (tiktoken_ext/openai_public.py).
O200K_BASE_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
#: The SHA-256 of qwen.tiktoken as the Qwen team publishes it with its models (Qwen-7B, Qwen-72B).
QWEN_SHA256 = "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186"

# o200k_base's pre-tokenizer, as tiktoken_ext/openai_public.py joins it (tests compare the two).
O200K_PATTERN = "|".join([
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
# Qwen's pre-tokenizer (the Qwen tokenizer's published PAT_STR).
QWEN_PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)
QWEN_SPECIAL_START = 151_643  # id of <|endoftext|>, the first of Qwen's special tokens
QWEN_EXTRA_TOKENS = 205  # <|extra_0|> ... <|extra_204|>

INSTALL_HINT = 'pip install -e ".[tokenizers]"'


class RulerUnavailable(Exception):
    """A real ruler cannot be loaded; ``str(error)`` is one line naming the ruler and the fix."""


@dataclass(frozen=True)
class RulerSpec:
    """Where one real ruler's data file lives and how to build its encoding.

    `package` is the import name of the package that ships the file, `resource` the file's path
    inside that package, `gzipped` whether it is stored compressed; `sha256` is the digest of the
    uncompressed file; `pattern`, `special_tokens` and `nfc` rebuild the encoding around it.
    """

    name: str
    package: str
    distribution: str
    resource: str
    gzipped: bool
    sha256: str
    pattern: str
    special_tokens: tuple[tuple[str, int], ...]
    nfc: bool = False


O200K_BASE = RulerSpec(
    name="o200k_base",
    package="bpe_openai",
    distribution="bpe-openai",
    resource="data/o200k_base.tiktoken.gz",
    gzipped=True,
    sha256=O200K_BASE_SHA256,
    pattern=O200K_PATTERN,
    special_tokens=(("<|endoftext|>", 199_999), ("<|endofprompt|>", 200_018)),
)

QWEN = RulerSpec(
    name="Qwen",
    package="dashscope",
    distribution="dashscope",
    resource="resources/qwen.tiktoken",
    gzipped=False,
    sha256=QWEN_SHA256,
    pattern=QWEN_PATTERN,
    special_tokens=tuple(
        (token, QWEN_SPECIAL_START + i)
        for i, token in enumerate(
            ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + [f"<|extra_{k}|>" for k in range(QWEN_EXTRA_TOKENS)]
        )
    ),
    nfc=True,
)

#: Every real ruler the workbook knows, in the order tables show them.
RULER_SPECS = (O200K_BASE, QWEN)


def read_ranks(spec: RulerSpec, data: bytes) -> dict[bytes, int]:
    """Return the token ranks of a data file's bytes, after checking them against ``spec.sha256``.

    Raises `RulerUnavailable` (one line) if the bytes do not decompress or their SHA-256 differs.

    >>> line = base64.b64encode(b"ab") + b" 0\\n"
    >>> spec = RulerSpec("toy", "toy", "toy", "toy.tiktoken", False, hashlib.sha256(line).hexdigest(), ".", ())
    >>> read_ranks(spec, line)
    {b'ab': 0}
    >>> try:
    ...     read_ranks(spec, line + b"x")
    ... except RulerUnavailable as error:
    ...     print(str(error)[:38])
    toy: the data file is corrupt (SHA-256
    """
    if not isinstance(spec, RulerSpec):
        raise ValueError(f"spec must be a RulerSpec (got {spec!r})")
    if not isinstance(data, bytes):
        raise ValueError(f"data must be bytes (got {type(data).__name__})")
    if spec.gzipped:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as error:
            raise RulerUnavailable(
                f"{spec.name}: the data file does not decompress ({error}), reinstall it: "
                f"pip install --force-reinstall {spec.distribution}"
            ) from None
    digest = hashlib.sha256(data).hexdigest()
    if digest != spec.sha256:
        raise RulerUnavailable(
            f"{spec.name}: the data file is corrupt (SHA-256 {digest[:12]}..., expected {spec.sha256[:12]}...), "
            f"reinstall it: pip install --force-reinstall {spec.distribution}"
        )
    ranks = {}
    try:
        for line in data.splitlines():
            if line:
                token, rank = line.split()
                ranks[base64.b64decode(token, validate=True)] = int(rank)
    except (ValueError, binascii.Error):  # cannot happen for a file with the right digest
        raise RulerUnavailable(f"{spec.name}: the data file is not a .tiktoken file") from None
    return ranks


def locate_data(spec: RulerSpec) -> Path:
    """Return the path of ``spec``'s data file inside its installed package (the package is not imported).

    Raises `RulerUnavailable` if the package or the file is missing.
    """
    if not isinstance(spec, RulerSpec):
        raise ValueError(f"spec must be a RulerSpec (got {spec!r})")
    try:
        found = importlib.util.find_spec(spec.package)
    except (ImportError, ValueError):
        found = None
    if found is None or not found.submodule_search_locations:
        raise RulerUnavailable(
            f"{spec.name}: the package {spec.distribution} is not installed ({INSTALL_HINT} installs it)"
        )
    path = Path(list(found.submodule_search_locations)[0]) / spec.resource
    if not path.is_file():
        raise RulerUnavailable(
            f"{spec.name}: {spec.distribution} has no {spec.resource}, reinstall it: "
            f"pip install --force-reinstall {spec.distribution}"
        )
    return path


class TiktokenRuler:
    """A `Tokenizer` that counts with a real tiktoken encoding: ``count(text)`` is its token count.

    Special tokens in the text are counted as ordinary text; with ``nfc`` the text is first
    NFC-normalized (Qwen's tokenizer does this). Build one with `load_ruler`.
    """

    def __init__(self, name: str, encoding: Any, nfc: bool = False) -> None:
        self.name = require_str(name, "name")
        self.encoding = encoding
        self.nfc = nfc

    def count(self, text: str) -> int:
        """Return the number of tokens of ``text`` under this encoding."""
        require_str(text, "text")
        if self.nfc:
            text = unicodedata.normalize("NFC", text)
        return len(self.encoding.encode_ordinary(text))

    def __repr__(self) -> str:
        return f"TiktokenRuler({self.name!r})"


def load_ruler(spec: RulerSpec) -> TiktokenRuler:
    """Return the `TiktokenRuler` of ``spec``, built from its verified data file; nothing is downloaded.

    Raises `RulerUnavailable` (one line) if tiktoken, the package or the file is missing or the
    file is corrupt.
    """
    if not isinstance(spec, RulerSpec):
        raise ValueError(f"spec must be a RulerSpec (got {spec!r})")
    try:
        import tiktoken
    except ImportError:
        raise RulerUnavailable(f"{spec.name}: tiktoken is not installed ({INSTALL_HINT} installs it)") from None
    ranks = read_ranks(spec, locate_data(spec).read_bytes())
    encoding = tiktoken.Encoding(
        name=spec.name, pat_str=spec.pattern, mergeable_ranks=ranks, special_tokens=dict(spec.special_tokens)
    )
    return TiktokenRuler(spec.name, encoding, nfc=spec.nfc)


def real_rulers(specs: tuple[RulerSpec, ...] = RULER_SPECS) -> tuple[Mapping[str, Tokenizer], tuple[str, ...]]:
    """Return (the rulers that loaded, by name; one line per ruler that did not).

    With the ``tokenizers`` extra installed: ``({'o200k_base': ..., 'Qwen': ...}, ())``; without
    it, ``({}, ('o200k_base: tiktoken is not installed (...)', 'Qwen: ...'))``.

    Used by notebook 09-context-ledger and ``benchmarks/bench_rulers.py``.
    """
    rulers: dict[str, Tokenizer] = {}
    notes = []
    for spec in specs:
        try:
            rulers[spec.name] = load_ruler(spec)
        except RulerUnavailable as error:
            notes.append(str(error))
    return rulers, tuple(notes)
