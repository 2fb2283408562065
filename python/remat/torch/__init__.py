"""remat for PyTorch: train any nn.Module within a memory budget, in your own loop.

    import remat.torch
    # torch.compile: remat plans each compiled region and Inductor compiles the plan
    model = torch.compile(model, backend=remat.torch.backend(budget="60%"), dynamic=False)
    # or without compiling: the plan runs op by op inside autograd
    model = remat.torch.wrap(model, budget="60%")
    loss = loss_fn(model(x), y); loss.backward(); optimizer.step()

``plan_step`` plans and runs a whole step (model and loss) itself and fills ``.grad``;
``compile`` is its former name. See docs/python.md.
"""

from remat.torch.backend import RematBackend, backend
from remat.torch.capture import CapturedStep, capture
from remat.torch.execute import RunStats
from remat.torch.partition import RegionPlan
from remat.torch.region import optimizer_state_bytes
from remat.torch.step import (CompiledStep, Plan, PlannedStep, compile, export_graph,
                              plan_step)
from remat.torch.tangents import least_peak_bound
from remat.torch.wrap import PlannedModule, wrap

__all__ = ["backend", "wrap", "plan_step", "compile", "export_graph", "capture",
           "RematBackend", "PlannedModule", "RegionPlan", "PlannedStep", "CompiledStep",
           "CapturedStep", "Plan", "RunStats", "optimizer_state_bytes", "least_peak_bound"]
