"""Write the bank of generated cases: ``python -m ctx_reference.checks.bank`` (``--check`` only compares).

Covers: drawing the calls of every strategy of an exercise with Hypothesis, with a fixed seed
(one for the visible cases, another for the hidden ones), its example database off and its
health checks and deadline off, so that the same version of Hypothesis draws the same calls in
the same order on every machine; calling the exercise's reference (the oracle) on each; and
writing ``bank/<exercise>.json.gz`` (the visible cases with their expected values, smallest first)
and ``bank/<exercise>.hidden.json.gz`` (the hidden cases with the digest of theirs), each JSON text
of one case per line compressed by gzip (``zcat`` shows it). A bank holds thousands of cases (as
many as its check cell runs in about a second): gzip keeps the banks under 2 MB of package data
instead of 32, the stdlib reads them back (``bank.cases``) with no parser but ``json``,
and a check cell reads the visible part only. Calls that repeat, and hidden calls that are
also visible, are dropped. One search decides both: the hidden cases come from the same
strategies as the visible ones, with another seed, and each strategy gives as many hidden calls
as visible ones (fewer only where its domain has no more calls), so that a wrong answer the
hidden cases catch is one the visible cases would catch as often.

A strategy may also be a list of calls, taken as they are, in order, with no hidden part (the
capstone's sweep of seeds).

Leaves out: the strategies (``strategies/``), reading the cases (``bank``) and running them (``generated.py``).
"""
from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Callable, Mapping
from importlib import resources
from pathlib import Path
from typing import Any
from unittest import mock

import hypothesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import providers

from ..bank import ERRORS, FILES, error_name
from ..generated import Generated
from ..runner import copied_call
from ..values import Shared, digest, encode, plain

VISIBLE_SEED = 36
HIDDEN_SEED = 3601
EXAMPLES = 24  # calls drawn per strategy, where the strategies module does not say
HIDDEN_DRAWS = 3  # calls drawn for the hidden part per visible call, of which as many new ones as visible are kept
REGENERATE = "python -m ctx_reference.checks.bank"


def draw(strategy: st.SearchStrategy, count: int, seed: int) -> list[Any]:
    """Return the first ``count`` values Hypothesis draws from ``strategy`` with ``seed`` (fewer if it runs out).

    Hypothesis also mixes in constants it finds in the source of the modules imported so far; here it
    finds none, so that the calls drawn depend on the strategy, the seed and Hypothesis's version only,
    not on the package's other code or on what the process happened to import before.
    """
    found: list[Any] = []

    @hypothesis.seed(seed)
    @settings(database=None, max_examples=count, deadline=None, derandomize=False, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value):
        found.append(value)

    with mock.patch.object(providers, "_get_local_constants", providers.Constants):
        collect()
    return found


def _key(args: tuple, kwargs: dict) -> str:
    return json.dumps(encode((args, kwargs)), ensure_ascii=False, sort_keys=True)


def outcome(oracle: Callable, args: tuple, kwargs: dict, spec: Generated) -> dict[str, Any]:
    """Return what the oracle gives for one call: ``{"value": plain data}`` or ``{"raises": name}``."""
    args, kwargs = copied_call(args, kwargs)
    try:
        got = oracle(*args, **kwargs)
    except Exception as exc:
        name = error_name(exc)
        if name not in ERRORS and not name.startswith("ctx_reference."):
            raise  # a failure of the strategy or the oracle, not an error the text states
        return {"raises": name}
    return {"value": plain(spec.project(got) if spec.project is not None else got)}


def _entry(strategy: str, args: tuple, kwargs: dict, oracle: Callable, spec: Generated, hidden: bool) -> dict:
    """Return the bank's entry of one call: the call, and its expected value (a digest, if ``hidden``) or error."""
    result = outcome(oracle, args, kwargs, spec)
    shared = Shared()  # one object in two arguments stays one object
    entry = {"strategy": strategy, "args": encode(list(args), shared), "kwargs": encode(kwargs, shared)}
    if "raises" in result:
        entry["raises"] = result["raises"]
    elif hidden:
        entry["digest"] = digest(result["value"], spec.places)
    else:
        entry["expect"] = encode(result["value"])
    return entry


def _counts(strategies: Mapping[str, Any], count: int | Mapping[str, int]) -> dict[str, int]:
    """Return strategy → calls to draw: ``count`` for each, or the count ``count`` names for each."""
    if isinstance(count, int):
        return dict.fromkeys(strategies, count)
    if set(count) != set(strategies):
        raise ValueError(f"count must name every strategy ({sorted(strategies)}) (got {sorted(count)})")
    return dict(count)


def build(exercise: str, strategies: dict[str, st.SearchStrategy | list], oracle: Callable, spec: Generated,
          count: int | Mapping[str, int] = EXAMPLES) -> dict[str, Any]:
    """Return the bank of ``exercise``: its visible cases (expected values) and hidden ones (digests).

    ``count`` is how many calls each strategy draws, or a mapping of strategy → that number.
    """
    visible: dict[str, dict[str, Any]] = {}
    hidden: dict[str, dict[str, Any]] = {}
    counts = _counts(strategies, count)
    drawn = {name: (list(strategy), []) if isinstance(strategy, (list, tuple))  # listed calls: no hidden part
             else (draw(strategy, counts[name], VISIBLE_SEED), draw(strategy, counts[name] * HIDDEN_DRAWS, HIDDEN_SEED))
             for name, strategy in strategies.items()}
    found = {}  # strategy -> how many visible calls it gave (a call drawn by two strategies counts for the first)
    for name, (calls, _) in drawn.items():
        found[name] = 0
        for args, kwargs in calls:
            key = _key(args, kwargs)
            if key not in visible:
                visible[key] = _entry(name, args, kwargs, oracle, spec, hidden=False)
                found[name] += 1
    for name, (_, calls) in drawn.items():  # after every visible call: no hidden call is also a visible one
        kept = 0
        for args, kwargs in calls:
            key = _key(args, kwargs)
            if kept < found[name] and key not in visible and key not in hidden:
                hidden[key] = _entry(name, args, kwargs, oracle, spec, hidden=True)
                kept += 1
    drawn_order = {key: index for index, key in enumerate(visible)}
    order = sorted(visible, key=lambda key: (len(key), drawn_order[key]))
    return {"exercise": exercise, "regenerate": REGENERATE, "hypothesis": hypothesis.__version__,
            "visible": [visible[key] for key in order], "hidden": list(hidden.values())}


def bank_text(bank: dict[str, Any], part: str) -> str:
    """Return one part of a bank ("visible" or "hidden") as the JSON text stored: its header, then one case a line,
    so that a change shows as lines."""
    head = {k: v for k, v in bank.items() if k not in ("visible", "hidden")}
    header = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in head.items())
    cases = ",\n".join("    " + json.dumps(e, ensure_ascii=False, sort_keys=True) for e in bank[part])
    return f"{{\n{header},\n  {json.dumps(part)}: [\n{cases}\n  ]\n}}\n"


def packed(text: str) -> bytes:
    """Return a bank's text as the bytes stored: gzip with no timestamp, so that the same text gives the same file."""
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


def all_banks(only: tuple[str, ...] = ()) -> dict[str, dict[str, Any]]:
    """Return exercise → its bank, for every exercise with strategies (or those of ``only``)."""
    from .. import GENERATED
    from .strategies import EXAMPLES as COUNTS
    from .strategies import ORACLES, STRATEGIES
    return {exercise: build(exercise, dict(strategies), ORACLES[exercise], GENERATED[exercise],
                            COUNTS.get(exercise, EXAMPLES))
            for exercise, strategies in STRATEGIES.items() if not only or exercise in only}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=REGENERATE, description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the stored banks; write nothing")
    parser.add_argument("exercises", nargs="*", help="only these exercises (default: all)")
    options = parser.parse_args(argv)
    folder = Path(str(resources.files("ctx_reference.checks.bank")))
    stale = []
    for exercise, drawn in all_banks(tuple(options.exercises)).items():
        for part, name in FILES.items():
            path, text = folder / name.format(exercise=exercise), bank_text(drawn, part)
            if path.is_file() and gzip.decompress(path.read_bytes()).decode("utf-8") == text:
                continue
            stale.append(exercise if part == "visible" else f"{exercise} (hidden)")
            if not options.check:
                path.write_bytes(packed(text))
    if options.check and stale:
        print(f"banks out of date: {', '.join(stale)} (regenerate with {REGENERATE})", file=sys.stderr)
        return 1
    print(f"{'stale' if options.check else 'written'}: {', '.join(stale) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
