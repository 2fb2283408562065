"""Capture of a PyTorch training step as one joint graph of aten operations.

AOTAutograd traces the step (``loss_fn(model(*inputs[:k]), *inputs[k:])``, then the gradients of
every parameter) with fake tensors into a functional FX graph: forward and backward kernels are
explicit, in-place updates (batch-norm running statistics) become outputs, and nothing runs on
real data. Each operation that creates storage becomes one remat node, and so does each member
of a multi-output operation's result, so that each output is freed after its own last reader.
Views and aliases are folded into the node whose storage they share, so their bytes count once
and a base is never freed while a view of it is in use (views are re-derived from their base
whenever a consumer runs).
"""

from __future__ import annotations

import contextlib
import operator
import os
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import torch
from torch import fx
from torch.multiprocessing.reductions import StorageWeakRef

from remat import _core, interrupt
from remat.errors import CaptureError

__all__ = ["CapturedStep", "capture"]


@dataclass(frozen=True)
class InputSpec:
    """Shape, dtype, device and ``requires_grad`` of one example input: a step accepts only
    inputs that match (an input that requires grad has a gradient output in the graph)."""

    shape: tuple
    dtype: torch.dtype
    device: torch.device
    requires_grad: bool = False


@dataclass
class CapturedStep:
    """The joint graph of a training step and its mapping to remat nodes.

    ``nodes[i]`` is the FX node computed by remat node ``i`` (in topological order, forward
    nodes before the loss, backward nodes after it). ``base_of`` maps every FX node that
    produces a value to its remat node id, or to ``None`` for placeholders and what derives
    from them alone without new storage (a parameter's transpose).
    """

    module: fx.GraphModule
    nodes: list[fx.Node]
    base_of: dict[fx.Node, Optional[int]]
    edges: list[tuple[int, int]]
    kinds: list[Any]
    bytes: list[int]
    loss_node: fx.Node
    parameters: dict[fx.Node, str]           # placeholder -> parameter name
    buffers: dict[fx.Node, str]              # placeholder -> buffer name
    user_inputs: list[fx.Node]               # placeholders of the step's inputs, in order
    gradients: dict[fx.Node, str]            # output node -> parameter it is the gradient of
    input_gradients: dict[fx.Node, int]      # output node -> step input it is the gradient of
    buffer_updates: dict[fx.Node, str]       # output node -> buffer it overwrites
    input_specs: list[InputSpec]
    random_nodes: set[int] = field(default_factory=set)

    def __len__(self) -> int:
        return len(self.nodes)

    def to_graph(self, costs: Sequence[float], cost_unit: str, name: str = "", *,
                 workspace: bool = True) -> _core.Graph:
        """The remat graph of the step with one cost per node and, unless ``workspace`` is
        false, each node's kernel workspace (workspace.py); validated by the C++ core."""
        from remat.torch.structure import blocks_of, contractions_of
        from remat.torch.workspace import node_workspace_bytes

        forward = sum(1 for kind in self.kinds if kind == _core.NodeKind.forward)
        blocks = blocks_of(self.nodes, forward)
        contractions = contractions_of(self.nodes, forward)
        nodes = [_core.Node(n.name, kind, cost, nbytes,
                            workspace_bytes=node_workspace_bytes(n) if workspace else 0,
                            block=b, contraction=c)
                 for n, kind, cost, nbytes, b, c in
                 zip(self.nodes, self.kinds, costs, self.bytes, blocks, contractions)]
        return _core.Graph(nodes, self.edges, cost_unit, name)

    def effects_of(self) -> dict[int, list[fx.Node]]:
        """For each remat node, the step outputs (gradients, buffer updates, the loss) that
        derive from its value and are applied once, at its first computation."""
        effects: dict[int, list[fx.Node]] = {}
        for out in [*self.gradients, *self.input_gradients, *self.buffer_updates,
                    self.loss_node]:
            if not isinstance(out, fx.Node):
                continue  # a parameter that the loss does not depend on has no gradient
            base = self.base_of[out]
            if base is None:
                raise CaptureError(
                    f"step output '{out.name}' does not depend on any computed value; "
                    "remat cannot schedule it")
            effects.setdefault(base, []).append(out)
        return effects


def _tensors_in(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors_in(v)]
    return []


def _storages(value: Any) -> dict:
    """The distinct storages of the tensors in ``value`` (a tensor or a tuple): bytes by key."""
    return {StorageWeakRef(t.untyped_storage()): t.untyped_storage().nbytes()
            for t in _tensors_in(value)}


def storage_bytes(value: Any) -> int:
    """Bytes of the distinct storages of the tensors in ``value``."""
    return sum(_storages(value).values())


def _fx_inputs(node: fx.Node) -> list[fx.Node]:
    found: list[fx.Node] = []
    fx.node.map_arg((node.args, node.kwargs), lambda a: found.append(a) or a)
    return list(dict.fromkeys(found))


def _is_declared_alias(target: Any) -> bool:
    """True when the operator's schema says its outputs alias an input without writing it."""
    schema = getattr(target, "_schema", None)
    if schema is None:
        return False
    returns = [r.alias_info for r in schema.returns]
    return bool(returns) and all(a is not None and not a.is_write for a in returns)


def _writes_an_input(target: Any) -> bool:
    schema = getattr(target, "_schema", None)
    return schema is not None and any(
        a.alias_info is not None and a.alias_info.is_write for a in schema.arguments)


# Operations that tracing would replace by Python decompositions (torch._decomp registers them
# for the Autograd and CompositeImplicitAutograd keys), although eager autograd runs them whole:
# bilinear upsampling would become _unsafe_index operations, slower and, in backward, summed in
# another order than upsample_bilinear2d_backward, so gradients would differ from eager's.
# remat plans them as one node each, like eager runs them.
_KEPT_WHOLE = ("upsample_bilinear2d", "upsample_bicubic2d", "upsample_linear1d",
               "upsample_trilinear3d", "upsample_nearest1d", "upsample_nearest2d",
               "upsample_nearest3d", "_upsample_bilinear2d_aa")


@contextlib.contextmanager
def kept_whole():
    """Within it, tracing records the operations of ``_KEPT_WHOLE`` as eager autograd runs them,
    without torch's Python decompositions."""
    keys = (torch._C.DispatchKey.Autograd, torch._C.DispatchKey.CompositeImplicitAutograd)
    removed = []
    for name in _KEPT_WHOLE:
        packet = getattr(torch.ops.aten, name, None)
        if packet is None:
            continue
        for overload in packet.overloads():
            op = getattr(packet, overload)
            for key in keys:
                if key in op.py_kernels:
                    removed.append((op, key, op.py_kernels.pop(key)))
            op._dispatch_cache.clear()
    try:
        yield
    finally:
        for op, key, kernel in removed:
            op.py_kernels[key] = kernel
            op._dispatch_cache.clear()


class _StepModule(torch.nn.Module):
    """model + loss as one module whose forward returns the loss, as AOTAutograd expects."""

    def __init__(self, model: torch.nn.Module, loss_fn: Callable, model_inputs: int):
        super().__init__()
        self.model = model
        self.loss_fn = loss_fn
        self.model_inputs = model_inputs

    def forward(self, *inputs):
        output = self.model(*inputs[: self.model_inputs])
        loss = self.loss_fn(output, *inputs[self.model_inputs:])
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1:
            raise CaptureError("loss_fn must return a tensor with a single element (the loss), "
                               f"got {type(loss).__name__}"
                               + (f" of shape {tuple(loss.shape)}"
                                  if isinstance(loss, torch.Tensor) else ""))
        return (loss,)


def _trace(model: torch.nn.Module, loss_fn: Callable, inputs: Sequence[torch.Tensor],
           model_inputs: int):
    # Imported here: AOTAutograd and fake tensors are large private modules that only capture
    # needs.
    from torch._functorch.aot_autograd import aot_export_module
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.nn.utils.stateless import _reparametrize_module

    wrapper = _StepModule(model, loss_fn, model_inputs)
    # Parameters, buffers and inputs are swapped for fake tensors of the same metadata: the
    # trace computes nothing, allocates nothing and draws nothing from the random generators.
    fake_mode = FakeTensorMode(allow_non_fake_inputs=True)
    state = {name: fake_mode.from_tensor(t) for name, t in
             [*wrapper.named_parameters(remove_duplicate=False),
              *wrapper.named_buffers(remove_duplicate=False)]}
    fake_inputs = [fake_mode.from_tensor(x) for x in inputs]
    # Warnings are recorded, to tell a reentrant checkpoint by its own warning, then re-issued.
    failure: Optional[BaseException] = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with _reparametrize_module(wrapper, state), kept_whole():
                traced = aot_export_module(wrapper, fake_inputs, trace_joint=True,
                                           output_loss_index=0)
        except Exception as error:  # noqa: BLE001: every tracing failure becomes a CaptureError
            failure = error
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if failure is None:
        return traced
    if isinstance(failure, CaptureError):
        raise failure
    op = getattr(failure, "func", None)
    what = f" at operation {op}" if op is not None else ""
    first_line = str(failure).strip().splitlines()[0] if str(failure).strip() else ""
    raise CaptureError(
        f"cannot trace the training step into one graph{what}{_user_frame(failure)}: "
        f"{type(failure).__name__}: {first_line}{_cause(failure, caught)}") from failure


# What a tracing failure means for the user, by the error torch raises (torch 2.x). Only the
# errors of a value-dependent trace get the control-flow hint.
_DATA_DEPENDENT = ("DataDependentOutputException", "GuardOnDataDependentSymNode")
_DYNAMIC_SHAPE = ("DynamicOutputShapeException",)


def _cause(error: BaseException, caught: list) -> str:
    """' (what to change)' for a tracing failure whose cause is known, else ''."""
    text = str(error)
    # A reentrant checkpoint fails on backward ("use_reentrant" in the error), or, when no
    # input of its block requires grad, warns so before the loss is found without a gradient.
    reentrant = any(w.filename.endswith(os.path.join("utils", "checkpoint.py")) and
                    "None of the inputs have requires_grad" in str(w.message) for w in caught)
    if "use_reentrant" in text or reentrant:
        return (" (torch.utils.checkpoint with use_reentrant=True cannot be traced: it runs "
                "its block without autograd and calls autograd again in backward; pass "
                "use_reentrant=False, or drop the checkpoint, since remat plans the "
                "recomputation itself)")
    if "requires gradients, and received a mutation" in text:
        return (" (the step writes in place into a parameter or an input that requires a "
                "gradient, e.g. weight.mul_() in forward, even under torch.no_grad(); update it "
                "outside the step, before calling it)")
    if "marked as the loss, but it does not require gradients" in text:
        return (" (the loss does not require a gradient: the model or loss_fn computes it "
                "under torch.no_grad() or torch.inference_mode(), or from detached tensors)")
    if "parameter that did not receive a gradient" in text:
        return (" (a parameter that requires a gradient receives none: it is unused, or "
                "reached only under torch.no_grad() or through .detach(); set "
                "requires_grad=False on it)")
    name = type(error).__name__
    if name in _DATA_DEPENDENT or "data-dependent" in text or "data dependent" in text:
        return (" (data-dependent control flow, such as a Python 'if' on a tensor's value, "
                "cannot be captured)")
    if name in _DYNAMIC_SHAPE:
        return (" (an operation whose output shape depends on tensor values, such as nonzero, "
                "masked_select or boolean indexing, cannot be captured)")
    return ""


def _user_frame(error: BaseException) -> str:
    """' in forward (model.py:12: <line>)' for the innermost frame outside torch and remat."""
    skip = (os.path.dirname(torch.__file__), os.path.dirname(os.path.dirname(__file__)))
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if not f.filename.startswith(skip) and not f.filename.startswith("<")]
    if not frames:
        return ""
    f = frames[-1]
    return f" in {f.name} ({os.path.basename(f.filename)}:{f.lineno}: {(f.line or '').strip()})"


def _split_members(graph: fx.Graph) -> set[fx.Node]:
    """The getitem nodes that become remat nodes: members read by another operation, of an
    operation with at least two such members."""
    split: set[fx.Node] = set()
    for node in graph.nodes:
        read = [g for g in node.users if g.target is operator.getitem
                and any(u.op != "output" for u in g.users)]
        if len(read) >= 2:
            split.update(read)
    return split


@dataclass
class StorageNodes:
    """The FX nodes of a graph that create storage, as remat nodes (see the module docstring)."""

    nodes: list[fx.Node]
    bytes: list[int]
    edges: set[tuple[int, int]]
    random_nodes: set[int]
    writing_nodes: set[int]   # nodes that write into a graph input in place (input_writes="node")


def map_storage_nodes(graph: fx.Graph, base_of: dict[fx.Node, Optional[int]], *,
                      input_writes: str = "error") -> StorageNodes:
    """Maps each operation of ``graph`` that creates storage to a remat node, in graph order.

    ``base_of`` starts with the placeholders (None, or a negative id that stands for a node
    outside the graph, kept in the edges) and is filled for every node: its remat node, the
    node whose storage a view shares, or what the placeholder maps to. An operation that writes
    into its input in place raises CaptureError, or with ``input_writes="node"`` becomes a node
    of zero bytes (its output is its input's storage) listed in ``writing_nodes``.
    """
    split_members = _split_members(graph)
    nodes: list[fx.Node] = []
    edges: set[tuple[int, int]] = set()
    node_bytes: list[int] = []
    random_nodes: set[int] = set()
    writing_nodes: set[int] = set()

    for node in graph.nodes:
        interrupt.check()
        if node.op == "get_attr":
            base_of[node] = None  # a constant the trace lifted into the module
            continue
        if node.op != "call_function":
            continue
        inputs_fx = _fx_inputs(node)
        val = node.meta.get("val")
        if _writes_an_input(node.target):
            if input_writes != "node":
                raise CaptureError(f"operation '{node.name}' ({node.target}) writes into its "
                                   "input in place after functionalization; remat cannot "
                                   "reorder it")
            v = len(nodes)
            nodes.append(node)
            base_of[node] = v
            node_bytes.append(0)
            writing_nodes.add(v)
            for a in inputs_fx:
                if base_of[a] is not None:
                    edges.add((base_of[a], v))
            continue
        if node.target is operator.getitem:
            # Members of a multi-output operation that other operations read are nodes of
            # their own (cost 0, their own bytes) when there are two or more of them, so that
            # each is freed after its own last reader; the operation's node then lives only
            # until its members are taken. Members that only leave the step (gradients, new
            # running statistics) are applied at the operation's first computation. A member of
            # a list of views (split) is a view.
            owner = base_of[node.args[0]]
            is_alias = owner is None or owner < 0 or nodes[owner] is not node.args[0] \
                or node not in split_members
        else:
            is_alias = _is_declared_alias(node.target)
        if node.target is not operator.getitem and not is_alias and inputs_fx \
                and _tensors_in(val):
            # Storage identity of the fake values: an operation whose every output shares a
            # storage with its inputs is a view even when its schema does not say so.
            input_storages = set().union(*(_storages(a.meta.get("val")) for a in inputs_fx))
            outs = _storages(val).keys()
            if outs and outs <= input_storages:
                is_alias = True
            elif outs & input_storages:
                raise CaptureError(f"operation '{node.name}' ({node.target}) returns both new "
                                   "tensors and views of its inputs; remat cannot free them "
                                   "separately")
        if is_alias:
            bases = {base_of[a] for a in inputs_fx}
            if len(bases) > 1:
                raise CaptureError(f"view '{node.name}' ({node.target}) reads more than one "
                                   "computed value")
            base_of[node] = bases.pop() if bases else None
            continue
        v = len(nodes)
        nodes.append(node)
        base_of[node] = v
        node_bytes.append(storage_bytes(val))
        for a in inputs_fx:
            u = base_of[a]
            if u is not None:
                edges.add((u, v))
        tags = getattr(node.target, "tags", ())
        if torch.Tag.nondeterministic_seeded in tags:
            random_nodes.add(v)
    return StorageNodes(nodes, node_bytes, edges, random_nodes, writing_nodes)


def capture(model: torch.nn.Module, loss_fn: Callable, example_inputs: Sequence[torch.Tensor],
            *, model_inputs: int = 1) -> CapturedStep:
    """Traces one training step of ``model`` and maps it to remat nodes.

    ``example_inputs[:model_inputs]`` go to the model, the rest to ``loss_fn`` after the
    model's output. Raises CaptureError when the step cannot be traced.
    """
    if not isinstance(model, torch.nn.Module):
        raise CaptureError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    inputs = list(example_inputs)
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            raise CaptureError(f"example input {i} is a {type(x).__name__}, not a tensor")
    if not 0 <= model_inputs <= len(inputs):
        raise CaptureError(f"model_inputs={model_inputs}, but there are {len(inputs)} inputs")
    if not any(p.requires_grad for p in model.parameters()):
        raise CaptureError("the model has no parameter that requires a gradient")

    module, signature = _trace(model, loss_fn, inputs, model_inputs)
    graph = module.graph
    if signature.parameters_to_mutate:
        written = sorted(n.removeprefix("model.") for n in signature.parameters_to_mutate.values())
        raise CaptureError(f"the step writes in place into parameters ({', '.join(written)}); "
                           "remat supports in-place updates of buffers only: update them "
                           "outside the step")
    if signature.user_inputs_to_mutate:
        raise CaptureError("the step writes in place into its inputs; remat supports in-place "
                           "updates of buffers only: copy an input before changing it")
    # The signature's names need not be the graph's node names: map by position. Inputs are
    # parameters, buffers, then the step's inputs; outputs are the updated buffers, the loss,
    # one gradient per parameter, then one per input that requires grad, in input order
    # (AOTAutograd's export convention).
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    outputs = list(next(n for n in graph.nodes if n.op == "output").args[0])
    p_count, b_count = len(signature.parameters), len(signature.buffers)
    strip = "model."
    parameters = {n: name.removeprefix(strip)
                  for n, name in zip(placeholders[:p_count], signature.parameters)}
    buffers = {n: name.removeprefix(strip)
               for n, name in zip(placeholders[p_count:p_count + b_count], signature.buffers)}
    user_inputs = placeholders[p_count + b_count:]
    mutated = list(signature.buffers_to_mutate.values())
    grads = list(signature.backward_signature.gradients_to_parameters.values())
    input_index = {name: i for i, name in enumerate(signature.user_inputs)}
    input_grads = [input_index[name] for name in
                   signature.backward_signature.gradients_to_user_inputs.values()]
    if len(outputs) != len(mutated) + 1 + len(grads) + len(input_grads) \
            or len(user_inputs) != len(inputs):
        raise CaptureError(f"unexpected joint graph: {len(outputs)} outputs for {len(mutated)} "
                           f"buffer updates, one loss, {len(grads)} parameter gradients and "
                           f"{len(input_grads)} input gradients")
    buffer_updates = {n: name.removeprefix(strip) for n, name in zip(outputs, mutated)}
    loss_node = outputs[len(mutated)]
    first_grad = len(mutated) + 1
    gradients = {n: name.removeprefix(strip)
                 for n, name in zip(outputs[first_grad:first_grad + len(grads)], grads)}
    input_gradients = dict(zip(outputs[first_grad + len(grads):], input_grads))

    base_of: dict[fx.Node, Optional[int]] = {p: None for p in placeholders}
    mapped = map_storage_nodes(graph, base_of)
    nodes, node_bytes, random_nodes = mapped.nodes, mapped.bytes, mapped.random_nodes
    edges = mapped.edges

    loss_id = base_of.get(loss_node)
    if loss_id is None:
        raise CaptureError("the loss does not depend on any computed value")
    kinds = [_core.NodeKind.forward if i < loss_id else
             _core.NodeKind.loss if i == loss_id else _core.NodeKind.backward
             for i in range(len(nodes))]
    specs = [InputSpec(tuple(x.shape), x.dtype, x.device, x.requires_grad) for x in inputs]
    return CapturedStep(module=module, nodes=nodes, base_of=base_of, edges=sorted(edges),
                        kinds=kinds, bytes=node_bytes, loss_node=loss_node,
                        parameters=parameters, buffers=buffers, user_inputs=user_inputs,
                        gradients=gradients, input_gradients=input_gradients,
                        buffer_updates=buffer_updates,
                        input_specs=specs, random_nodes=random_nodes)
