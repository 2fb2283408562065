"""A head and its cross-entropy whose gradient is formed in the forward pass, chunk by chunk.

``ChunkedLoss.apply(h, weight, bias, target, sizes, casts, ignore_index, mean)`` is
``cross_entropy(linear(h, weight, bias).to(*casts), target)`` (a sum, or a mean over the
targets not equal to ``ignore_index``), computed over row ranges of ``sizes``. Each chunk's
gradient with respect to ``h``, ``weight`` and ``bias`` is computed in the forward, right after
its loss, by autograd on that chunk alone; the forward keeps the input's gradient (one row per
token, as ``h``) and the parameters' gradients summed over the chunks, and no chunk's logits
outlive it. The backward only multiplies them by the loss's tangent (divided by the number of
counted targets for a mean): the loss is a scalar, and its backward is linear in its tangent.

So the logits are computed once, as without chunks, and never held whole or recomputed
(split.py rewrites a region's head-and-loss chain into this call). AOTAutograd traces the
chunks' operations into the region's joint graph like any other: remat plans what the
forward keeps for the backward, as for every other value.
"""

from __future__ import annotations

from typing import Optional

import torch

__all__ = ["ChunkedLoss", "chunked_loss", "LOSS_PATH"]

# The module path its operations are recorded under (split.py, structure.py).
LOSS_PATH = "remat_chunked_loss"


class ChunkedLoss(torch.autograd.Function):
    """The chunked head and loss, its gradient formed in the forward (module docstring)."""

    @staticmethod
    def forward(ctx, h: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
                target: torch.Tensor, sizes: list, casts: tuple, ignore_index: int,
                mean: bool) -> torch.Tensor:
        needs = list(ctx.needs_input_grad[:3])
        params = [None if x is None else x.detach().requires_grad_(need)
                  for x, need in zip((weight, bias), needs[1:])]
        total = None
        input_grads: list = []
        summed: list = [None, None]  # the weight's and the bias's gradients over the chunks
        for rows, part in zip(h.split(sizes), target.split(sizes)):
            with torch.enable_grad():
                leaves = [rows.detach().requires_grad_(needs[0]), *params]
                logits = torch.nn.functional.linear(*leaves)
                for dtype in casts:
                    logits = logits.to(dtype)
                loss = torch.nn.functional.cross_entropy(logits, part,
                                                         ignore_index=ignore_index,
                                                         reduction="sum")
                inputs = [x for x, need in zip(leaves, needs) if need]
                grads = iter(torch.autograd.grad(loss, inputs) if inputs else ())
            loss = loss.detach().float()
            total = loss if total is None else total + loss
            if needs[0]:
                input_grads.append(next(grads))
            for i in (0, 1):
                if needs[1 + i]:
                    grad = next(grads)
                    summed[i] = grad if summed[i] is None else summed[i] + grad
        count = (target != ignore_index).sum() if mean else None
        ctx.mean = mean
        ctx.needs = needs
        saved = [torch.cat(input_grads) if needs[0] else None, *summed]
        ctx.save_for_backward(*[x for x in saved if x is not None],
                              *([count] if mean else []))
        return total / count if mean else total

    @staticmethod
    def backward(ctx, tangent: torch.Tensor):
        saved = list(ctx.saved_tensors)
        scale = tangent / saved.pop() if ctx.mean else tangent
        grads = iter(saved)
        out = [next(grads) * scale if need else None for need in ctx.needs]
        return (*out, None, None, None, None, None)


def chunked_loss(h: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
                 target: torch.Tensor, sizes: list, casts: tuple, ignore_index: int,
                 mean: bool) -> torch.Tensor:
    """``ChunkedLoss.apply``, as a function that a graph's generated code can name."""
    return ChunkedLoss.apply(h, weight, bias, target, sizes, casts, ignore_index, mean)
