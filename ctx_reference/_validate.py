"""Argument checks shared by the reference modules: int counts, numbers and text.

Each check returns the value it accepts and raises ValueError otherwise. The
message names the argument and echoes the value, always in the form
``f"{name} must be ... (got {value!r})"``:

- ``require_int``: an int, bool excluded (``True`` is not a count);
  ``"<name> must be an int (got ...)"``, and with a ``minimum``
  ``"<name> must be >= <minimum> (got ...)"``.
- ``require_real``: an int or a float, bool excluded;
  ``"<name> must be a number (got ...)"``. NaN and the infinities pass: a
  caller with a range to enforce checks them itself.
- ``require_str``: a str; ``"<name> must be a str (got ...)"``.

``real_value`` is no check but the reading they share of "a number" in a text: any real
number (``int``, ``float``, ``Fraction``, ``Decimal``, numpy's integers and floats) as the
``int`` or ``float`` of its value, bool excluded; None for anything else.

Subclasses of int, float and str (other than bool) are accepted. Ranges other
than a lower bound for ints, and the wording of such range errors, stay with the
module that knows the model.
"""
from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from numbers import Integral, Real


def require_int(value: object, name: str, minimum: int | None = None) -> int:
    """Return ``value`` if it is an int (bool excluded) and >= ``minimum`` when given.

    >>> require_int(8000, "limit", minimum=1)
    8000
    >>> require_int(True, "keep")
    Traceback (most recent call last):
    ValueError: keep must be an int (got True)
    >>> require_int(-1, "keep", minimum=0)
    Traceback (most recent call last):
    ValueError: keep must be >= 0 (got -1)
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int (got {value!r})")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum} (got {value!r})")
    return value


def require_real(value: object, name: str) -> float:
    """Return ``value`` as a float if it is an int or a float (bool excluded).

    >>> require_real(400_000, "half_at")
    400000.0
    >>> require_real("1.25", "cache_write")
    Traceback (most recent call last):
    ValueError: cache_write must be a number (got '1.25')
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{name} must be a number (got {value!r})")
    return float(value)


def real_value(value: object) -> int | float | None:
    """Return the ``int`` or ``float`` of a real number's value; None if ``value`` is no real number.

    An ``int`` stays as it is and every other real number becomes the nearest ``float``: a
    ``Fraction`` or a ``Decimal`` of exact types (not a subclass), or a numpy integer or
    floating scalar. bool (numpy's too) is not a number here; a value too large for a float is
    None.

    >>> from fractions import Fraction
    >>> from decimal import Decimal
    >>> real_value(Fraction(29_000, 2)), real_value(Decimal("0.1")), real_value(3)
    (14500.0, 0.1, 3)
    >>> real_value(True) is None, real_value("1.25") is None
    (True, True)
    """
    if isinstance(value, (int, float)) and type(value) in (int, float):  # bool and subclasses are not
        return value
    if isinstance(value, (Fraction, Decimal)) and type(value) in (Fraction, Decimal):
        return _float(value)
    if type(value).__module__ != "numpy" or getattr(value, "shape", None) != () or not isinstance(value, Real):
        return None  # numpy's bool_ is no Real
    return int(value) if isinstance(value, Integral) else _float(value)


def _float(value: Real | Decimal) -> float | None:
    try:
        return float(value)
    except (OverflowError, ValueError):  # too large for a float; a signalling NaN
        return None


def require_str(value: object, name: str) -> str:
    """Return ``value`` if it is a str.

    >>> require_str("上下文工程", "text")
    '上下文工程'
    >>> require_str(None, "text")
    Traceback (most recent call last):
    ValueError: text must be a str (got None)
    """
    if not isinstance(value, str):
        raise ValueError(f"{name} must be a str (got {value!r})")
    return value


def require_callable(value: object, name: str) -> object:
    """Return ``value`` if it can be called (a function, a class, an object with ``__call__``).

    >>> require_callable(len, "tokenizer") is len
    True
    >>> require_callable("len", "tokenizer")
    Traceback (most recent call last):
    ValueError: tokenizer must be callable (got 'len')
    """
    if not callable(value):
        raise ValueError(f"{name} must be callable (got {value!r})")
    return value
