#!/usr/bin/python3
"""Writes the ONNX test models of tests/onnx/data (run by hand; CI never runs Python).

Needs Debian 12's python3-torch, python3-torchvision and python3-onnx:

    apt-get install -y --no-install-recommends python3-torch python3-torchvision python3-onnx
    /usr/bin/python3 scripts/export_onnx_models.py [OUTPUT_DIR]

Two kinds of model:
- torchvision networks and a small GPT-style Transformer, exported from PyTorch in training
  mode (BatchNormalization with training_mode=1, Dropout with training_mode=true), so the
  graph is the one a training step runs;
- small models built with the onnx helper API, one per feature of the importer (operator
  coverage, folding, identity-like operators, errors), with hand-checkable sizes.

Graph only: every initializer with more than 16 elements is replaced by an all-zero sparse
initializer of the same shape (no values, no indices), so the files stay small (kilobytes),
pass onnx.checker, and keep every parameter's name, type and shape. Small initializers (shape
vectors, scalars) keep their values because shape computations read them. Two models are also
exported with export_params=False (weights as graph inputs, no initializers at all), the other
graph-only form the importer accepts.
"""

import io
import os
import sys
import warnings

import onnx
from onnx import TensorProto, helper

STRIP_ABOVE_ELEMENTS = 16


def strip_initializers(model: onnx.ModelProto) -> None:
    """Replaces large dense initializers by empty sparse ones of the same shape and type."""
    kept = []
    sparse = []
    for tensor in model.graph.initializer:
        elements = 1
        for d in tensor.dims:
            elements *= d
        if elements <= STRIP_ABOVE_ELEMENTS:
            kept.append(tensor)
            continue
        values = helper.make_tensor(tensor.name, tensor.data_type, [0], [])
        indices = helper.make_tensor(tensor.name + ".indices", TensorProto.INT64, [0], [])
        sparse.append(helper.make_sparse_tensor(values, indices, list(tensor.dims)))
    del model.graph.initializer[:]
    model.graph.initializer.extend(kept)
    model.graph.sparse_initializer.extend(sparse)


def save(model: onnx.ModelProto, out_dir: str, name: str) -> None:
    onnx.checker.check_model(model)
    path = os.path.join(out_dir, name)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    print(f"{path}: {len(model.graph.node)} nodes, {os.path.getsize(path)} bytes")


# ---------------------------------------------------------------------------------------------
# PyTorch exports


def export_torch(module, example, out_dir, name, opset, dynamic_batch, input_name="input",
                 export_params=True):
    import torch

    module.train()  # training mode preserved in the graph
    buffer = io.BytesIO()
    dynamic_axes = {input_name: {0: "batch"}, "output": {0: "batch"}} if dynamic_batch else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            module,
            example,
            buffer,
            export_params=export_params,
            training=torch.onnx.TrainingMode.TRAINING,
            do_constant_folding=False,
            opset_version=opset,
            input_names=[input_name],
            output_names=["output"],
            dynamic_axes=dynamic_axes,
        )
    model = onnx.load_from_string(buffer.getvalue())
    strip_initializers(model)
    save(model, out_dir, name)


def make_gpt(torch, vocab, seq_length, hidden, heads, layers):
    """A pre-layer-norm GPT-2 style decoder with the zoo transformer's layer structure."""
    nn = torch.nn
    F = torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(hidden)
            self.attn_qkv = nn.Linear(hidden, 3 * hidden)
            self.attn_proj = nn.Linear(hidden, hidden)
            self.ln_2 = nn.LayerNorm(hidden)
            self.mlp_fc = nn.Linear(hidden, 4 * hidden)
            self.mlp_proj = nn.Linear(4 * hidden, hidden)
            self.drop = nn.Dropout(0.1)
            mask = torch.ones(seq_length, seq_length, dtype=torch.bool).triu(1)
            self.register_buffer("causal_mask", mask, persistent=False)

        def forward(self, x):
            b, s, h = x.shape
            d = h // heads
            qkv = self.attn_qkv(self.ln_1(x))
            q, k, v = qkv.split(h, dim=2)
            q = q.reshape(b, s, heads, d).transpose(1, 2)
            k = k.reshape(b, s, heads, d).permute(0, 2, 3, 1)
            v = v.reshape(b, s, heads, d).transpose(1, 2)
            scores = torch.matmul(q, k) * (1.0 / d**0.5)
            scores = scores.masked_fill(self.causal_mask, float("-inf"))
            probs = self.drop(F.softmax(scores, dim=-1))
            context = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, h)
            x = x + self.drop(self.attn_proj(context))
            x = x + self.drop(self.mlp_proj(F.gelu(self.mlp_fc(self.ln_2(x)))))
            return x

    class Gpt(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(vocab, hidden)
            self.wpe = nn.Embedding(seq_length, hidden)
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])
            self.ln_f = nn.LayerNorm(hidden)
            self.register_buffer("positions", torch.arange(seq_length), persistent=False)

        def forward(self, tokens):
            x = self.wte(tokens) + self.wpe(self.positions)
            for block in self.blocks:
                x = block(x)
            return torch.matmul(self.ln_f(x), self.wte.weight.t())  # head tied to wte

    return Gpt()


def export_torch_models(out_dir):
    import torch
    import torchvision

    torch.manual_seed(0)
    image = lambda batch: torch.randn(batch, 3, 224, 224)
    # Fixed and symbolic batches, so both import paths are exercised.
    export_torch(torchvision.models.resnet18(), image(2), out_dir, "resnet18.onnx", 15, False)
    # export_params=False: the weights are graph inputs without initializers.
    export_torch(torchvision.models.resnet18(), image(2), out_dir, "resnet18_no_params.onnx", 15,
                 False, export_params=False)
    export_torch(torchvision.models.resnet50(), image(2), out_dir, "resnet50.onnx", 15, True)
    export_torch(torchvision.models.mobilenet_v2(), image(4), out_dir, "mobilenet_v2.onnx", 15,
                 False)
    export_torch(torchvision.models.vgg16(), image(1), out_dir, "vgg16.onnx", 15, False)
    export_torch(torchvision.models.densenet121(), image(2), out_dir, "densenet121.onnx", 15,
                 True)
    # The Transformer: LayerNormalization is an operator from opset 17; opset 14 decomposes
    # it into ReduceMean, Sub, Pow, Sqrt, Div, Mul and Add.
    config = dict(vocab=1000, seq_length=64, hidden=128, heads=4, layers=2)
    tokens = torch.randint(0, config["vocab"], (2, config["seq_length"]))
    gpt = make_gpt(torch, **config)
    export_torch(gpt, tokens, out_dir, "gpt_tiny.onnx", 17, True, input_name="tokens")
    export_torch(gpt, tokens, out_dir, "gpt_tiny_opset14.onnx", 14, True, input_name="tokens")
    export_torch(gpt, tokens, out_dir, "gpt_tiny_no_params.onnx", 17, True, input_name="tokens",
                 export_params=False)


# ---------------------------------------------------------------------------------------------
# Hand-built models


def weight(name, dims):
    return helper.make_tensor(name, TensorProto.FLOAT, dims, [0.0] * _count(dims))


def _count(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def int64s(name, values):
    return helper.make_tensor(name, TensorProto.INT64, [len(values)], values)


def model_of(nodes, inputs, outputs, initializers, opset=13, name="g", domains=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, 1) for d in domains]
    model = helper.make_model(graph, opset_imports=imports, producer_name="remat-tests")
    model.ir_version = 8
    strip_initializers(model)
    return model


def tiny_mlp():
    """x (4x8) -> Gemm 8->16 -> Relu -> Identity -> Dropout (eval) -> MatMul 16->3 -> Softmax.

    Sizes to check by hand: Gemm 4*8*16 = 512 FLOPs and 4*16*4 = 256 bytes; Relu 64 FLOPs,
    256 bytes; MatMul 4*16*3 = 192 FLOPs, 48 bytes; Softmax 12 FLOPs, 48 bytes. Identity and
    the eval-form Dropout are aliases, not nodes.
    """
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 3])
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"], name="fc1", transB=1),
        helper.make_node("Relu", ["h1"], ["a1"], name="relu1"),
        helper.make_node("Identity", ["a1"], ["a1_id"], name="identity"),
        helper.make_node("Dropout", ["a1_id"], ["a1_drop"], name="dropout_eval"),
        helper.make_node("MatMul", ["a1_drop", "w2"], ["logits"], name="fc2"),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=-1),
    ]
    inits = [weight("w1", [16, 8]), weight("b1", [16]), weight("w2", [16, 3])]
    return model_of(nodes, [x], [y], inits)


def ops_cnn():
    """One image model touching the operators the importer supports beyond the torchvision
    exports: ConvTranspose, AveragePool, GlobalMaxPool, Pad, Resize, Slice, Concat, Gather,
    LeakyRelu, Sigmoid, Tanh, Clip, Sub, Div, Pow, Sqrt, ReduceMean, Transpose, Squeeze,
    Unsqueeze, Erf, and a Shape -> Gather -> Unsqueeze -> Concat -> Reshape shape subgraph
    that must be folded away. Batch is symbolic ("N")."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 16, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])
    nodes = [
        helper.make_node("Conv", ["x", "wc", "bc"], ["c1"], name="conv", kernel_shape=[3, 3],
                         pads=[1, 1, 1, 1]),  # N x 8 x 16 x 16
        helper.make_node("LeakyRelu", ["c1"], ["a1"], name="leaky", alpha=0.1),
        helper.make_node("AveragePool", ["a1"], ["p1"], name="avgpool", kernel_shape=[2, 2],
                         strides=[2, 2]),  # N x 8 x 8 x 8
        helper.make_node("ConvTranspose", ["p1", "wt"], ["u1"], name="deconv",
                         kernel_shape=[2, 2], strides=[2, 2]),  # N x 4 x 16 x 16
        helper.make_node("Resize", ["p1", "", "scales"], ["r1"], name="resize",
                         mode="nearest"),  # N x 8 x 16 x 16
        helper.make_node("Slice", ["r1", "s_start", "s_end", "s_axes"], ["r2"],
                         name="slice"),  # channels 0..4: N x 4 x 16 x 16
        helper.make_node("Concat", ["u1", "r2"], ["cat"], name="concat", axis=1),  # N x 8 x ..
        helper.make_node("Pad", ["cat", "pads"], ["pad"], name="pad"),  # N x 8 x 18 x 18
        helper.make_node("Sigmoid", ["pad"], ["sig"], name="sigmoid"),
        helper.make_node("Tanh", ["pad"], ["tanh"], name="tanh"),
        helper.make_node("Sub", ["sig", "tanh"], ["diff"], name="sub"),
        helper.make_node("Clip", ["diff", "clip_min", "clip_max"], ["clip"], name="clip"),
        # Layer-norm style decomposition over the last axis.
        helper.make_node("ReduceMean", ["clip"], ["mean"], name="mean", axes=[-1]),
        helper.make_node("Sub", ["clip", "mean"], ["centered"], name="center"),
        helper.make_node("Pow", ["centered", "two"], ["sq"], name="pow"),
        helper.make_node("ReduceMean", ["sq"], ["var"], name="var", axes=[-1]),
        helper.make_node("Sqrt", ["var"], ["std"], name="sqrt"),
        helper.make_node("Div", ["centered", "std"], ["norm"], name="div"),
        helper.make_node("Erf", ["norm"], ["erf"], name="erf"),
        helper.make_node("GlobalMaxPool", ["erf"], ["gmp"], name="gmp"),  # N x 8 x 1 x 1
        helper.make_node("Squeeze", ["gmp", "sq_axes"], ["flat"], name="squeeze"),  # N x 8
        helper.make_node("Unsqueeze", ["flat", "unsq_axes"], ["flat3"],
                         name="unsqueeze"),  # N x 1 x 8
        helper.make_node("Transpose", ["flat3"], ["t"], name="transpose",
                         perm=[0, 2, 1]),  # N x 8 x 1
        helper.make_node("Gather", ["t", "gidx"], ["g"], name="gather", axis=1),  # N x 4 x 1
        # Shape subgraph: reshape g to (N, 4) with N read from x at run time.
        helper.make_node("Shape", ["x"], ["x_shape"], name="shape"),
        helper.make_node("Gather", ["x_shape", "zero"], ["n"], name="shape_gather", axis=0),
        helper.make_node("Unsqueeze", ["n", "unsq0"], ["n1"], name="shape_unsqueeze"),
        helper.make_node("Concat", ["n1", "four"], ["new_shape"], name="shape_concat", axis=0),
        helper.make_node("Reshape", ["g", "new_shape"], ["y"], name="reshape"),
    ]
    inits = [
        weight("wc", [8, 3, 3, 3]), helper.make_tensor("bc", TensorProto.FLOAT, [8], [0.0] * 8),
        weight("wt", [8, 4, 2, 2]),
        helper.make_tensor("scales", TensorProto.FLOAT, [4], [1.0, 1.0, 2.0, 2.0]),
        int64s("s_start", [0]), int64s("s_end", [4]), int64s("s_axes", [1]),
        int64s("pads", [0, 0, 1, 1, 0, 0, 1, 1]),
        helper.make_tensor("clip_min", TensorProto.FLOAT, [], [0.0]),
        helper.make_tensor("clip_max", TensorProto.FLOAT, [], [6.0]),
        helper.make_tensor("two", TensorProto.FLOAT, [], [2.0]),
        int64s("sq_axes", [2, 3]), int64s("unsq_axes", [1]), int64s("gidx", [0, 2, 4, 6]),
        helper.make_tensor("zero", TensorProto.INT64, [], [0]), int64s("unsq0", [0]),
        int64s("four", [4]),
    ]
    return model_of(nodes, [x], [y], inits)


def upsample_opset9():
    """Upsample (deprecated after opset 9) and a Dropout without training_mode."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 16, 16])
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("Upsample", ["a", "scales"], ["u"], name="upsample", mode="nearest"),
        helper.make_node("Dropout", ["u"], ["y"], name="dropout"),
    ]
    scales = helper.make_tensor("scales", TensorProto.FLOAT, [4], [1.0, 1.0, 2.0, 2.0])
    return model_of(nodes, [x], [y], [scales], opset=9)


def unsupported_op():
    """An LSTM: valid ONNX, but recurrent networks are outside the importer's operator set."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 2, 8])  # seq, batch, input
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [5, 1, 2, 4])
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("LSTM", ["a", "W", "R"], ["y"], name="encoder_lstm", hidden_size=4),
    ]
    return model_of(nodes, [x], [y], [weight("W", [1, 16, 8]), weight("R", [1, 16, 4])])


def custom_op():
    """A node of a custom domain, whose output shape ONNX cannot infer."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("FancyNorm", ["a"], ["b"], name="fancy", domain="com.example"),
        helper.make_node("Gemm", ["b", "w"], ["y"], name="fc", transB=1),
    ]
    return model_of(nodes, [x], [y], [weight("w", [3, 8])], domains=["com.example"])


def conv_zero_stride():
    """A Conv with a zero stride: onnx.checker accepts it, ONNX 1.12's shape inference divides
    by it (the first crash the fuzzer found); the importer must reject it first."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"], name="bad_conv", kernel_shape=[3, 3],
                              pads=[1, 1, 1, 1], strides=[0, 1])]
    return model_of(nodes, [x], [y], [weight("w", [4, 3, 3, 3])])


def shape_gather_out_of_range():
    """A shape computation gathering index 4294967295 of a rank-2 shape: ONNX 1.12's data
    propagation reads out of bounds on it (the second crash the fuzzer found). The importer
    cannot fold it, so the Reshape's output has no size: an error naming it."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None])
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="relu"),
        helper.make_node("Shape", ["a"], ["s"], name="shape"),
        helper.make_node("Gather", ["s", "bad_index"], ["n"], name="bad_gather", axis=0),
        helper.make_node("Unsqueeze", ["n", "zero_axis"], ["n1"], name="unsqueeze"),
        helper.make_node("Concat", ["n1", "minus_one"], ["target"], name="concat", axis=0),
        helper.make_node("Reshape", ["a", "target"], ["y"], name="reshape"),
    ]
    inits = [helper.make_tensor("bad_index", TensorProto.INT64, [], [4294967295]),
             int64s("zero_axis", [0]), int64s("minus_one", [-1])]
    return model_of(nodes, [x], [y], inits)


def convtranspose_rank1_weight():
    """A ConvTranspose whose weight has rank 1: ONNX 1.12's shape inference dereferences a
    missing dimension (the third crash the fuzzer found); the importer must reject it first."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None, None, None, None])
    nodes = [helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="bad_deconv")]
    return model_of(nodes, [x], [y], [weight("w", [4])])


def export_helper_models(out_dir):
    save(tiny_mlp(), out_dir, "tiny_mlp.onnx")
    save(ops_cnn(), out_dir, "ops_cnn.onnx")
    save(upsample_opset9(), out_dir, "upsample_opset9.onnx")
    save(unsupported_op(), out_dir, "unsupported_lstm.onnx")
    save(custom_op(), out_dir, "custom_op.onnx")
    save(conv_zero_stride(), out_dir, "conv_zero_stride.onnx")
    save(shape_gather_out_of_range(), out_dir, "shape_gather_out_of_range.onnx")
    save(convtranspose_rank1_weight(), out_dir, "convtranspose_rank1_weight.onnx")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "tests", "onnx",
                                                                   "data")
    os.makedirs(out_dir, exist_ok=True)
    export_helper_models(out_dir)
    export_torch_models(out_dir)


if __name__ == "__main__":
    main()
