"""remat/options.py: each public option takes exactly its type. A bool option given "false" or 1,
a number given True or NaN, an int given 2.0 raise UsageError naming the option and the value
it got, before anything is traced or planned (docs/python.md, "Errors")."""

from __future__ import annotations

import math

import pytest
import torch

import remat
import remat.torch

# (option, a value of the wrong type or a senseless number): what wrap and backend refuse.
WRONG = [
    ("strict", "false"),        # a string: bool("false") is True
    ("strict", 0),
    ("workspace", "no"),
    ("lower_bound", "false"),
    ("gap", math.nan),
    ("gap", True),
    ("time_limit_s", math.nan),
    ("time_limit_s", True),
    ("time_limit_s", "60"),
    ("threads", 2.0),
    ("threads", True),
    ("seed", "1"),
    ("seed", 1.5),
    ("seed", 2 ** 40),
    ("flops_per_byte", math.nan),
    ("flops_per_byte", math.inf),
    ("flops_per_byte", True),
    ("unknown_ops", None),
    ("strategy", 3),
]


def _refused(call, option, value):
    with pytest.raises(remat.UsageError) as raised:
        call(**{option: value})
    message = str(raised.value)
    assert option in message and repr(value) in message, message


@pytest.mark.parametrize("option, value", WRONG)
def test_backend_refuses_an_option_of_the_wrong_type(option, value):
    _refused(lambda **o: remat.torch.backend(budget="50%", **o), option, value)


@pytest.mark.parametrize("option, value", WRONG)
def test_wrap_refuses_an_option_of_the_wrong_type(option, value):
    model = torch.nn.Linear(4, 4)
    _refused(lambda **o: remat.torch.wrap(model, budget="50%", **o), option, value)


@pytest.mark.parametrize("option, value", [("fusion", "true"), ("fusion", 1),
                                           ("compiler", None)])
def test_backend_refuses_its_own_options_of_the_wrong_type(option, value):
    _refused(lambda **o: remat.torch.backend(budget="50%", **o), option, value)


def chain(n: int) -> remat.Graph:
    """n nodes of 4 bytes in a chain, cost 1 each."""
    nodes = [remat.Node(f"n{i}", remat.NodeKind.unlabeled, 1.0, 4) for i in range(n)]
    return remat.Graph(nodes, [(i, i + 1) for i in range(n - 1)])


@pytest.mark.parametrize("option, value", [
    ("lower_bound", "false"), ("lower_bound", 1), ("seed", True), ("threads", "2"),
    ("gap", math.nan), ("patience_s", math.nan), ("patience_s", True),
    ("fixed_bytes", True), ("fixed_bytes", 1.0), ("time_limit_s", math.nan)])
def test_plan_refuses_an_option_of_the_wrong_type(option, value):
    graph = chain(4)
    _refused(lambda **o: remat.plan(graph, budget="100%", strategies="checkpoint-all", **o),
             option, value)


@pytest.mark.parametrize("option, value", [
    ("points", 2.5), ("points", True), ("lower_bound", "no"), ("seed", 1.0),
    ("total_time_limit_s", math.nan)])
def test_sweep_refuses_an_option_of_the_wrong_type(option, value):
    graph = chain(4)
    _refused(lambda **o: remat.sweep(graph, strategies="checkpoint-all", **o), option, value)


@pytest.mark.parametrize("option, value", [
    ("max_batch", True), ("max_batch", 8.0), ("max_overhead", math.nan),
    ("max_overhead", True), ("threads", 1.0), ("seed", None)])
def test_max_batch_refuses_an_option_of_the_wrong_type(option, value):
    _refused(lambda **o: remat.max_batch(lambda b: (chain(4), 0), memory=1 << 20,
                                         strategies="checkpoint-all", **o), option, value)


@pytest.mark.parametrize("option, value", [
    ("lower_bound", "false"), ("seed", "1"), ("model_inputs", True),
    ("flops_per_byte", math.inf), ("threads", 1.5)])
def test_plan_step_refuses_an_option_of_the_wrong_type(option, value):
    model = torch.nn.Linear(4, 4)
    _refused(lambda **o: remat.torch.plan_step(model, lambda y: y.sum(), [torch.ones(2, 4)],
                                               budget="50%", **o), option, value)


def test_a_list_of_strategies_holds_names():
    with pytest.raises(remat.UsageError, match="strategies"):
        remat.plan(chain(4), budget="100%", strategies=5)
    with pytest.raises(remat.UsageError, match=r"strategies\[\] must be a string, got 5"):
        remat.plan(chain(4), budget="100%", strategies=["checkpoint-all", 5])


def test_right_values_pass():
    # The checks take what they should: ints for numbers, numpy's ints and floats, an infinite
    # cost cap.
    import numpy as np

    remat.torch.backend(budget="50%", threads=np.int64(1), seed=np.int32(3),
                        gap=np.float32(0.01), time_limit_s=np.float64(5))
    report = remat.plan(chain(4), budget=16, strategies="checkpoint-all", time_limit_s=5,
                        gap=0, seed=0, lower_bound=False)
    assert report.rows[0].fits
    remat.torch.backend(budget="50%", strict=True, workspace=False, fusion=None, gap=1,
                        flops_per_byte=0, time_limit_s=1)
    result = remat.max_batch(lambda b: (chain(4), 0), memory=1 << 10, max_batch=4,
                             max_overhead=math.inf, strategies="checkpoint-all")
    assert result.result("checkpoint-all").max_batch == 4
