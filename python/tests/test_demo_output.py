"""The demo's own figures and lines (make demo): scripts/bench_compiled.py's relative gradient
difference and "budget met" text, and scripts/demo_warnings.py's one-line warnings."""

import os
import sys
import types
import warnings

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))

import bench_compiled  # noqa: E402
import demo_warnings  # noqa: E402


def test_relative_difference_is_over_the_largest_reference_gradient():
    reference = [torch.tensor([1.0, -4.0]), torch.tensor([2.0])]
    other = [torch.tensor([1.5, -4.0]), torch.tensor([2.0])]
    assert bench_compiled.relative_difference(other, reference) == pytest.approx(0.5 / 4)
    assert bench_compiled.relative_difference(reference, reference) == 0.0


def _region(budget, peak, attempts=()):
    from remat.torch.partition import RegionPlan

    return RegionPlan(plan=types.SimpleNamespace(budget_bytes=budget, predicted_peak_bytes=peak),
                      graph=None, schedule=None, forward_nodes=0, attempts=attempts)


def test_budget_met_counts_the_regions_over_their_asked_budget():
    plans = [_region(100, 90), _region(100, 120),
             # planned again below the asked 100: within it
             _region(80, 95, attempts=((100, 95, None, 1.0), (80, 95, None, 1.0)))]
    assert bench_compiled.regions_over(plans) == 1
    row = {"remat_regions": 3, "remat_regions_over": 1}
    assert bench_compiled.budget_met(row) == "no (1 of 3 regions over)"
    assert bench_compiled.budget_met({"remat_regions": 2, "remat_regions_over": 0}) == "yes"
    assert bench_compiled.budget_met({}) == "-"


def test_a_least_peak_warning_prints_as_one_line(capsys):
    message = ("no optimal schedule within the activation budget 719.61 KiB (the activation "
               "budget 719.61 KiB is below the minimum peak 1.00 MiB that any schedule needs "
               "('x' with its inputs)); the region runs a least-peak schedule, the least peak "
               "found (local search), which peaks "
               "at 1.00 MiB (the least possible: a bound (x)) (over the budget); pass "
               "strict=True to raise instead")
    with warnings.catch_warnings():  # restores warnings.showwarning
        warnings.simplefilter("always")
        demo_warnings.install()
        warnings.warn(message, UserWarning)
    err = capsys.readouterr().err
    assert err == ("UserWarning: no optimal schedule within the activation budget 719.61 KiB; "
                   "the region runs its least-peak schedule, which peaks at 1.00 MiB (over the "
                   "budget)\n")
