"""Shared helpers of the Python tests: the test networks and a plain-autograd reference."""

from __future__ import annotations

import copy
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.dirname(__file__))

import networks  # noqa: E402


def reference_step(model, loss_fn, inputs, seed: int):
    """Plain ``loss.backward()`` on a copy of ``model``: loss, gradients and buffers."""
    model = copy.deepcopy(model)
    torch.manual_seed(seed)
    loss = loss_fn(model(inputs[0]), *inputs[1:])
    loss.backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    buffers = {n: b.clone() for n, b in model.named_buffers()}
    return loss.detach(), grads, buffers


@pytest.fixture(params=sorted(networks.NETWORKS))
def network_name(request):
    return request.param
