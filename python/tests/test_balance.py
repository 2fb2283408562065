"""The machine's balance and its cache (remat/torch/balance.py): an entry that is no balance, a
file that is not JSON, a symlink, a folder others may write are never used; the balance is
measured again and a warning names the cache file and what was wrong."""

from __future__ import annotations

import copy
import json

import pytest
import torch

import remat
import remat.torch
from remat.torch import balance

KEY = balance._key(torch.device("cpu"))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The cache's folder, empty, remat's own (pytest makes it 0700)."""
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("REMAT_CACHE_DIR", str(folder))
    return folder


@pytest.fixture
def measured(monkeypatch):
    """Counts measurements, each 7 FLOP/byte (tests of the cache's logic only)."""
    calls = []
    monkeypatch.setattr(balance, "measure_balance", lambda device: calls.append(device) or 7.0)
    return calls


@pytest.mark.parametrize("text", ['{"%s": Infinity}', '{"%s": 1e308}'])
def test_an_entry_that_is_no_balance_is_measured_again_and_replaced(cache, text):
    # The real measurement: about a second on a CPU.
    path = cache / "balance.json"
    path.write_text(text % KEY)
    with pytest.warns(UserWarning, match=rf"{path}: its entry '.*cpu.*' holds (inf|1e\+308), "
                                         r"not a balance in \[0.001, 1e\+06\] FLOP/byte"):
        value = balance.machine_balance("cpu")
    assert balance.BALANCE_RANGE[0] <= value <= balance.BALANCE_RANGE[1]
    assert json.loads(path.read_text()) == {KEY: value}  # replaced: the next run reads it


@pytest.mark.parametrize("value", [-1, 0, "7", True, None, 1e-9])
def test_entries_outside_the_range_or_not_numbers_are_not_used(cache, measured, value):
    (cache / "balance.json").write_text(json.dumps({KEY: value, "other": 3.0}))
    with pytest.warns(UserWarning, match="not a balance"):
        assert balance.machine_balance("cpu") == 7.0
    assert json.loads((cache / "balance.json").read_text()) == {KEY: 7.0, "other": 3.0}


def test_a_file_that_is_not_json_is_written_again(cache, measured):
    path = cache / "balance.json"
    path.write_bytes(b"\xff{not json")
    with pytest.warns(UserWarning, match=rf"{path} is not JSON"):
        assert balance.machine_balance("cpu") == 7.0
    assert json.loads(path.read_text()) == {KEY: 7.0}
    assert balance.machine_balance("cpu") == 7.0 and len(measured) == 1  # from the cache now


def test_a_symlink_at_the_files_path_is_not_followed_nor_written_through(cache, tmp_path,
                                                                         measured):
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps({KEY: 5.0}))
    (cache / "balance.json").symlink_to(target)
    with pytest.warns(UserWarning, match="is a symlink, which remat does not follow"):
        assert balance.machine_balance("cpu") == 7.0  # not the link's 5.0
    assert json.loads(target.read_text()) == {KEY: 5.0}  # the link's target is untouched
    assert (cache / "balance.json").is_symlink()


def test_a_folder_that_is_a_symlink_or_writable_by_others_is_not_used(tmp_path, monkeypatch,
                                                                       measured):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (real / "balance.json").write_text(json.dumps({KEY: 5.0}))
    monkeypatch.setenv("REMAT_CACHE_DIR", str(tmp_path / "link"))
    (tmp_path / "link").symlink_to(real)
    with pytest.warns(UserWarning, match=r"its folder .*link is a symlink"):
        assert balance.machine_balance("cpu") == 7.0
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (shared / "balance.json").write_text(json.dumps({KEY: 5.0}))
    monkeypatch.setenv("REMAT_CACHE_DIR", str(shared))
    with pytest.warns(UserWarning, match=r"its folder .*shared is writable by other users"):
        assert balance.machine_balance("cpu") == 7.0
    assert json.loads((shared / "balance.json").read_text()) == {KEY: 5.0}  # left alone
    assert len(measured) == 2


def test_a_missing_folder_is_made_for_the_user_alone(tmp_path, monkeypatch, measured):
    folder = tmp_path / "new" / "remat"
    monkeypatch.setenv("REMAT_CACHE_DIR", str(folder))
    assert balance.machine_balance("cpu") == 7.0
    assert folder.stat().st_mode & 0o077 == 0
    assert json.loads((folder / "balance.json").read_text()) == {KEY: 7.0}


def test_a_measurement_outside_the_range_is_not_cached(cache, monkeypatch):
    monkeypatch.setattr(balance, "measure_balance", lambda device: float("inf"))
    with pytest.warns(UserWarning, match=r"measured .* is inf FLOP/byte.*costs use 1e\+06"):
        assert balance.machine_balance("cpu") == balance.BALANCE_RANGE[1]
    assert not (cache / "balance.json").exists()


def test_a_broken_cache_plans_with_a_warning_not_an_input_error(cache, measured):
    # The case: an infinite balance was an InputError on a node's cost, on every run.
    (cache / "balance.json").write_text('{"%s": Infinity}' % KEY)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    backend = remat.torch.backend(budget="100%", compiler="aot_eager", flops_per_byte="machine",
                                  strategy="checkpoint-all")
    torch._dynamo.reset()
    with pytest.warns(UserWarning, match="balance.json: its entry"):
        torch.compile(copy.deepcopy(model), backend=backend, dynamic=False)(
            torch.ones(4, 8)).sum().backward()
    assert all(n.cost < float("inf") for n in backend.plans[0].graph.nodes)
    assert measured == [torch.device("cpu")]
