"""The exceptions of the remat package.

``Error``, ``InputError``, ``UsageError`` and ``InternalError`` are the C++ planner's own error
classes (raised from ``remat._core`` one to one). The front end adds subclasses that say which
kind of bad input it met.
"""

from remat._core import Error, InfeasibleBudgetError, InputError, InternalError, UsageError

__all__ = [
    "Error", "InputError", "UsageError", "InternalError", "CaptureError", "UnknownOpError",
    "InfeasibleBudgetError", "InputMismatchError", "BudgetWarning",
]


class CaptureError(InputError):
    """The training step cannot be traced into one graph (for example data-dependent control
    flow); the message names the operation and the original error is chained."""


class UnknownOpError(InputError):
    """An operation has no cost rule; pass ``unknown_ops="zero-cost"`` to charge it nothing."""


# InfeasibleBudgetError (a subclass of InputError, raised by the C++ planner when the fixed
# memory fills the device, and by the front end when the budget is below the minimum peak or
# the chosen strategy found no schedule within it) comes from remat._core.

class InputMismatchError(UsageError):
    """A step was called with inputs whose shape, dtype or device differ from the example's."""


class BudgetWarning(UserWarning):
    """A compiled region has no schedule within its budget and runs the least-peak schedule
    found instead (``wrap`` and ``backend`` without ``strict=True``), or Inductor estimates a
    compiled graph's peak above the region's plan (``backend``)."""
