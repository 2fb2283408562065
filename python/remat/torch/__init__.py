"""remat for PyTorch: train any nn.Module within a memory budget, in your own loop.

    import remat.torch
    # torch.compile: remat plans each compiled region and Inductor compiles the plan
    model = torch.compile(model, backend=remat.torch.backend(budget="60%"), dynamic=False)
    # or without compiling: the plan runs op by op inside autograd
    model = remat.torch.wrap(model, budget="60%")
    loss = loss_fn(model(x), y); loss.backward(); optimizer.step()

``plan_step`` plans the model and its loss together and runs the whole step;
``plan_for_device`` plans on the meta device for a device this machine lacks. See
docs/python.md.
"""

from remat.torch.backend import RematBackend, backend
from remat.torch.for_device import plan_for_device
from remat.torch.partition import RegionPlan
from remat.torch.region import optimizer_state_bytes
from remat.torch.plans import Plan
from remat.torch.step import PlannedStep, compile, export_graph, plan_step
from remat.torch.tangents import least_peak_bound
from remat.torch.wrap import PlannedModule, wrap

__all__ = ["backend", "wrap", "plan_step", "plan_for_device", "compile", "export_graph",
           "RematBackend",
           "PlannedModule", "RegionPlan", "PlannedStep", "Plan", "optimizer_state_bytes",
           "least_peak_bound"]
