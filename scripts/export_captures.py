"""Exports three PyTorch training steps, captured by remat, as graph files for the CLI:
a small ViT (scaled dot-product attention), a U-Net with batch norm, transposed convolution and
bilinear upsampling, and a GRU model with torch.where and dropout. They are the "captures" of
docs/BENCHMARKS.md ("Solvers on Checkmate's MILP: proofs and time") and of the CLI tests.

Usage: .venv/bin/python scripts/export_captures.py OUT_FOLDER
"""

from __future__ import annotations

import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))

import remat.torch  # noqa: E402


class Attention(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).reshape(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class VitBlock(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, heads)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Vit(nn.Module):
    def __init__(self, image: int = 32, patch: int = 4, dim: int = 128, depth: int = 6,
                 heads: int = 4, classes: int = 10):
        super().__init__()
        self.embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.position = nn.Parameter(torch.zeros(1, (image // patch) ** 2, dim))
        self.blocks = nn.Sequential(*[VitBlock(dim, heads) for _ in range(depth)])
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.embed(x).flatten(2).transpose(1, 2) + self.position
        return self.head(self.norm(self.blocks(x)).mean(dim=1))


def conv_block(cin: int, cout: int) -> nn.Module:
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(),
                         nn.Conv2d(cout, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU())


class UNet(nn.Module):
    def __init__(self, width: int = 16, classes: int = 3):
        super().__init__()
        self.down1 = conv_block(3, width)
        self.down2 = conv_block(width, 2 * width)
        self.down3 = conv_block(2 * width, 4 * width)
        self.up2 = nn.ConvTranspose2d(4 * width, 2 * width, 2, stride=2)
        self.dec2 = conv_block(4 * width, 2 * width)
        self.dec1 = conv_block(3 * width, width)
        self.head = nn.Conv2d(width, classes, 1)

    def forward(self, x):
        a = self.down1(x)
        b = self.down2(F.max_pool2d(a, 2))
        c = self.down3(F.max_pool2d(b, 2))
        d = self.dec2(torch.cat([self.up2(c), b], dim=1))
        e = F.interpolate(d, scale_factor=2, mode="bilinear", align_corners=False)
        return self.head(self.dec1(torch.cat([e, a], dim=1)))


class GruModel(nn.Module):
    def __init__(self, vocab: int = 64, dim: int = 64, classes: int = 8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.gru = nn.GRU(dim, dim, num_layers=2, batch_first=True)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens):
        y, _ = self.gru(self.embed(tokens))
        y = torch.where(y > 0, y, 0.1 * y)
        return self.head(self.drop(y).mean(dim=1))


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    torch.manual_seed(0)
    cross_entropy = nn.CrossEntropyLoss()
    captures = {
        "vit": (Vit(), cross_entropy, [torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,))]),
        "unet": (UNet(), lambda y, t: F.mse_loss(y, t),
                 [torch.randn(4, 3, 64, 64), torch.randn(4, 3, 64, 64)]),
        "gru": (GruModel(), cross_entropy,
                [torch.randint(0, 64, (8, 10)), torch.randint(0, 8, (8,))]),
    }
    for name, (model, loss_fn, inputs) in captures.items():
        path = os.path.join(out, f"{name}.json")
        graph = remat.torch.export_graph(model, loss_fn, inputs, path, unknown_ops="zero-cost",
                                         name=f"{name} capture")
        print(f"{path}: {graph.size} nodes")


if __name__ == "__main__":
    main()
