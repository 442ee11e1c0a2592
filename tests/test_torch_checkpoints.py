"""Checkpoints cross between PyTorch and minitensor: torch.save -> minitensor.load and
minitensor.save(format="torch") -> torch.load(weights_only=True), for state dicts, optimizer states and
a model trained a step in one library and run in the other."""
from __future__ import annotations

import collections
import pickle

import numpy as np
import pytest

import minitensor as mt
from minitensor.serialization import load, save

pytestmark = pytest.mark.torch


def build(nn):
    """The same network, written the PyTorch way, in either library (``nn`` is torch.nn or minitensor.nn)."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3, padding=1, bias=False)  # as ResNets: BatchNorm follows
            self.bn = nn.BatchNorm2d(4)
            self.fc = nn.Linear(4 * 6 * 6, 3)

        def forward(self, x):
            return self.fc(self.bn(self.conv(x)).relu().flatten(1))
    return Net()


def assert_same_from_here(a, a_opt, x_a, b, b_opt, x_b):
    """The two models give the same outputs (eval mode), and the same weights after one more training step."""
    for model in (a, b):
        model.eval()
    np.testing.assert_allclose(b(x_b).detach().numpy(), a(x_a).detach().numpy(), rtol=1e-5, atol=1e-6)
    for model, inputs, optimizer in ((a, x_a, a_opt), (b, x_b, b_opt)):
        model.train()
        optimizer.zero_grad()
        model(inputs).square().mean().backward()
        optimizer.step()
    for key, t in a.state_dict().items():
        np.testing.assert_allclose(b.state_dict()[key].detach().numpy(), t.detach().numpy(), rtol=1e-4,
                                   atol=1e-6, err_msg=key)


def test_torch_save_loads_into_minitensor(tmp_path):
    torch = pytest.importorskip("torch")
    a = torch.arange(12.0).reshape(3, 4)
    sd = collections.OrderedDict([
        ("w", a), ("w_t", a.t()), ("col", a[:, 1]), ("p", torch.nn.Parameter(torch.ones(2))),
        ("half", torch.tensor([0.5, -3.0], dtype=torch.float16)),
        ("bf16", torch.tensor([1.5, -2.25, 3e38], dtype=torch.bfloat16)), ("n", torch.tensor(7)),
        ("i8", torch.tensor([-3, 4], dtype=torch.int8)), ("mask", torch.tensor([True, False])),
        ("d", torch.zeros(2, 0, dtype=torch.float64)), ("expanded", torch.ones(3).expand(2, 3))])
    torch.save({"model": sd, "epoch": 3, "ids": {1}, "tag": b"x", "dtype": torch.int32,
                "dev": torch.device("cpu"), "size": torch.Size([2, 3])}, tmp_path / "sd.pth")
    back = load(tmp_path / "sd.pth")
    for key, t in sd.items():
        got = back["model"][key]
        expected = t.detach()
        assert str(got.dtype).split(".")[1] == str(expected.dtype).split(".")[1], key
        if t.dtype == torch.bfloat16:  # NumPy (and torch's .numpy()) compare bfloat16 through float32
            got, expected = got.float(), expected.float()
        np.testing.assert_array_equal(got.detach().numpy(), expected.numpy(), err_msg=key)
    assert isinstance(back["model"]["p"], mt.nn.Parameter) and back["model"]["p"].requires_grad
    assert np.shares_memory(back["model"]["w"].numpy(), back["model"]["col"].numpy())
    assert back["epoch"] == 3 and back["ids"] == {1} and back["tag"] == b"x" and back["dtype"] is mt.int32
    assert back["dev"] == mt.device("cpu") and back["size"] == (2, 3)


def test_minitensor_save_loads_in_torch_with_weights_only(tmp_path):
    torch = pytest.importorskip("torch")
    w = mt.arange(12.0).reshape(3, 4)
    sd = collections.OrderedDict([
        ("w", w), ("w_t", w.T), ("row", w[1]), ("p", mt.nn.Parameter(mt.ones(2))), ("n", mt.tensor(7)),
        ("half", mt.tensor([0.5, -3.0], dtype=mt.float16)), ("u8", mt.tensor([1, 255], dtype=mt.uint8)),
        ("mask", mt.tensor([True, False])), ("e", mt.zeros(0, 2)), ("expanded", mt.ones(3).expand(2, 3))])
    path = tmp_path / "sd.pt"
    save({"model": sd, "lr": 0.1, "ids": {2}, "dtype": mt.float16, "dev": mt.device("cpu")}, path,
         format="torch")
    for mmap in (False, True):  # mmap needs the storages aligned
        back = torch.load(path, weights_only=True, mmap=mmap)
        for key, t in sd.items():
            got = back["model"][key]
            assert str(got.dtype) == f"torch.{t.dtype.name}" and tuple(got.shape) == t.shape, key
            np.testing.assert_array_equal(got.detach().numpy(), t.detach().numpy(), err_msg=key)
        model = back["model"]
        assert isinstance(model["p"], torch.nn.Parameter) and model["p"].requires_grad
        assert model["w_t"].untyped_storage().data_ptr() == model["w"].untyped_storage().data_ptr()
        assert back["lr"] == 0.1 and back["ids"] == {2} and back["dtype"] is torch.float16
        assert back["dev"] == torch.device("cpu")


@pytest.mark.parametrize("direction", ["torch to minitensor", "minitensor to torch"])
def test_a_model_trained_a_step_in_one_library_continues_in_the_other(tmp_path, direction):
    """The same program in both: train a step, save model and optimizer, load them in the other library;
    outputs and the next step agree."""
    torch = pytest.importorskip("torch")
    first, second = (torch, mt) if direction == "torch to minitensor" else (mt, torch)
    first.manual_seed(0)
    model = build(first.nn)
    opt = first.optim.Adam(model.parameters(), lr=0.01)
    x = first.randn(5, 1, 6, 6)
    model(x).square().mean().backward()
    opt.step()
    path, checkpoint = tmp_path / "net.pth", {"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 1}
    if first is torch:
        torch.save(checkpoint, path)
        back = mt.load(path)
    else:
        mt.save(checkpoint, path, format="torch")
        back = torch.load(path, weights_only=True)
    other = build(second.nn)
    other_opt = second.optim.Adam(other.parameters(), lr=0.01)
    other.load_state_dict(back["model"])
    other_opt.load_state_dict(back["optimizer"])
    assert back["epoch"] == 1
    assert_same_from_here(model, opt, x, other, other_opt, second.tensor(x.numpy()))


def test_pytorch_whole_models_and_legacy_files_are_clear_errors(tmp_path):
    torch = pytest.importorskip("torch")
    torch.save(torch.nn.Linear(2, 3), tmp_path / "whole.pt")
    for weights_only in (True, False):  # not "use weights_only=False": that would not help
        with pytest.raises(pickle.UnpicklingError, match="torch.nn.modules.linear.Linear, which minitensor cannot"):
            load(tmp_path / "whole.pt", weights_only=weights_only)
    torch.save({"w": torch.ones(2)}, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="legacy"):
        load(tmp_path / "legacy.pt")
