"""Small networks written for the tests: an MLP, a ResNet-18-style CNN with batch norm, a
MobileNetV2-style network and a GPT with dropout and layer norm. Each builder is seeded and
returns (model, loss_fn, inputs)."""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F


def mlp(batch: int = 256, width: int = 64, depth: int = 8, seed: int = 0):
    torch.manual_seed(seed)
    layers: list[nn.Module] = [nn.Linear(32, width), nn.ReLU()]
    for _ in range(depth - 1):
        layers += [nn.Linear(width, width), nn.ReLU()]
    layers.append(nn.Linear(width, 10))
    model = nn.Sequential(*layers)
    return model, F.cross_entropy, (torch.randn(batch, 32), torch.randint(0, 10, (batch,)))


class BasicBlock(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.shortcut = nn.Sequential()
        if stride != 1 or cin != cout:
            self.shortcut = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False),
                                          nn.BatchNorm2d(cout))

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + self.shortcut(x))


class ResNet(nn.Module):
    """ResNet-18's shape: a stem, four stages of two basic blocks, pooling and a classifier.
    ``blocks`` per stage and ``width`` shrink it for fast tests."""

    def __init__(self, blocks=(2, 2, 2, 2), width: int = 64, classes: int = 10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, width, 3, 1, 1, bias=False), nn.BatchNorm2d(width),
                                  nn.ReLU(inplace=True))
        stages, cin = [], width
        for i, count in enumerate(blocks):
            cout = width * 2 ** i
            for j in range(count):
                stages.append(BasicBlock(cin, cout, 2 if (j == 0 and i > 0) else 1))
                cin = cout
        self.stages = nn.Sequential(*stages)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x):
        x = self.stages(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def resnet(batch: int = 8, image: int = 32, blocks=(1, 1), width: int = 8, seed: int = 0):
    torch.manual_seed(seed)
    model = ResNet(blocks, width)
    return model, F.cross_entropy, (torch.randn(batch, 3, image, image),
                                    torch.randint(0, 10, (batch,)))


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, stride: int, expand: int):
        super().__init__()
        hidden = cin * expand
        self.use_residual = stride == 1 and cin == cout
        self.block = nn.Sequential(
            nn.Conv2d(cin, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU6(inplace=True),
            nn.Conv2d(hidden, hidden, 3, stride, 1, groups=hidden, bias=False),
            nn.BatchNorm2d(hidden), nn.ReLU6(inplace=True),
            nn.Conv2d(hidden, cout, 1, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        out = self.block(x)
        return x + out if self.use_residual else out


def mobilenet(batch: int = 4, image: int = 16, seed: int = 0):
    """MobileNetV2's building blocks: a stem, two inverted residuals with depthwise
    convolutions (the first with a residual connection), a 1x1 head, pooling and a
    classifier."""
    torch.manual_seed(seed)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, 2, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU6(inplace=True),
        InvertedResidual(8, 8, 1, 2), InvertedResidual(8, 12, 2, 4),
        nn.Conv2d(12, 32, 1, bias=False), nn.BatchNorm2d(32), nn.ReLU6(inplace=True),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(32, 10))
    return model, F.cross_entropy, (torch.randn(batch, 3, image, image),
                                    torch.randint(0, 10, (batch,)))


class Block(nn.Module):
    def __init__(self, width: int, heads: int, dropout: float):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln2 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(),
                                 nn.Linear(4 * width, width))
        self.drop = nn.Dropout(dropout)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        shape = (b, t, self.heads, c // self.heads)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.heads)
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        attention = self.drop(scores.masked_fill(~mask, float("-inf")).softmax(dim=-1))
        y = (attention @ v).transpose(1, 2).reshape(b, t, c)
        x = x + self.drop(self.proj(y))
        return x + self.drop(self.mlp(self.ln2(x)))


class GPT(nn.Module):
    def __init__(self, vocab: int = 64, width: int = 32, heads: int = 4, layers: int = 2,
                 context: int = 16, dropout: float = 0.1):
        super().__init__()
        self.token = nn.Embedding(vocab, width)
        self.position = nn.Parameter(torch.randn(context, width) * 0.02)
        self.blocks = nn.Sequential(*[Block(width, heads, dropout) for _ in range(layers)])
        self.ln = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.drop = nn.Dropout(dropout)

    def forward(self, tokens):
        x = self.drop(self.token(tokens) + self.position[: tokens.shape[1]])
        return self.head(self.ln(self.blocks(x)))


def gpt_loss(logits, targets):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def gpt(batch: int = 2, context: int = 16, layers: int = 1, seed: int = 0):
    torch.manual_seed(seed)
    model = GPT(layers=layers, context=context)
    tokens = torch.randint(0, 64, (batch, context + 1))
    return model, gpt_loss, (tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous())


class UNet(nn.Module):
    """A two-level U-Net: batch norm, max pooling, a transposed convolution and bilinear
    upsampling (which tracing would decompose unless remat keeps it whole)."""

    def __init__(self, width: int = 8):
        super().__init__()

        def block(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout),
                                 nn.ReLU())

        self.down1, self.down2 = block(3, width), block(width, 2 * width)
        self.bottom = block(2 * width, 4 * width)
        self.up = nn.ConvTranspose2d(4 * width, 2 * width, 2, stride=2)
        self.dec2, self.dec1 = block(4 * width, 2 * width), block(3 * width, width)
        self.head = nn.Conv2d(width, 3, 1)

    def forward(self, x):
        a = self.down1(x)
        b = self.down2(F.max_pool2d(a, 2))
        c = self.bottom(F.max_pool2d(b, 2))
        d = self.dec2(torch.cat([self.up(c), b], dim=1))
        e = F.interpolate(d, scale_factor=2, mode="bilinear", align_corners=False)
        return self.head(self.dec1(torch.cat([e, a], dim=1)))


def unet(batch: int = 2, image: int = 32, seed: int = 0):
    torch.manual_seed(seed)
    return UNet(), F.mse_loss, (torch.randn(batch, 3, image, image),
                                torch.randn(batch, 3, image, image))


NETWORKS = {"mlp": mlp, "resnet": resnet, "mobilenet": mobilenet, "gpt": gpt}
