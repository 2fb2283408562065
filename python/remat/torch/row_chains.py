"""Row-wise chains of a region's graph, and running one in chunks of rows (tokens).

A transformer's MLP, ``down(silu(gate(x)) * up(x))``, computes each token's output from that
token's row of ``x`` alone, through intermediates wider than ``x`` (Llama-3-8B's are 3.5 times
as wide): at a long sequence they set the peak of the layer's forward and backward. Such a
**row chain** ends in a linear layer (``out``) whose input is computed from one tensor ``x`` by
linear layers (of parameters) and elementwise operations only, every intermediate read only
inside the chain, at least one of them wider than ``x``. Run over k chunks of ``x``'s rows and
concatenated, it gives the same output, and autograd the same gradients (the weights' summed
over the chunks): AOTAutograd traces the chunks' backward, and remat plans the joint graph as
any other, so whether a chunk's intermediates are kept or recomputed in the backward is the
plan's decision (Mini-Sequence Transformer's rule, where the plan finds it pays).

Random operations (dropout) are not elementwise here: in chunks they would draw in another
order than the whole region does.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Optional

import torch
from torch import fx

__all__ = ["RowChain", "row_chains", "split_row_chain", "chunk_sizes", "LINEAR"]

LINEAR = (torch._C._nn.linear, torch.nn.functional.linear)
# Elementwise operations of Dynamo's graphs: functions, and tensor methods by name.
_ELEMENTWISE = {
    torch.nn.functional.silu, torch.nn.functional.gelu, torch.nn.functional.relu,
    torch.nn.functional.sigmoid, torch.sigmoid, torch.tanh, torch.nn.functional.tanh,
    torch.mul, torch.add, torch.sub, torch.div, torch.pow, torch.neg, torch.exp,
    operator.mul, operator.add, operator.sub, operator.truediv, operator.pow, operator.neg,
    torch._C._nn.gelu, torch._C._nn.silu,
}
_ELEMENTWISE_METHODS = {"mul", "add", "sub", "div", "pow", "neg", "sigmoid", "tanh", "exp",
                        "float", "half", "bfloat16", "to"}


@dataclass(frozen=True)
class RowChain:
    """A row chain (module docstring): ``nodes`` in the graph's order, ``out`` last, computed
    from ``source`` over ``rows`` rows; ``widest_bytes`` is its largest intermediate's size."""

    source: fx.Node
    nodes: tuple
    rows: int
    widest_bytes: int

    @property
    def out(self) -> fx.Node:
        return self.nodes[-1]


def value_of(node: fx.Node) -> Optional[torch.Tensor]:
    """The example value Dynamo recorded for ``node``, where it is a tensor."""
    value = node.meta.get("example_value")
    return value if isinstance(value, torch.Tensor) else None


def rows_of(shape: tuple) -> int:
    """The rows of a tensor of ``shape``: the product of all its dimensions but the last."""
    count = 1
    for size in shape[:-1]:
        count *= size
    return count


def chunk_sizes(rows: int, chunks: int) -> list[int]:
    """``rows`` in ``chunks`` near-equal parts, the larger first (at most ``rows`` parts)."""
    chunks = max(1, min(chunks, rows))
    return [rows // chunks + (1 if i < rows % chunks else 0) for i in range(chunks)]


def _is_parameter(node) -> bool:
    """A linear layer's weight or bias: an input of the region (a parameter), or none."""
    return node is None or (isinstance(node, fx.Node) and node.op in ("placeholder", "get_attr"))


def _elementwise(node: fx.Node) -> bool:
    if node.op == "call_function":
        return node.target in _ELEMENTWISE
    return node.op == "call_method" and node.target in _ELEMENTWISE_METHODS


def _linear_of_parameters(node: fx.Node) -> bool:
    args = list(node.args) + [node.kwargs.get("bias")] if "bias" in node.kwargs else \
        list(node.args)
    return node.op == "call_function" and node.target in LINEAR and len(args) >= 2 and \
        all(_is_parameter(a) for a in args[1:])


def _chain_ending_in(out: fx.Node) -> Optional[RowChain]:
    """The row chain that ends in the linear layer ``out``, or None."""
    if not _linear_of_parameters(out) or not isinstance(out.args[0], fx.Node):
        return None
    members: set = set()
    sources: set = set()
    frontier = [out.args[0]]
    while frontier:
        node = frontier.pop()
        if node in members or node in sources:
            continue
        if _linear_of_parameters(node):
            members.add(node)
            # A linear layer's input is where the chain starts, unless the chain computes it.
            if isinstance(node.args[0], fx.Node) and node.args[0] not in members:
                sources.add(node.args[0])
        elif _elementwise(node):
            members.add(node)
            frontier.extend(a for a in (*node.args, *node.kwargs.values())
                            if isinstance(a, fx.Node))
        else:
            sources.add(node)
    if len(sources) != 1 or not any(n.target in LINEAR for n in members):
        return None
    (source,) = sources
    x, y = value_of(source), value_of(out)
    if x is None or y is None or x.dim() < 2 or tuple(y.shape[:-1]) != tuple(x.shape[:-1]):
        return None
    widest = 0
    for node in members:
        value = value_of(node)
        if value is None or tuple(value.shape[:-1]) != tuple(x.shape[:-1]) or \
                any(user not in members and user is not out for user in node.users):
            return None
        widest = max(widest, value.numel() * value.element_size())
    if widest <= x.numel() * x.element_size():
        return None  # nothing in it is wider than its input
    order = [n for n in out.graph.nodes if n in members] + [out]
    return RowChain(source=source, nodes=tuple(order), rows=rows_of(tuple(x.shape)),
                    widest_bytes=widest)


def row_chains(gm: fx.GraphModule) -> list[RowChain]:
    """The row chains of Dynamo's graph ``gm``, in the graph's order, none sharing a node."""
    chains, taken = [], set()
    for node in gm.graph.nodes:
        chain = _chain_ending_in(node)
        if chain is not None and not taken.intersection(chain.nodes):
            chains.append(chain)
            taken.update(chain.nodes)
    return chains


def split_row_chain(graph: fx.Graph, chain: RowChain, chunks: int) -> None:
    """Rewrites ``chain`` of ``graph`` (its nodes already ``graph``'s) to run over ``chunks``
    chunks of its rows, their outputs concatenated in order."""
    out, source = chain.out, chain.source
    width = value_of(source).shape[-1]
    shape = tuple(value_of(out).shape)
    with graph.inserting_before(out):
        flat = graph.call_method("reshape", (source, (-1, width)))
        parts = graph.call_function(torch.split, (flat, chunk_sizes(chain.rows, chunks)))
        outputs = []
        for i in range(min(chunks, chain.rows)):
            copies = {source: graph.call_function(operator.getitem, (parts, i))}
            for node in chain.nodes:
                copies[node] = graph.node_copy(node, lambda arg: copies.get(arg, arg))
                copies[node].meta.pop("example_value", None)  # a chunk's shape is not it
            outputs.append(copies[out])
        joined = graph.call_function(torch.cat, (outputs, 0))
        whole = graph.call_method("reshape", (joined, shape))
    for made in (flat, parts, joined, whole):
        made.meta.update({k: v for k, v in out.meta.items() if k != "example_value"})
    out.replace_all_uses_with(whole)
    for node in reversed(chain.nodes):
        graph.erase_node(node)
