"""Splitting a region's vocabulary- and sequence-sized operations into chunks of tokens.

A language model's head and its loss, ``cross_entropy(linear(h, W).float().view(-1, V), t)``,
make tensors of one row per token and one column per vocabulary entry: the logits, their log
softmax and, in the backward, their gradient. No choice of what to keep lowers a step's peak
below the operation that reads and writes them (docs/design.md §8, the floor). Every row is
independent of the others until the loss sums them, so the loss is the sum, over chunks of rows,
of the chunk's summed cross-entropy (divided by the number of counted targets for a mean).

``split_chains(gm, k)`` rewrites Dynamo's graph of a region before it is traced:

- each head-and-loss chain (``loss_chains``) becomes one ``chunked_loss`` call
  (loss_gradient.py), which forms each chunk's gradient in the forward pass right after its
  loss; no chunk's logits outlive it and none is recomputed;
- each row chain (row_chains.py: an MLP's linears and elementwise operations between one
  input and one output) becomes its chunks' copies over row ranges, concatenated; AOTAutograd
  traces their backward, and what each chunk keeps or recomputes is the plan's decision.

``chunk_counts`` gives the widest chain ``k`` chunks and every other as many as keep its widest
tensor no wider than that chain's chunk. ``k`` is chosen by the backend (backend.py: 2, 4, 8 ...
while over the budget, or ``chunks=k``). A chain is split only where its wide tensors have no
reader outside it (a region that returns the logits keeps them whole). The loss may be written
``cross_entropy`` or, as a step traced in a device's form has it (device_form.py),
``nll_loss_forward`` of ``log_softmax``.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from dataclasses import dataclass
from typing import Optional

import torch
from torch import fx

from remat.torch.loss_gradient import LOSS_PATH, ChunkedLoss, chunked_loss
from remat.torch.row_chains import (LINEAR, chunk_sizes, row_chains, rows_of, split_row_chain,
                                    value_of)

__all__ = ["LossChain", "loss_chains", "chains_of", "chunk_counts", "split_chains",
           "chunk_sizes"]


_LOG_SOFTMAX = (torch.log_softmax, torch.nn.functional.log_softmax)
_NLL = (torch.ops.aten.nll_loss_forward, torch.ops.aten.nll_loss_forward.default)
# Methods between the head and its loss that change neither rows nor columns' meaning:
# reshapes that keep the vocabulary as the last dimension, and casts.
_RESHAPES = ("view", "reshape", "contiguous")
_CASTS = {"float": torch.float32, "double": torch.float64, "half": torch.float16,
          "bfloat16": torch.bfloat16}


@dataclass(frozen=True)
class LossChain:
    """One head-and-loss chain of a Dynamo graph: ``loss`` is the cross-entropy of the output
    of ``linear`` through ``between`` (reshapes and casts) against ``target``, over ``rows``
    tokens and a vocabulary of ``vocabulary`` entries; ``casts`` are the dtypes it is cast to,
    in order."""

    linear: fx.Node
    loss: fx.Node       # the loss value; ``loss_nodes`` are all the loss's own nodes
    between: tuple
    casts: tuple
    rows: int
    vocabulary: int
    width: int  # the head's input features
    target: Optional[fx.Node] = None
    options: Optional[dict] = None  # the loss's reduction and ignore_index
    loss_nodes: tuple = ()

    @property
    def widest_bytes(self) -> int:
        """Its widest tensor's bytes: the logits'."""
        return self.logits_bytes

    @property
    def logits_bytes(self) -> int:
        """The bytes of one logits-sized tensor in the loss's dtype (what a chunk divides)."""
        dtype = self.casts[-1] if self.casts else value_of(self.linear).dtype
        return self.rows * self.vocabulary * torch.empty((), dtype=dtype).element_size()


def _shape(node: fx.Node) -> Optional[tuple]:
    value = value_of(node)
    return None if value is None else tuple(value.shape)


def _cast_of(node: fx.Node) -> Optional[torch.dtype]:
    """The dtype a ``.float()``-like or ``.to(dtype)`` method casts to, or None."""
    if node.op != "call_method":
        return None
    if node.target in _CASTS and len(node.args) == 1 and not node.kwargs:
        return _CASTS[node.target]
    if node.target == "to" and len(node.args) == 2 and not node.kwargs and \
            isinstance(node.args[1], torch.dtype):
        return node.args[1]
    return None


# nll_loss_forward's reduction argument (torch's Reduction enum).
_REDUCTIONS = {1: "mean", 2: "sum"}


def _loss_call(node: fx.Node) -> Optional[tuple]:
    """(logits, target, options, the loss's own nodes) where ``node`` is a cross-entropy
    whose chunked form is exact (``_loss_options``), written as ``cross_entropy`` or, as a
    step traced in a device's form has it (device_form.py), as ``nll_loss_forward`` of
    ``log_softmax`` over the last dimension, its loss taken; None otherwise."""
    options = _loss_options(node)
    if options is not None:
        return node.args[0], node.args[1], options, (node,)
    if not (node.op == "call_function" and node.target is operator.getitem and
            node.args[1:] == (0,) and isinstance(node.args[0], fx.Node)):
        return None
    nll = node.args[0]
    if nll.op != "call_function" or nll.target not in _NLL or len(nll.users) != 1 or \
            len(nll.args) != 5 or nll.kwargs:
        return None
    log_softmax, target, weight, reduction, ignore_index = nll.args
    if weight is not None or reduction not in _REDUCTIONS or not isinstance(ignore_index, int) \
            or not isinstance(log_softmax, fx.Node) or len(log_softmax.users) != 1 or \
            log_softmax.op != "call_function" or log_softmax.target not in _LOG_SOFTMAX or \
            log_softmax.args[1:] not in ((-1,), (1,)) or log_softmax.kwargs:
        return None
    return (log_softmax.args[0], target,
            {"reduction": _REDUCTIONS[reduction], "ignore_index": ignore_index},
            (node, nll, log_softmax))


def _loss_options(node: fx.Node) -> Optional[dict]:
    """cross_entropy's options where the chunked form is exact: no class weights and no
    label smoothing, a mean or sum reduction; None otherwise."""
    if node.op != "call_function" or node.target is not torch.nn.functional.cross_entropy:
        return None
    names = ("weight", "size_average", "ignore_index", "reduce", "reduction",
             "label_smoothing")
    options = dict(zip(names, node.args[2:]))
    options.update(node.kwargs)
    if set(options) - set(names) or len(node.args) < 2:
        return None
    if options.get("weight") is not None or options.get("size_average") is not None or \
            options.get("reduce") is not None or options.get("label_smoothing", 0.0) != 0.0:
        return None
    reduction = options.get("reduction", "mean")
    ignore_index = options.get("ignore_index", -100)
    if reduction not in ("mean", "sum") or not isinstance(ignore_index, int):
        return None
    return {"reduction": reduction, "ignore_index": ignore_index}


def loss_chains(gm: fx.GraphModule) -> list[LossChain]:
    """The head-and-loss chains of Dynamo's graph ``gm`` that can be split (module docstring):
    each node between the head and the loss has one reader, the next one."""
    chains = []
    for loss in gm.graph.nodes:
        call = _loss_call(loss)
        if call is None:
            continue
        logits, target, options, loss_nodes = call
        if not isinstance(logits, fx.Node) or not isinstance(target, fx.Node):
            continue
        loss_shape, target_shape = _shape(logits), _shape(target)
        if loss_shape is None or len(loss_shape) != 2 or target_shape != loss_shape[:1]:
            continue
        rows, vocabulary = loss_shape
        between, casts, node = [], [], logits
        while node.op == "call_method" and len(node.users) == 1:
            cast = _cast_of(node)
            shape = _shape(node)
            if cast is None and (node.target not in _RESHAPES or shape is None or
                                 shape[-1] != vocabulary):
                break
            between.append(node)
            if cast is not None:
                casts.append(cast)
            node = node.args[0]
        if not (node.op == "call_function" and node.target in LINEAR and
                len(node.users) == 1 and isinstance(node.args[0], fx.Node)):
            continue
        head_shape, input_shape = _shape(node), _shape(node.args[0])
        if head_shape is None or input_shape is None or head_shape[-1] != vocabulary or \
                rows_of(head_shape) != rows or rows_of(input_shape) != rows:
            continue
        chains.append(LossChain(linear=node, loss=loss, between=tuple(reversed(between)),
                                casts=tuple(reversed(casts)), rows=rows,
                                vocabulary=vocabulary, width=input_shape[-1], target=target,
                                options=options, loss_nodes=loss_nodes))
    return chains


def chains_of(gm: fx.GraphModule) -> list:
    """The chains of Dynamo's graph ``gm`` that can run in chunks of rows: its head-and-loss
    chains (``loss_chains``) and its row chains (row_chains.py) that share no node with them."""
    losses = loss_chains(gm)
    taken = {n for c in losses for n in (c.linear, *c.between, *c.loss_nodes)}
    return [*losses, *(c for c in row_chains(gm) if not taken.intersection(c.nodes))]


def chunk_counts(chains: list, chunks: int) -> list[int]:
    """How many chunks each of ``chains`` runs in when the widest runs in ``chunks``: as many
    as keep its chunks' widest tensor no larger than the widest chain's (at least 1, at most
    one a row)."""
    widest = max(c.widest_bytes for c in chains)
    return [max(1, min(c.rows, math.ceil(chunks * c.widest_bytes / widest - 1e-9)))
            for c in chains]


def split_chains(gm: fx.GraphModule, chunks: int) -> fx.GraphModule:
    """A copy of ``gm`` whose chains (``chains_of``) run in chunks of rows, the widest in
    ``chunks`` (``chunk_counts``); ``gm`` itself is unchanged. The copy's loss equals the
    original's up to the order of floating-point sums."""
    graph = fx.Graph()
    copies: dict[fx.Node, fx.Node] = {}
    result = graph.graph_copy(gm.graph, copies)
    graph.output(result)
    chains = chains_of(gm)
    for chain, count in zip(chains, chunk_counts(chains, chunks) if chains else []):
        if isinstance(chain, LossChain):
            _split(graph, _rebased(chain, copies), count)
        elif count > 1:
            split_row_chain(graph, dataclasses.replace(
                chain, source=copies[chain.source],
                nodes=tuple(copies[n] for n in chain.nodes)), count)
    graph.eliminate_dead_code()
    graph.lint()
    split = fx.GraphModule(gm, graph)
    split.meta.update(gm.meta)
    return split


def _rebased(chain: LossChain, copies: dict) -> LossChain:
    return dataclasses.replace(chain, linear=copies[chain.linear], loss=copies[chain.loss],
                               between=tuple(copies[n] for n in chain.between),
                               target=copies[chain.target],
                               loss_nodes=tuple(copies[n] for n in chain.loss_nodes))


def _split(graph: fx.Graph, chain: LossChain, chunks: int) -> None:
    options = chain.options
    sizes = chunk_sizes(chain.rows, chunks)
    h, weight = chain.linear.args[0], chain.linear.args[1]
    bias = chain.linear.args[2] if len(chain.linear.args) > 2 else \
        chain.linear.kwargs.get("bias")

    def node(op: str, target_, args: tuple, like: fx.Node) -> fx.Node:
        made = graph.create_node(op, target_, args, {})
        # The module that ran it, for the plan's structure (structure.py).
        made.meta.update({k: v for k, v in like.meta.items() if k != "example_value"})
        return made

    with graph.inserting_before(chain.loss):
        flat = node("call_method", "reshape", (h, (-1, chain.width)), like=chain.linear)
        total = node("call_function", chunked_loss,
                     (flat, weight, bias, chain.target, sizes, chain.casts,
                      options["ignore_index"],
                      options["reduction"] == "mean"), like=chain.loss)
        # Its operations are recorded as run inside it, so that the gradient it forms in the
        # forward is planned in the forward pass (joint.py), not as backward work.
        stack = dict(total.meta.get("nn_module_stack") or {})
        stack[LOSS_PATH] = (LOSS_PATH, ChunkedLoss)
        total.meta["nn_module_stack"] = stack
        dtype = chain.casts[-1] if chain.casts else value_of(chain.linear).dtype
        total = node("call_method", "to", (total, dtype), like=chain.loss)
    chain.loss.replace_all_uses_with(total)
    for old in (*chain.loss_nodes, *reversed(chain.between), chain.linear):
        graph.erase_node(old)
