"""Execution of a plan over a captured training step.

The plan is remat's operation list (``remat.build_plan``): computations, recomputations and
frees, in order. Each computation runs the node's aten operation on the values it reads; views
are re-derived from their base at each use. Side effects happen exactly once, at a node's first
computation: gradients accumulate into ``.grad`` as autograd's AccumulateGrad does (the
parameters' and those of inputs that require grad; an input that is not a leaf passes its
gradient on to the graph that made it, as ``loss.backward()`` would), batch-norm
running statistics and other buffer updates are written at the end of the step, and the loss is
kept. A random operation (dropout) is recomputed with the generator state of its first run, so
its mask is the same, and the generator then continues where it was.

The held bytes are measured on the real tensors: the distinct storages referenced by the values
the executor holds, right after each computation (the simulator's allocation instant).
"""

from __future__ import annotations

import operator
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import torch
from torch import fx

from remat.errors import InternalError
from remat.torch.capture import CapturedStep, _tensors_in

__all__ = ["RunStats", "run_plan"]


@dataclass
class RunStats:
    """What one execution did: peak of held bytes and how often nodes ran."""

    measured_peak_bytes: int = 0
    computations: int = 0
    recomputations: int = 0
    node_times_s: list[float] = field(default_factory=list)


class _HeldBytes:
    """Distinct storages referenced by held values, with their bytes (a storage shared by two
    held values counts once)."""

    def __init__(self) -> None:
        self._count: dict[int, list[int]] = {}  # storage key -> [references, bytes]
        self.total = 0

    @staticmethod
    def _keys(value: Any) -> list[tuple[int, int]]:
        keys = {}
        for t in _tensors_in(value):
            storage = t.untyped_storage()
            if storage.nbytes() > 0:
                keys[storage.data_ptr()] = storage.nbytes()
        return list(keys.items())

    def add(self, value: Any) -> None:
        for key, nbytes in self._keys(value):
            entry = self._count.setdefault(key, [0, nbytes])
            if entry[0] == 0:
                self.total += nbytes
            entry[0] += 1

    def remove(self, value: Any) -> None:
        for key, _ in self._keys(value):
            entry = self._count[key]
            entry[0] -= 1
            if entry[0] == 0:
                self.total -= entry[1]
                del self._count[key]


def _rng_state(device: torch.device) -> Any:
    if device.type == "cuda":
        return torch.cuda.get_rng_state(device)
    return torch.get_rng_state()


def _set_rng_state(device: torch.device, state: Any) -> None:
    if device.type == "cuda":
        torch.cuda.set_rng_state(state, device)
    else:
        torch.set_rng_state(state)


def _accumulate_grad(param: torch.Tensor, grad: torch.Tensor) -> None:
    """As autograd's AccumulateGrad: the first gradient is taken as it is when its layout
    matches the parameter's, else copied into the parameter's layout; later ones are added."""
    if param.grad is None:
        if grad.stride() == param.stride() and grad.storage_offset() == 0:
            param.grad = grad.detach()
        else:
            param.grad = torch.empty_strided(param.shape, param.stride(), dtype=param.dtype,
                                             device=param.device).copy_(grad)
    else:
        param.grad += grad


def run_plan(captured: CapturedStep, plan: Sequence[tuple[str, int, int]],
             parameters: dict[str, torch.Tensor], buffers: dict[str, torch.Tensor],
             inputs: Sequence[torch.Tensor], *, apply_effects: bool = True,
             clock: Optional[Callable[[], None]] = None) -> tuple[torch.Tensor, RunStats]:
    """Runs ``plan`` and returns the loss and what was measured.

    ``parameters`` and ``buffers`` map names to the model's tensors. With ``apply_effects``
    false nothing outside the executor changes (no ``.grad``, no buffer update): used to profile.
    ``clock``, when given, is called before reading the time around each computation (for
    example ``torch.cuda.synchronize``), and per-node times are recorded.
    """
    constants: dict[fx.Node, Any] = {}
    for node, name in captured.parameters.items():
        constants[node] = parameters[name]
    for node, name in captured.buffers.items():
        constants[node] = buffers[name]
    for node, x in zip(captured.user_inputs, inputs):
        constants[node] = x
    for node in captured.module.graph.nodes:
        if node.op == "get_attr":
            constants[node] = operator.attrgetter(node.target)(captured.module)
    effects = captured.effects_of()
    device = inputs[0].device if inputs else torch.device("cpu")

    held: dict[int, Any] = {}
    held_bytes = _HeldBytes()
    first_done = [False] * len(captured.nodes)
    rng_states: dict[int, Any] = {}
    buffer_values: dict[str, torch.Tensor] = {}
    upstream: list[tuple[torch.Tensor, torch.Tensor]] = []  # non-leaf inputs and gradients
    loss: Optional[torch.Tensor] = None
    stats = RunStats(node_times_s=[0.0] * len(captured.nodes))

    def value_of(node: fx.Node) -> Any:
        if node in constants:
            return constants[node]
        base = captured.base_of[node]
        if base is not None and captured.nodes[base] is node:
            if base not in held:
                raise InternalError(f"plan reads node {base} ('{node.name}'), which is not live")
            return held[base]
        # A view or a member of a multi-output operation: re-derive it from what it reads.
        return evaluate(node)

    def evaluate(node: fx.Node) -> Any:
        args = fx.node.map_arg(node.args, value_of)
        kwargs = fx.node.map_arg(node.kwargs, value_of)
        return node.target(*args, **kwargs)

    with torch.no_grad():
        for kind, _stage, v in plan:
            if kind == "free":
                if v not in held:
                    raise InternalError(f"plan frees node {v}, which is not live")
                held_bytes.remove(held.pop(v))
                continue
            if kind != "compute":
                continue
            node = captured.nodes[v]
            if v in held:
                raise InternalError(f"plan computes node {v} ('{node.name}') while it is live")
            random = v in captured.random_nodes
            if random and first_done[v]:
                saved = _rng_state(device)
                _set_rng_state(device, rng_states[v])
            elif random:
                rng_states[v] = _rng_state(device)
            if clock is not None:
                clock()
                start = time.perf_counter()
            value = evaluate(node)
            if clock is not None:
                clock()
                stats.node_times_s[v] += time.perf_counter() - start
            if random and first_done[v]:
                _set_rng_state(device, saved)
            held[v] = value
            held_bytes.add(value)
            stats.measured_peak_bytes = max(stats.measured_peak_bytes, held_bytes.total)
            stats.computations += 1
            if first_done[v]:
                stats.recomputations += 1
                continue
            first_done[v] = True
            for out in effects.get(v, ()):
                result = value_of(out)
                if out is captured.loss_node:
                    loss = result.detach().clone()
                elif not apply_effects:
                    continue
                elif out in captured.gradients:
                    _accumulate_grad(parameters[captured.gradients[out]], result)
                elif out in captured.input_gradients:
                    x = inputs[captured.input_gradients[out]]
                    if x.is_leaf:
                        _accumulate_grad(x, result)
                    else:
                        upstream.append((x, result))
                else:
                    buffer_values[captured.buffer_updates[out]] = result
        if held:
            raise InternalError(f"plan leaves {len(held)} values live at its end")
        if not all(first_done):
            raise InternalError("plan never computes node "
                                f"{first_done.index(False)}")
        for name, value in buffer_values.items():
            buffers[name].copy_(value)
    if upstream:
        torch.autograd.backward([x for x, _ in upstream], [g for _, g in upstream])
    assert loss is not None
    return loss, stats
