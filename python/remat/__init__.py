"""remat: optimal tensor rematerialization for training (Python package).

The planning, simulation and solving happen in C++ (``remat._core``, a pybind11 module built by
``make``); this package re-exports it with typed helpers. ``remat.torch`` captures a PyTorch
training step, plans it within a memory budget and executes the plan.
"""

from remat._core import (  # noqa: F401  (re-exported API)
    Graph,
    Node,
    NodeKind,
    Schedule,
    ScheduleDocument,
    SimulationResult,
    StrategyRow,
    best_lower_bound,
    build_plan,
    check_schedule,
    format_bytes,
    load_schedule,
    lp_lower_bound,
    minimum_peak_lower_bound,
    resolve_size,
    run_strategy,
    save_schedule,
    simulate,
    strategy_names,
)
from remat.errors import (  # noqa: F401
    CaptureError,
    Error,
    InfeasibleBudgetError,
    InputError,
    InputMismatchError,
    InternalError,
    UnknownOpError,
    UsageError,
)

__all__ = [
    "Graph", "Node", "NodeKind", "Schedule", "ScheduleDocument", "SimulationResult",
    "StrategyRow", "best_lower_bound", "build_plan", "check_schedule", "format_bytes", "load_schedule",
    "lp_lower_bound", "minimum_peak_lower_bound", "resolve_size", "run_strategy",
    "save_schedule", "simulate", "strategy_names",
    "Error", "InputError", "UsageError", "InternalError", "CaptureError", "UnknownOpError",
    "InfeasibleBudgetError", "InputMismatchError",
]
