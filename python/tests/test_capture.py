"""Capture of training steps (remat/torch/capture.py) and their costs (costs.py)."""

import pytest
import torch
from torch import nn

import remat
from remat.torch.capture import capture
from remat.torch.costs import flop_costs

import networks


def test_linear_layer_nodes_bytes_and_flops():
    # One 3->2 linear layer on a batch of 5 and a sum loss. The forward product is an addmm
    # of (5x3)(3x2) = 2*5*3*2 = 60 FLOPs with a 5x2 float output (40 bytes).
    torch.manual_seed(0)
    model = nn.Linear(3, 2)
    captured = capture(model, lambda out: out.sum(), (torch.randn(5, 3),))
    names = [n.target for n in captured.nodes]
    assert torch.ops.aten.addmm.default in names
    addmm = names.index(torch.ops.aten.addmm.default)
    assert captured.bytes[addmm] == 5 * 2 * 4
    costs = flop_costs(captured)
    assert costs[addmm] == 60.0
    kinds = captured.kinds
    loss = kinds.index(remat.NodeKind.loss)
    assert all(k == remat.NodeKind.forward for k in kinds[:loss])
    assert all(k == remat.NodeKind.backward for k in kinds[loss + 1:])
    # The weight gradient is an output of the backward pass: every parameter has one.
    assert sorted(captured.gradients.values()) == ["bias", "weight"]


def test_views_share_their_base_and_cost_nothing_extra():
    # x.view(...) and x.t() create no storage: they fold into the node that made x.
    torch.manual_seed(0)
    model = nn.Linear(4, 4)

    def loss_fn(out):
        return out.view(2, 8).t().sum()

    captured = capture(model, loss_fn, (torch.randn(4, 4),))
    assert all(n.target not in (torch.ops.aten.view.default, torch.ops.aten.t.default)
               for n in captured.nodes)
    views = [n for n, b in captured.base_of.items()
             if getattr(n, "target", None) is torch.ops.aten.view.default]
    assert views and all(captured.base_of[v] is not None for v in views)


def test_multi_output_operations_count_every_output():
    # Batch norm in training returns the output, the saved mean and inverse std and the two
    # new running statistics; its node holds all five: 2*4*3*3 + 4*4 floats.
    torch.manual_seed(0)
    model = nn.Sequential(nn.BatchNorm2d(4))
    captured = capture(model, lambda out: out.sum(), (torch.randn(2, 4, 3, 3),))
    bn = [i for i, n in enumerate(captured.nodes) if "batch_norm" in str(n.target)
          and "backward" not in str(n.target)]
    assert len(bn) == 1
    assert captured.bytes[bn[0]] == (2 * 4 * 3 * 3 + 4 * 4) * 4
    assert set(captured.buffer_updates.values()) == {"0.running_mean", "0.running_var",
                                                    "0.num_batches_tracked"}


def test_graph_is_a_valid_training_graph(network_name):
    model, loss_fn, inputs = networks.NETWORKS[network_name]()
    captured = capture(model, loss_fn, inputs)
    graph = captured.to_graph([1.0] * len(captured), "unit")
    assert graph.has_training_structure
    assert len(captured.gradients) == sum(1 for _ in model.parameters())


def test_data_dependent_control_flow_is_a_capture_error():
    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            y = self.fc(x)
            return y * 2 if y.sum() > 0 else y

    with pytest.raises(remat.CaptureError, match="cannot trace") as error:
        capture(Branchy(), lambda out: out.sum(), (torch.randn(2, 3),))
    # The message names the operation and the user's line that needs the value.
    assert "_local_scalar_dense" in str(error.value)
    assert "test_capture.py" in str(error.value) and "y.sum() > 0" in str(error.value)
    assert "data-dependent control flow" in str(error.value)


def test_loss_must_be_a_scalar():
    with pytest.raises(remat.CaptureError, match="single element"):
        capture(nn.Linear(3, 3), lambda out: out, (torch.randn(2, 3),))


def test_operation_outside_aten_is_charged_the_bytes_it_moves():
    library = torch.library.Library("remat_test", "DEF")
    library.define("scale(Tensor x) -> Tensor")
    library.impl("scale", lambda x: x * 2, "CompositeExplicitAutograd")
    library.impl("scale", lambda x: torch.empty_like(x), "Meta")

    class Scaled(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            return torch.ops.remat_test.scale(self.fc(x).detach()) + self.fc(x)

    captured = capture(Scaled(), lambda out: out.sum(), (torch.randn(2, 3),))
    scale = [i for i, n in enumerate(captured.nodes) if "scale" in str(n.target)]
    assert len(scale) == 1
    # Its size is in the traced metadata: 2x3 floats read, 2x3 written.
    assert flop_costs(captured)[scale[0]] == 2 * 6 * 4
    assert flop_costs(captured, flops_per_byte=0.5)[scale[0]] == 6 * 4


def test_operation_whose_size_the_trace_left_unknown_is_named():
    captured = capture(nn.Linear(3, 3), lambda out: out.sum(), (torch.randn(2, 3),))
    node = captured.nodes[0]
    del node.meta["val"]
    with pytest.raises(remat.UnknownOpError, match=node.name):
        flop_costs(captured)
    assert flop_costs(captured, unknown_ops="zero-cost")[0] == 0.0


class _InPlaceWeight(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        with torch.no_grad():
            self.fc.weight.mul_(0.5)
        return self.fc(x)


class _ReentrantCheckpoint(nn.Module):
    def __init__(self, first: bool):
        super().__init__()
        self.first = first
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)

    def forward(self, x):
        # First layer checkpointed: no input of the block requires grad (the loss has none);
        # else the block's backward runs autograd inside autograd, which the trace refuses.
        if self.first:
            return self.b(torch.utils.checkpoint.checkpoint(self.a, x, use_reentrant=True))
        return torch.utils.checkpoint.checkpoint(self.b, self.a(x), use_reentrant=True)


class _NoGradModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        with torch.no_grad():
            return self.fc(x)


class _NoGradFirstLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(3, 3)
        self.b = nn.Linear(3, 3)

    def forward(self, x):
        with torch.no_grad():
            h = self.a(x)
        return self.b(h)


@pytest.mark.parametrize("model, cause", [
    (_InPlaceWeight, "writes in place into a parameter"),
    (lambda: _ReentrantCheckpoint(first=True), "use_reentrant=False"),
    (lambda: _ReentrantCheckpoint(first=False), "use_reentrant=False"),
    (_NoGradModel, "the loss does not require a gradient"),
    (_NoGradFirstLayer, "receives none"),
], ids=["in-place-parameter", "reentrant-first", "reentrant-inner", "no-grad", "no-grad-part"])
def test_capture_error_names_its_own_cause(model, cause):
    torch.manual_seed(0)
    with pytest.raises(remat.CaptureError) as error:
        capture(model(), lambda out: out.sum(), (torch.randn(2, 3),))
    message = str(error.value)
    assert cause in message
    # The control-flow hint is for data-dependent traces only.
    assert "data-dependent" not in message


def test_data_dependent_shape_gets_its_own_hint():
    class Masked(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(3, 3)

        def forward(self, x):
            y = self.fc(x)
            return y[y > 0]

    with pytest.raises(remat.CaptureError, match="output shape depends on tensor values"):
        capture(Masked(), lambda out: out.sum(), (torch.randn(2, 3),))


def test_inputs_that_require_grad_have_gradient_outputs():
    # y = x W^T + b on a leaf x that requires grad: the step also yields dL/dx.
    torch.manual_seed(0)
    x = torch.randn(2, 3, requires_grad=True)
    captured = capture(nn.Linear(3, 2), lambda out: out.sum(), (x,))
    assert list(captured.input_gradients.values()) == [0]
    assert captured.input_specs[0].requires_grad


def test_cpu_attention_is_charged_its_products_not_its_bytes():
    from torch.nn import functional as F
    from torch.utils.flop_counter import sdpa_backward_flop_count, sdpa_flop_count

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(32, 96)

        def forward(self, x):
            q, k, v = self.qkv(x).view(2, 64, 3, 4, 8).permute(2, 0, 3, 1, 4)
            return F.scaled_dot_product_attention(q, k, v).sum()

    captured = capture(Attention(), lambda y: y, (torch.randn(2, 64, 32),))
    costs = flop_costs(captured)
    shape = (2, 4, 64, 8)
    found = {}
    for node, cost in zip(captured.nodes, costs):
        name = str(node.target)
        if "flash_attention_for_cpu" in name:
            found["backward" if "backward" in name else "forward"] = cost
    assert found["forward"] == sdpa_flop_count(shape, shape, shape)
    assert found["backward"] == sdpa_backward_flop_count(shape, shape, shape, shape)
    # Its bytes moved (q, k, v and the output: what it was charged before) are far below.
    moved = 4 * (2 * 4 * 64 * 8) * 4
    assert found["forward"] > 10 * moved
