"""Logging calls inside a model that would end a compiled region.

Dynamo cannot trace a call to a ``logging.Logger`` method: it ends the region there (a graph
break) and runs the call as Python. transformers' ``Logger.warning_once`` sits inside its
models' loss (``loss_function`` warns once for a model class its loss mapping does not name,
GPT-2's among them), so that loss compiled as a region of its own, and the logits and their
gradient crossed a region boundary that no plan reaches across. Dynamo's own setting
``ignore_logging_functions`` makes such calls no-ops while it traces: the model and its loss
are one region, planned together. The ignored warning is not printed from compiled code.
"""

from __future__ import annotations

import logging

__all__ = ["ignore_model_logging", "IGNORED"]

# The names of the logging functions that are ignored, where a library has put them on
# logging.Logger (transformers does at import).
IGNORED = ("warning_once",)


def ignore_model_logging() -> None:
    """Adds the logging functions of IGNORED that exist to Dynamo's ignore_logging_functions
    (a set of torch's configuration, for every compiled model of the process)."""
    from torch._dynamo import config as dynamo_config

    for name in IGNORED:
        function = getattr(logging.Logger, name, None)
        if callable(function):
            dynamo_config.ignore_logging_functions.add(function)
