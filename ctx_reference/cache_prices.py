"""Prompt-cache prices by model and time to live, and the multiples of the input price the simulation takes.

What this covers: the cache prices of the two Sonnet models notebook 06 talks about, per million
tokens as their model pages give them (`CACHE_PRICES`), and `cache_multiples`: the write and read
prices divided by the model's base input price, which is what ``SimParams(cache_write=...,
cache_read=...)`` means. The lesson's defaults, 1.25 and 0.1, are Sonnet 5's five-minute write and
its read; Sonnet 5.5 reads at half that, and a one-hour write costs twice the input price.

What it leaves out: every other model (read its prices on the provider's pricing page), batch
discounts, long-context surcharges, OpenAI's cache prices (notebook 07 states its write price),
and taxes and currencies: all prices are USD.

Vocabulary:
    time to live (TTL) -- how long a cache entry lives after its last use: ``"5m"`` (the default)
                          or ``"1h"``; the longer one costs more to write, the same to read.
    multiple           -- a price divided by the model's base input price per token.

Used by notebook 06 (strategies), section 7.4.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctx_reference._validate import require_str

#: The times to live a cache write can take, in the order `CachePrice` lists their prices.
TTLS = ("5m", "1h")


@dataclass(frozen=True)
class CachePrice:
    """One model's prices in USD per million tokens: base input, a cache write per TTL, a cache read."""

    model: str
    input: float
    write_5m: float
    write_1h: float
    read: float
    fact: str  # stable id of the row's entry in docs/api-sources.md


#: The cache prices of Sonnet 5 and Sonnet 5.5 (USD per million tokens), each row sourced in docs/api-sources.md.
CACHE_PRICES: tuple[CachePrice, ...] = (
    CachePrice("claude-sonnet-5", 2.0, 2.5, 4.0, 0.2, "prices.sonnet-5"),
    CachePrice("claude-sonnet-5-5", 2.0, 2.5, 4.0, 0.1, "prices.sonnet-5-5"),
)


def cache_price(model: str) -> CachePrice:
    """Return the `CACHE_PRICES` row of an API model id; raise ValueError naming `model` for one it does not list.

    >>> cache_price("claude-sonnet-5-5").read
    0.1
    """
    require_str(model, "model")
    for row in CACHE_PRICES:
        if row.model == model:
            return row
    raise ValueError(f"model must be one of {', '.join(r.model for r in CACHE_PRICES)}; read other models' prices "
                     f"on the provider's pricing page (got {model!r})")


def cache_multiples(model: str, ttl: str = "5m") -> tuple[float, float]:
    """Return (write, read) as multiples of the model's input price, for a cache write of time to live `ttl`.

    >>> cache_multiples("claude-sonnet-5"), cache_multiples("claude-sonnet-5-5", "1h")
    ((1.25, 0.1), (2.0, 0.05))

    Sonnet 5: 2.50 / 2 = 1.25 and 0.20 / 2 = 0.1, the lesson's numbers; Sonnet 5.5 with a one-hour
    write: 4 / 2 = 2 and 0.10 / 2 = 0.05. Used by notebook 06.
    """
    row = cache_price(model)
    if ttl not in TTLS:
        raise ValueError(f"ttl must be one of {', '.join(map(repr, TTLS))} (got {ttl!r})")
    write = row.write_5m if ttl == "5m" else row.write_1h
    return write / row.input, row.read / row.input


#: The API facts this module states, by the stable id of their entry in docs/api-sources.md (each row of CACHE_PRICES
#: carries its own); tests/test_api_sources.py checks that every id has an entry.
API_FACTS: dict[str, tuple[str, ...]] = {
    **{row.fact: () for row in CACHE_PRICES},
    "prices.ttl": ("TTLS",),
}
#: Public constants that are not facts about an API (none).
LESSON_CONSTANTS: tuple[str, ...] = ()
