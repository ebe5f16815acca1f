"""Window math: will a request fit, how much can it generate, when to compact.

What this covers:
    * ``Window.check``: whether a request fits its model's context window, may be cut
      short while generating, or is refused outright.
    * ``Window.max_output``: how many output tokens are left once the input is in.
    * ``remaining``: the room left after a cached conversation, and whether that room
      is small enough (under a tenth of the window) to compact now.
    * ``MODEL_TABLE``: the window and output limits per model family, as data: the lesson's
      table, re-read against the providers' model pages where they could be read
      (``source="docs"``), with each family's status there (current, legacy, retired);
      ``model_limits`` reads it by family name or API model id.

What counts toward the window: the system prompt, every message (tool results,
images and documents included), the tool definitions, and this turn's output,
thinking included. Cached tokens occupy the window like any others: caching
changes the price of a token, not the room it takes.

What it leaves out: per-request image or page limits, request-size limits, price
tiers, and the exact token count (see ``tokens.estimate_tokens``).

Vocabulary:
    window        -- the most tokens (input plus output) one request may occupy.
    input tokens  -- everything sent with the request.
    max_tokens    -- the output cap the caller asks for (thinking included).
    read / write  -- cache-read and cache-creation input tokens as a usage receipt reports
                     them; the receipt's ``input_tokens`` only counts what follows the
                     last cache breakpoint, so all three must be added.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from ctx_reference._validate import require_int, require_str

COMPACT_FRACTION_DENOMINATOR = 10  # compact when left < window / 10
LONG_WINDOW = 1_000_000  # tokens: window of the long-context families (Oct 2026)
LONG_MAX_OUTPUT = 128_000  # tokens: max output of the long-context families
DEFAULT_WINDOW = 200_000  # tokens: the lesson's window for every family it did not list
SHORT_MAX_OUTPUT = 64_000  # tokens: max output of the 200,000-token families the docs list (Haiku 4.5, Sonnet 4.5)
# A MAY_TRUNCATE request is accepted and stopped at the window edge by models from this
# generation on; models before it answer the same request with a validation error.
TRUNCATES_SINCE_GENERATION = (4, 5)
WINDOW_STOP_REASON = "model_context_window_exceeded"  # stop reason of a truncated response


class Outcome(Enum):
    """What happens to a request, judged before it is sent."""

    FITS = "fits"  # input plus the full max_tokens fit in the window
    MAY_TRUNCATE = "may_truncate"  # input fits; output may stop at the window edge
    REJECTED = "rejected"  # the input alone is larger than the window


@dataclass(frozen=True)
class Window:
    """A context window of ``size`` tokens (size >= 1)."""

    size: int

    def __post_init__(self) -> None:
        require_int(self.size, "size", minimum=1)

    def check(self, input_tokens: int, max_tokens: int) -> Outcome:
        """Return REJECTED if input > size, MAY_TRUNCATE if input + max_tokens > size, else FITS.

        >>> Window(1_000_000).check(950_000, 128_000)
        <Outcome.MAY_TRUNCATE: 'may_truncate'>

        The seed request: 950,000 + 128,000 = 1,078,000 > 1,000,000, but the input
        alone fits. Models from the 4.5 generation on accept it and stop at the
        window edge (``WINDOW_STOP_REASON``); older models reject it up front.
        Used by notebook 01-window-math.
        """
        require_int(input_tokens, "input_tokens", minimum=0)
        require_int(max_tokens, "max_tokens", minimum=0)
        if input_tokens > self.size:
            return Outcome.REJECTED
        if input_tokens + max_tokens > self.size:
            return Outcome.MAY_TRUNCATE
        return Outcome.FITS

    def max_output(self, input_tokens: int) -> int:
        """Return the output tokens that fit after the input: size - input, or 0 if none.

        >>> Window(1_000_000).max_output(950_000)
        50000

        An input larger than the window returns 0 rather than raising: such a
        request is REJECTED by ``check`` and generates nothing, and 0 keeps the
        function total for plots that sweep the input past the window.
        Used by notebook 01-window-math.
        """
        require_int(input_tokens, "input_tokens", minimum=0)
        return max(self.size - input_tokens, 0)


def remaining(window: int, read: int, write: int, input: int, max_tokens: int) -> tuple[int, bool]:
    """Return (left, compact): left = window - (read + write + input) - max_tokens, compact iff left < window / 10.

    >>> remaining(1_000_000, 800_000, 50_000, 20_000, 64_000)
    (66000, True)

    1,000,000 - (800,000 + 50,000 + 20,000) - 64,000 = 66,000, under the
    100,000 tenth, so compact. Without the cache fields the same receipt would
    suggest 916,000 left and no need to compact.

    ``left`` is negative when the conversation plus the reserved output is
    already over-committed; that is reported as is (it says by how much), and
    compact is then True. Used by notebook 02-remaining (its exercise).
    """
    require_int(window, "window", minimum=1)
    require_int(read, "read", minimum=0)
    require_int(write, "write", minimum=0)
    require_int(input, "input", minimum=0)
    require_int(max_tokens, "max_tokens", minimum=0)
    left = window - (read + write + input) - max_tokens
    compact = left * COMPACT_FRACTION_DENOMINATOR < window  # left < window / 10, in integers
    return left, compact


#: Where a row of MODEL_TABLE comes from: the lesson's own table, or the provider's documentation
#: (the page and the date it was read are in docs/api-sources.md under the row's ``fact`` id).
SOURCES = ("seed", "docs")
#: A family's lifecycle as the provider's model pages label it: current, legacy (still served, a newer one
#: recommended) or retired (no longer served). A row whose status no page read states has none.
STATUSES = ("current", "legacy", "retired")
_FAMILIES = ("Opus", "Sonnet", "Haiku", "Fable", "Mythos")
_API_ID = re.compile(r"claude-(opus|sonnet|haiku|fable|mythos)-(\d+)(?:-(\d))?(?:-\d{8})?")
_OLD_API_ID = re.compile(r"claude-(\d+)-(\d)-(opus|sonnet|haiku)(?:-\d{8})?")
_FAMILY_NAME = re.compile(rf"({'|'.join(_FAMILIES)}) (\d+(?:\.\d)?|Preview)")


@dataclass(frozen=True)
class ModelLimits:
    """One row of the model table: a family, its window and max output (tokens), its status, and where they come from.

    `read` is when the row was read: the lesson's month (``"2026-10"``) for its own rows, else the day the
    page named by the row's ``fact`` entry in docs/api-sources.md was read.
    """

    family: str
    window: int
    max_output: int | None  # None: the source does not quote it
    status: str | None = None  # one of STATUSES; None: no page read states it (the lesson's rows)
    source: str = "seed"  # one of SOURCES
    fact: str = "window.model-table"  # stable id of the row's entry in docs/api-sources.md
    read: str = "2026-10"

    @property
    def deprecated(self) -> bool:
        """True for a retired family (the name notebooks released before `status` read)."""
        return self.status == "retired"


_DOCS_READ = "2026-12-05"

MODEL_TABLE: tuple[ModelLimits, ...] = (
    ModelLimits("Fable 5.2", LONG_WINDOW, LONG_MAX_OUTPUT, "current", "docs", "window.fable-5-2", _DOCS_READ),
    ModelLimits("Mythos 5.2", LONG_WINDOW, LONG_MAX_OUTPUT, None, "docs", "window.mythos-5-2", _DOCS_READ),
    ModelLimits("Fable 5.1", LONG_WINDOW, LONG_MAX_OUTPUT, "current", fact="window.fable-5-1"),
    ModelLimits("Mythos 5.1", LONG_WINDOW, LONG_MAX_OUTPUT),
    ModelLimits("Fable 5", LONG_WINDOW, LONG_MAX_OUTPUT, "legacy", "docs", "window.fable-5", _DOCS_READ),
    ModelLimits("Mythos 5", LONG_WINDOW, LONG_MAX_OUTPUT, None, "docs", "window.mythos-5", _DOCS_READ),
    ModelLimits("Opus 5.5", LONG_WINDOW, LONG_MAX_OUTPUT),
    ModelLimits("Opus 5", LONG_WINDOW, LONG_MAX_OUTPUT),
    ModelLimits("Opus 4.8", LONG_WINDOW, LONG_MAX_OUTPUT),
    ModelLimits("Opus 4.7", LONG_WINDOW, LONG_MAX_OUTPUT),
    ModelLimits("Opus 4.6", LONG_WINDOW, LONG_MAX_OUTPUT),
    ModelLimits("Sonnet 5.5", LONG_WINDOW, LONG_MAX_OUTPUT, "current", fact="window.sonnet-5-5"),
    ModelLimits("Sonnet 5", LONG_WINDOW, LONG_MAX_OUTPUT, "legacy", "docs", "window.sonnet-5", _DOCS_READ),
    ModelLimits("Sonnet 4.6", LONG_WINDOW, LONG_MAX_OUTPUT),
    ModelLimits("Haiku 5.5", LONG_WINDOW, LONG_MAX_OUTPUT),
    ModelLimits("Haiku 4.5", DEFAULT_WINDOW, SHORT_MAX_OUTPUT, "current", "docs", "window.haiku-4-5", _DOCS_READ),
    ModelLimits("Sonnet 4.5", DEFAULT_WINDOW, SHORT_MAX_OUTPUT, "retired", "docs", "window.sonnet-4-5", _DOCS_READ),
)
"""The lesson's model table (Oct 2026), re-read against the providers' model pages (``source="docs"``, read on `read`).

The lesson gave every family it did not list DEFAULT_WINDOW; `model_limits` does not guess: a family that is
not here raises, and its figures are to be read on the provider's page. Where the pages disagree (which Fable
is current), docs/api-sources.md says so under the row's fact, and notebook 01 says which the table follows."""


def model_family(model: str) -> str:
    """Return the family name (``"Sonnet 5"``) of a family name or of an Anthropic API model id.

    >>> model_family("claude-sonnet-5"), model_family("claude-opus-4-7"), model_family("claude-haiku-4-5-20251001")
    ('Sonnet 5', 'Opus 4.7', 'Haiku 4.5')
    >>> model_family("claude-mythos-preview"), model_family("claude-3-7-sonnet-20250219"), model_family("Opus 5.5")
    ('Mythos Preview', 'Sonnet 3.7', 'Opus 5.5')

    Used by `model_limits` and by the request builders of `ctx_reference.api_requests` (notebook 06).
    """
    require_str(model, "model")
    if model == "claude-mythos-preview":
        return "Mythos Preview"
    if match := _API_ID.fullmatch(model):
        name, major, minor = match.groups()
        return f"{name.capitalize()} {major}" + (f".{minor}" if minor else "")
    if match := _OLD_API_ID.fullmatch(model):
        major, minor, name = match.groups()
        return f"{name.capitalize()} {major}.{minor}"
    if _FAMILY_NAME.fullmatch(model):
        return model
    raise ValueError("model must be a Claude model id such as 'claude-sonnet-5' or a family name such as "
                     f"'Sonnet 5' (got {model!r})")


def model_limits(model: str) -> ModelLimits:
    """Return the MODEL_TABLE row of a family name or an API model id; raise ValueError for one it does not list.

    >>> model_limits("Opus 4.7").window
    1000000
    >>> model_limits("claude-sonnet-5").family
    'Sonnet 5'
    >>> model_limits("Sonnet 4.5").window, model_limits("Sonnet 4.5").status
    (200000, 'retired')
    >>> model_limits("claude-haiku-4-5").max_output, model_limits("Fable 5").source
    (64000, 'docs')

    Used by notebook 01-window-math.
    """
    family = model_family(model)
    for row in MODEL_TABLE:
        if row.family == family:
            return row
    raise ValueError(f"model must be a family of MODEL_TABLE ({', '.join(r.family for r in MODEL_TABLE)}) or its "
                     f"API id; look its window up on the provider's models page (got {model!r}, family {family!r})")


#: The API facts this module states, by the stable id of their entry in docs/api-sources.md: each id names the
#: module's constants it covers (MODEL_TABLE rows carry their own ``fact``). tests/test_api_sources.py checks that
#: every id has an entry and every public constant of the module is an API fact or in LESSON_CONSTANTS.
API_FACTS: dict[str, tuple[str, ...]] = {
    **{row.fact: () for row in MODEL_TABLE},
    "window.model-table": ("LONG_WINDOW", "LONG_MAX_OUTPUT", "DEFAULT_WINDOW"),
    "window.haiku-4-5": ("SHORT_MAX_OUTPUT",),
    "window.truncation": ("TRUNCATES_SINCE_GENERATION", "WINDOW_STOP_REASON"),
}
#: Public constants that are the lesson's own rules or this module's vocabulary, not facts about an API.
LESSON_CONSTANTS = ("COMPACT_FRACTION_DENOMINATOR", "SOURCES", "STATUSES")
