"""Sums of matrix products folded into addmm (remat/torch/product_sums.py)."""

import copy
import warnings

import torch
from torch.fx.experimental.proxy_tensor import make_fx

import remat
import remat.torch
from remat.torch.product_sums import accumulate_in_place, fold_product_sums, in_place_sums

aten = torch.ops.aten


def _traced(fn, *args):
    return make_fx(fn, tracing_mode="fake")(*args)


def _targets(gm):
    return [n.target for n in gm.graph.nodes if n.op == "call_function"]


def test_a_sum_of_products_becomes_addmm_chains_with_the_same_value():
    # acc + x1 y1 + (x2 y2)^T^T + (x3 y3)^T: the third product is transposed once, so it is
    # y3^T x3^T, an addmm of the transposed operands.
    def fn(acc, x1, y1, x2, y2, x3, y3):
        s = aten.add.Tensor(acc, aten.mm.default(x1, y1))
        s = aten.add.Tensor(aten.t.default(aten.t.default(aten.mm.default(x2, y2))), s)
        return aten.add.Tensor(s, aten.t.default(aten.mm.default(x3, y3)))

    torch.manual_seed(0)
    args = [torch.randn(5, 4), torch.randn(5, 3), torch.randn(3, 4), torch.randn(5, 2),
            torch.randn(2, 4), torch.randn(4, 6), torch.randn(6, 5)]
    gm = _traced(fn, *args)
    assert fold_product_sums(gm) == 3
    assert _targets(gm).count(aten.addmm.default) == 3
    assert aten.mm.default not in _targets(gm) and aten.add.Tensor not in _targets(gm)
    torch.testing.assert_close(gm(*args), fn(*args))


def test_a_product_read_elsewhere_or_a_scaled_sum_stays():
    def fn(acc, x, y):
        p = aten.mm.default(x, y)
        return aten.add.Tensor(acc, p), aten.mul.Tensor(p, 2.0), \
            aten.add.Tensor(acc, aten.mm.default(x, y), alpha=2)

    args = [torch.randn(3, 3), torch.randn(3, 2), torch.randn(2, 3)]
    gm = _traced(fn, *args)
    assert fold_product_sums(gm) == 0
    assert aten.addmm.default not in _targets(gm)


def test_a_sum_of_products_of_its_own_accumulates_in_place():
    # mm(x1, y1) + x2 y2 + x3 y3: the second and third addmm add into the sum so far, which
    # nothing else reads. The first adds into ``acc``, an input the caller still holds: it
    # stays a new tensor, and so does the input.
    def fn(acc, x1, y1, x2, y2, x3, y3):
        s = aten.mm.default(x1, y1)
        s = aten.addmm.default(s, x2, y2)
        s = aten.addmm.default(s, x3, y3)
        return s, aten.addmm.default(acc, x1, y1)

    torch.manual_seed(0)
    args = [torch.randn(5, 4), torch.randn(5, 3), torch.randn(3, 4), torch.randn(5, 2),
            torch.randn(2, 4), torch.randn(5, 6), torch.randn(6, 4)]
    before = [a.clone() for a in args]
    gm = _traced(fn, *args)
    assert accumulate_in_place(gm) == 2
    assert _targets(gm).count(torch.ops.remat.accumulate_product.default) == 2
    assert _targets(gm).count(aten.addmm.default) == 1
    torch.testing.assert_close(gm(*args), fn(*args))
    for a, b in zip(args, before):
        assert torch.equal(a, b)


def test_a_sum_read_elsewhere_or_scaled_is_not_accumulated_in_place():
    def fn(x, y):
        p = aten.mm.default(x, y)
        q = aten.mm.default(x, y)
        return aten.addmm.default(p, x, y), p, aten.addmm.default(q, x, y, beta=2)

    args = [torch.randn(3, 2), torch.randn(2, 3)]
    gm = _traced(fn, *args)
    assert accumulate_in_place(gm) == 0
    torch.testing.assert_close(gm(*args), fn(*args))


def test_the_chunks_sums_add_in_place_under_inductor_where_ci_is_set(monkeypatch):
    # With the CI environment variable set, Inductor refuses a fallback kernel for an aten
    # operator that has a decomposition (addmm_ has). remat's own operator runs there, and
    # the region's weight gradients equal eager's.
    from remat.torch import partition
    from test_split import HeadAndLoss, _inputs

    monkeypatch.setenv("CI", "1")
    rewritten = []

    def counted(module):
        rewritten.append(accumulate_in_place(module))
        return rewritten[-1]
    monkeypatch.setattr(partition, "accumulate_in_place", counted)
    torch.manual_seed(0)
    model = HeadAndLoss()
    reference = copy.deepcopy(model)
    torch._dynamo.reset()
    backend = remat.torch.backend(budget="50%", chunks=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", remat.BudgetWarning)
        torch.compile(model, backend=backend, dynamic=False)(*_inputs()).backward()
    assert sum(rewritten) > 0
    reference(*_inputs()).backward()
    largest = max(p.grad.abs().max() for p in reference.parameters())
    for p, q in zip(model.parameters(), reference.parameters()):
        assert (p.grad - q.grad).abs().max() <= 1e-5 * largest


def test_remats_graph_counts_a_sum_added_in_place_once():
    # x1 y1 + x2 y2 + x3 y3 of computed values (a weight gradient's chain), then read: the two
    # sums add into the first product's memory, so remat's graph gives them no bytes, the
    # product is read by every reader of the chain, and all three run once. Without the
    # chunks' sums folded, or where a product reads an input of the region (an input's
    # gradient, g W), the graph counts every sum.
    from remat.torch.joint import read_joint_graph

    def fn(x1, y1, x2, y2, x3, y3, weight):
        x1, y1, x2, y2, x3, y3 = (aten.tanh.default(a) for a in (x1, y1, x2, y2, x3, y3))
        s = aten.mm.default(x1, y1)
        s = aten.addmm.default(s, x2, y2)
        s = aten.addmm.default(s, x3, y3)
        t = aten.mm.default(x1, y1)
        t = aten.addmm.default(t, x2, weight)
        return aten.tanh.default(s), aten.tanh.default(t)

    args = [torch.randn(5, 3), torch.randn(3, 4), torch.randn(5, 2), torch.randn(2, 4),
            torch.randn(5, 6), torch.randn(6, 4), torch.randn(2, 4)]
    gm = _traced(fn, *args)
    nodes = [n for n in gm.graph.nodes if n.op == "call_function" and
             n.target in (aten.mm.default, aten.addmm.default)]
    product, first, second, other, reads_weight = nodes
    assert in_place_sums(nodes) == {1: 0, 2: 0, 4: 3}
    joint = read_joint_graph(gm, 2, sums_in_place=True)
    ids = {node.name: v for v, node in enumerate(joint.order) if node is not None}
    product, first, second, other, reads_weight = (ids[n.name] for n in nodes)
    (s_tanh,) = [v for v, node in enumerate(joint.order) if node is not None and
                 node.target is aten.tanh.default and node.args[0] is nodes[2]]
    assert joint.bytes[product] == 5 * 4 * 4
    assert joint.bytes[first] == joint.bytes[second] == 0
    assert {(product, first), (product, second), (product, s_tanh)} <= set(joint.edges)
    assert {product, first, second} <= joint.once and joint.in_place_sums == 2
    assert joint.bytes[reads_weight] == 5 * 4 * 4 and not {other, reads_weight} & joint.once
    whole = read_joint_graph(gm, 2)
    assert whole.bytes[first] == whole.bytes[second] == 5 * 4 * 4
    assert whole.in_place_sums == 0 and not {product, first, second} & whole.once
