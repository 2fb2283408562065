"""The machine's balance: how many FLOPs a matrix product does in the time a pointwise kernel
moves one byte (``flops_per_byte="machine"``).

remat charges an operation that is not a contraction the bytes it moves times
``flops_per_byte`` (costs.py): 1 by default, whatever the machine. A GPU does hundreds of FLOPs
per byte of memory traffic and a CPU core a few, so the same plan recomputes too much
pointwise work on one and too little on the other. The balance is measured once per machine
(device name, torch version, threads), in about a second: the least time of a float32 matrix
product of ``n x n`` matrices (``2 n^3`` FLOPs) over the least time of ``y = x * 2`` on a
tensor larger than the caches (reads and writes ``2 x`` its bytes). It is cached in
``$REMAT_CACHE_DIR/balance.json`` (default ``~/.cache/remat``), so that every later plan on the
machine uses the same costs; delete the file to measure again.
"""

from __future__ import annotations

import json
import os
import platform
import tempfile
import time
from typing import Callable

import torch

__all__ = ["machine_balance", "cache_path"]

MACHINE = "machine"


def cache_path() -> str:
    root = os.environ.get("REMAT_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache",
                                                             "remat")
    return os.path.join(root, "balance.json")


def _key(device: torch.device) -> str:
    if device.type == "cuda":
        name = torch.cuda.get_device_name(device)
    else:
        name = platform.processor() or platform.machine()
    return f"{device.type}|{name}|torch {torch.__version__}|{torch.get_num_threads()} threads"


def _least_seconds(run: Callable[[], object], device: torch.device, repeats: int = 7) -> float:
    def sync():
        if device.type == "cuda":
            torch.cuda.synchronize(device)

    run()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        sync()
        times.append(time.perf_counter() - start)
    return min(times)  # the machine's speed: other work on it only slows a run down


def measure_balance(device: torch.device) -> float:
    """FLOPs per byte on ``device``, measured now (see the module docstring)."""
    n = 4096 if device.type == "cuda" else 1024
    a = torch.randn(n, n, device=device)
    b = torch.randn(n, n, device=device)
    flops_per_s = 2 * n ** 3 / _least_seconds(lambda: a @ b, device)
    numel = (64 if device.type == "cuda" else 8) * 2 ** 20  # 256 MiB or 32 MiB of floats
    x = torch.ones(numel, device=device)
    bytes_per_s = 2 * numel * 4 / _least_seconds(lambda: x * 2, device)
    return flops_per_s / bytes_per_s


def machine_balance(device: torch.device | str = "cpu") -> float:
    """FLOPs per byte moved on ``device``: from the cache, or measured once and cached."""
    device = torch.device(device)
    path = cache_path()
    key = _key(device)
    cached: dict = {}
    try:
        with open(path) as f:
            cached = json.load(f)
        if isinstance(cached, dict) and isinstance(cached.get(key), (int, float)) \
                and cached[key] > 0:
            return float(cached[key])
    except (OSError, ValueError):
        cached = {}
    balance = measure_balance(device)
    cached = cached if isinstance(cached, dict) else {}
    cached[key] = balance
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        # Written whole or not at all: a second process reads the old file or the new one.
        with tempfile.NamedTemporaryFile("w", dir=os.path.dirname(path), delete=False,
                                         suffix=".tmp") as f:
            json.dump(cached, f, indent=1, sort_keys=True)
        os.replace(f.name, path)
    except OSError:
        pass  # a read-only home: the balance is measured again next time
    return balance
