"""remat: optimal tensor rematerialization for training (Python package).

The planning, simulation and solving happen in C++ (``remat._core``, a pybind11 module built by
``make``); this package re-exports it with typed helpers. ``remat.plan``, ``remat.sweep`` and
``remat.max_batch`` are the planning layer that ``remat solve``, ``sweep`` and ``maxbatch`` use. ``remat.torch`` captures a PyTorch
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
    zoo_model,
)
from remat.planning import (  # noqa: F401
    BatchProbe,
    BatchSearch,
    MaxBatchReport,
    MinBudget,
    PlanReport,
    PlanRow,
    SweepPoint,
    max_batch,
    plan,
    relative_gap,
    sweep,
)
from remat.errors import (  # noqa: F401
    CaptureError,
    Error,
    InfeasibleBudgetError,
    InputError,
    InputMismatchError,
    BudgetWarning,
    InternalError,
    UnknownOpError,
    UsageError,
)

__all__ = [
    "Graph", "Node", "NodeKind", "Schedule", "ScheduleDocument", "SimulationResult",
    "StrategyRow", "best_lower_bound", "build_plan", "check_schedule", "format_bytes", "load_schedule",
    "lp_lower_bound", "minimum_peak_lower_bound", "resolve_size", "run_strategy",
    "save_schedule", "simulate", "strategy_names", "zoo_model",
    "plan", "sweep", "max_batch", "relative_gap", "PlanReport", "PlanRow", "SweepPoint", "MinBudget",
    "MaxBatchReport", "BatchSearch", "BatchProbe",
    "Error", "InputError", "UsageError", "InternalError", "CaptureError", "UnknownOpError",
    "InfeasibleBudgetError", "InputMismatchError", "BudgetWarning",
]
