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

The cache is remat's own: its folder must belong to the user and be writable by no one else, a
symlink at the folder's or the file's path is not followed, and an entry is used only when it is
a plausible balance (``BALANCE_RANGE``). Otherwise the balance is measured again and a warning
names the file and what was wrong with it; a broken file or entry is then written again, a
folder or file that is not remat's to use is left alone.
"""

from __future__ import annotations

import errno
import json
import math
import os
import platform
import stat
import time
import warnings
from typing import Callable

import torch

__all__ = ["machine_balance", "cache_path", "BALANCE_RANGE"]

MACHINE = "machine"

# The balances remat accepts, in FLOP/byte, from the cache or from a measurement: a CPU core
# does about 1 to 30 FLOPs in the time it moves a byte, a GPU about 10 to 1000 (an H100's
# float32 products at 67 TFLOP/s over 3.35 TB/s: 20; its tensor cores several hundred). A
# value three orders of magnitude outside that is no machine's: a file someone edited, or a
# timing that measured nothing. (An infinite balance made every pointwise operation's cost
# infinite, and each later plan on the machine failed on it.)
BALANCE_RANGE = (1e-3, 1e6)

_FILE = "balance.json"
# os.open with dir_fd and O_NOFOLLOW: where they are missing (Windows), nothing is cached.
_SAFE_FILES = (hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY") and
               hasattr(os, "getuid") and os.open in os.supports_dir_fd)


def cache_path() -> str:
    root = os.environ.get("REMAT_CACHE_DIR") or os.path.join(os.path.expanduser("~"), ".cache",
                                                             "remat")
    return os.path.join(root, _FILE)


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


def plausible_balance(value: object) -> bool:
    """True when ``value`` is a number within BALANCE_RANGE."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and \
        math.isfinite(value) and BALANCE_RANGE[0] <= value <= BALANCE_RANGE[1]


class _NotUsable(Exception):
    """The cache's folder or file is not remat's to read or write; the text says why."""


def machine_balance(device: torch.device | str = "cpu") -> float:
    """FLOPs per byte moved on ``device``: from the cache, or measured and cached (see the
    module docstring); never an error for what the cache holds."""
    device = torch.device(device)
    path = cache_path()
    key = _key(device)
    if not _SAFE_FILES:
        return _measured(device, key)[0]
    try:
        folder = _open_folder(os.path.dirname(path))
    except _NotUsable as reason:
        _warn(f"remat: the balance cache {path} is not used: {reason}; the machine's balance "
              "is measured on every run")
        return _measured(device, key)[0]
    try:
        try:
            entries = _read_entries(folder, path)
        except _NotUsable as reason:
            _warn(f"remat: the balance cache {path} is not used: {reason}; the machine's "
                  "balance is measured again")
            return _measured(device, key)[0]
        if key in entries:
            if plausible_balance(entries[key]):
                return float(entries[key])
            _warn(f"remat: the balance cache {path}: its entry {key!r} holds {entries[key]!r}, "
                  f"not a balance in [{BALANCE_RANGE[0]:g}, {BALANCE_RANGE[1]:g}] FLOP/byte; "
                  "the machine's balance is measured again and the entry replaced")
        balance, plausible = _measured(device, key)
        if plausible:
            # Entries that are no balance are dropped (each is measured again when needed).
            kept = {k: v for k, v in entries.items() if plausible_balance(v)}
            _write_entries(folder, path, {**kept, key: balance})
        return balance
    finally:
        os.close(folder)


def _measured(device: torch.device, key: str) -> tuple[float, bool]:
    """The balance measured now, and whether it is within BALANCE_RANGE; one outside it is
    brought into the range, with a warning, and is not to be cached."""
    balance = measure_balance(device)
    if plausible_balance(balance):
        return balance, True
    low, high = BALANCE_RANGE
    used = low if math.isnan(balance) else min(max(balance, low), high)
    _warn(f"remat: the balance measured on {key} is {balance!r} FLOP/byte, outside "
          f"[{low:g}, {high:g}]: it is not cached, and costs use {used:g}")
    return used, False


def _warn(message: str) -> None:
    warnings.warn(message, UserWarning, stacklevel=3)


def _open_folder(folder: str) -> int:
    """A descriptor of the cache's folder, created (for this user alone) when missing; raises
    _NotUsable when it is a symlink, not a folder, another user's or writable by others."""
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as error:
        if os.path.islink(folder):  # ELOOP, or ENOTDIR where O_DIRECTORY is checked first
            raise _NotUsable(f"its folder {folder} is a symlink, which remat does not "
                             "follow") from None
        if error.errno in (errno.ENOTDIR, errno.EEXIST):
            raise _NotUsable(f"{folder} is not a folder") from None
        raise _NotUsable(f"its folder cannot be opened ({error.strerror})") from None
    reason = _not_private(os.fstat(fd))
    if reason:
        os.close(fd)
        raise _NotUsable(f"its folder {folder} {reason}")
    return fd


def _not_private(status: os.stat_result) -> str:
    """Why a file or folder with this status is not this user's alone, or ""."""
    if status.st_uid != os.getuid():
        return f"belongs to another user (uid {status.st_uid})"
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (f"is writable by other users (mode {stat.filemode(status.st_mode)}; "
                "chmod go-w makes it remat's alone)")
    return ""


def _read_entries(folder: int, path: str) -> dict:
    """The cache's entries: none when the file is missing or is not a JSON object (with a
    warning: it is then written again). Raises _NotUsable for a file that is not remat's to
    read or replace: a symlink, not a regular file, another user's."""
    try:
        fd = os.open(_FILE, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=folder)
    except FileNotFoundError:
        return {}
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _NotUsable("it is a symlink, which remat does not follow") from None
        raise _NotUsable(f"it cannot be read ({error.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        status = os.fstat(f.fileno())
        if not stat.S_ISREG(status.st_mode):
            raise _NotUsable("it is not a regular file")
        reason = _not_private(status)
        if reason:
            raise _NotUsable(f"it {reason}")
        text = f.read()
    try:
        entries = json.loads(text)
    except ValueError as error:  # not UTF-8, or not JSON
        _warn(f"remat: the balance cache {path} is not JSON ({error}); the machine's balance "
              "is measured again and the file written again")
        return {}
    if not isinstance(entries, dict):
        _warn(f"remat: the balance cache {path} holds a {type(entries).__name__}, not an "
              "object of balances; the machine's balance is measured again and the file "
              "written again")
        return {}
    return entries


def _write_entries(folder: int, path: str, entries: dict) -> None:
    """Replaces the cache file whole (a second process reads the old file or the new one),
    relative to the folder checked when it was opened (a symlink put at the file's path since
    it was read is replaced, not written through). A folder that cannot be written is left as
    it is."""
    temporary = f".{_FILE}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600,
                     dir_fd=folder)
        with os.fdopen(fd, "w") as f:
            json.dump(entries, f, indent=1, sort_keys=True, allow_nan=False)
        os.replace(temporary, _FILE, src_dir_fd=folder, dst_dir_fd=folder)
    except (OSError, ValueError) as error:
        try:
            os.unlink(temporary, dir_fd=folder)
        except OSError:
            pass
        _warn(f"remat: the balance cache {path} cannot be written ({error}); the machine's "
              "balance is measured again next time")
