"""Checks of the values of public options, shared by every function that takes them: a bool is
exactly ``True`` or ``False`` (``strict="false"`` is not silently true), a number is an int or a
float but never a bool nor NaN, a choice is one of its names. Each failure is a UsageError that
names the option and what it got."""

from __future__ import annotations

import math
import numbers
from typing import Any, Optional, Sequence

from remat import _core
from remat.errors import UsageError

__all__ = ["check_bool", "check_int", "check_number", "check_choice", "check_text",
           "check_seed", "check_strategy"]

# The C++ planner's seeds are 32-bit ints.
SEED_RANGE = (-2 ** 31, 2 ** 31 - 1)


def _got(value: Any) -> str:
    kind = type(value)
    name = kind.__qualname__ if kind.__module__ == "builtins" else \
        f"{kind.__module__}.{kind.__qualname__}"
    return f"{value!r} ({name})"


def check_bool(name: str, value: Any) -> bool:
    """``value`` when it is a bool; UsageError otherwise (a string or 0/1 is not one)."""
    if not isinstance(value, bool):
        raise UsageError(f"{name} must be True or False, got {_got(value)}")
    return value


def check_int(name: str, value: Any, *, low: Optional[int] = None,
              high: Optional[int] = None) -> int:
    """``value`` as an int when it is an integer (an int or numpy's, not a bool) within
    [low, high]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise UsageError(f"{name} must be an int{_range(low, high)}, got {_got(value)}")
    if (low is not None and value < low) or (high is not None and value > high):
        raise UsageError(f"{name} must be an int{_range(low, high)}, got {value}")
    return int(value)


def check_number(name: str, value: Any, *, low: Optional[float] = None,
                 high: Optional[float] = None, above_low: bool = False,
                 finite: bool = True) -> float:
    """``value`` as a float when it is a real number (an int or a float, numpy's too; not a
    bool, never NaN) within the bounds: ``low`` itself excluded with ``above_low``, infinity
    excluded with ``finite``."""
    what = f"{'a finite number' if finite else 'a number'}{_range(low, high, above_low)}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise UsageError(f"{name} must be {what}, got {_got(value)}")
    number = float(value)
    if math.isnan(number) or (finite and math.isinf(number)) or \
            (low is not None and (number < low or (above_low and number == low))) or \
            (high is not None and number > high):
        raise UsageError(f"{name} must be {what}, got {value!r}")
    return number


def check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` when it is one of the strings ``choices``."""
    if not isinstance(value, str) or value not in choices:
        raise UsageError(f"{name} must be one of {', '.join(choices)}, got {_got(value)}")
    return value


def check_text(name: str, value: Any) -> str:
    """``value`` when it is a string."""
    if not isinstance(value, str):
        raise UsageError(f"{name} must be a string, got {_got(value)}")
    return value


def check_seed(value: Any) -> int:
    return check_int("seed", value, low=SEED_RANGE[0], high=SEED_RANGE[1])


def check_strategy(value: Any, name: str = "strategy") -> str:
    """``value`` when it is one of ``remat.strategy_names()``."""
    names = _core.strategy_names()
    if not isinstance(value, str) or value not in names:
        raise UsageError(f"unknown {name} {value!r}; choose from: {', '.join(names)}")
    return value


def _range(low: Optional[float], high: Optional[float], above_low: bool = False) -> str:
    if low is not None and high is not None:
        return f" in {'(' if above_low else '['}{low:g}, {high:g}]"
    if low is not None:
        return f" {'>' if above_low else '>='} {low:g}"
    if high is not None:
        return f" <= {high:g}"
    return ""
