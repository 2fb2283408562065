"""remat for PyTorch: plan and run any nn.Module's training step within a memory budget.

    import remat.torch
    step = remat.torch.compile(model, loss_fn, (x, y), budget="60%", strategy="optimal")
    loss = step(x, y)      # fills p.grad like loss.backward(); then optimizer.step()
    print(step.plan)       # strategy, cost, overhead, predicted peak, lower bound, gap

See docs/python.md.
"""

from remat.torch.capture import CapturedStep, capture
from remat.torch.execute import RunStats
from remat.torch.step import CompiledStep, Plan, compile, export_graph

__all__ = ["compile", "export_graph", "capture", "CompiledStep", "CapturedStep", "Plan",
           "RunStats"]
