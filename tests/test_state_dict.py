"""state_dict keys (PyTorch's naming, written by hand), values, round trips, and load_state_dict's strict
checks and in-place copies."""
from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn


def npa(t):
    return np.array(t.detach().numpy(), dtype=np.float64)


class Net(nn.Module):
    """A nested model touching every registry kind."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                                      nn.MaxPool2d(2))
        self.blocks = nn.ModuleList([nn.Linear(16, 16), nn.LayerNorm(16)])
        self.heads = nn.ModuleDict({"cls": nn.Linear(16, 3, bias=False), "aux": nn.Identity()})
        self.embed = nn.Embedding(5, 2)
        self.rnn = nn.GRU(2, 3, num_layers=2)
        self.temperature = nn.Parameter(mt.ones(1))
        self.register_buffer("step", mt.zeros((), dtype=mt.int64))
        self.register_buffer("cache", mt.zeros(3), persistent=False)

    def forward(self, x):
        h = self.features(x).flatten(1)
        for block in self.blocks:
            h = block(h)
        return self.heads["cls"](h) * self.temperature


NET_KEYS = [
    "temperature", "step",
    "features.0.weight", "features.0.bias",
    "features.1.weight", "features.1.bias", "features.1.running_mean", "features.1.running_var",
    "features.1.num_batches_tracked",
    "blocks.0.weight", "blocks.0.bias", "blocks.1.weight", "blocks.1.bias",
    "heads.cls.weight",
    "embed.weight",
    "rnn.weight_ih_l0", "rnn.weight_hh_l0", "rnn.bias_ih_l0", "rnn.bias_hh_l0",
    "rnn.weight_ih_l1", "rnn.weight_hh_l1", "rnn.bias_ih_l1", "rnn.bias_hh_l1",
]


def test_keys_follow_pytorch_naming():
    net = Net()
    sd = net.state_dict()
    assert isinstance(sd, OrderedDict)
    assert list(sd) == NET_KEYS
    assert "cache" not in sd  # non-persistent buffer
    assert [n for n, _ in net.named_buffers()][:2] == ["step", "cache"]  # ...though still a buffer
    assert sd["features.1.num_batches_tracked"].dtype == mt.int64
    assert tuple(sd["rnn.weight_ih_l1"].shape) == (9, 3)


def test_sequential_and_vgg_like_keys():
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(), nn.Linear(8, 2))
    assert list(model.state_dict()) == ["0.weight", "0.bias", "3.weight", "3.bias"]
    vgg = nn.Module()
    vgg.features = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU())
    vgg.classifier = nn.Sequential(nn.Flatten(), nn.Linear(8, 2))
    assert list(vgg.state_dict()) == [
        "features.0.weight", "features.0.bias", "features.1.weight", "features.1.bias",
        "features.1.running_mean", "features.1.running_var", "features.1.num_batches_tracked",
        "classifier.1.weight", "classifier.1.bias"]
    lstm = nn.LSTM(2, 3, bidirectional=True, bias=False)
    assert list(lstm.state_dict()) == ["weight_ih_l0", "weight_hh_l0", "weight_ih_l0_reverse",
                                       "weight_hh_l0_reverse"]


def test_values_are_detached_and_share_memory():
    net = Net()
    sd = net.state_dict()
    w = sd["features.0.weight"]
    assert not isinstance(w, nn.Parameter) and not w.requires_grad and w.grad_fn is None
    assert np.shares_memory(w.array, net.features[0].weight.array)  # as PyTorch: no copy
    kept = net.state_dict(keep_vars=True)
    assert kept["features.0.weight"] is net.features[0].weight
    prefixed = net.blocks.state_dict(prefix="enc.")
    assert list(prefixed) == ["enc.0.weight", "enc.0.bias", "enc.1.weight", "enc.1.bias"]


def test_round_trip_reproduces_outputs():
    a, b = Net(), Net()
    x = mt.randn(2, 1, 4, 4)
    a.train()
    a(x)  # moves BatchNorm statistics away from their defaults
    a.eval()
    b.eval()
    assert not np.allclose(npa(a(x)), npa(b(x)))
    result = b.load_state_dict(a.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    np.testing.assert_array_equal(npa(a(x)), npa(b(x)))
    assert int(b.features[1].num_batches_tracked) == 1


def test_load_copies_in_place_keeping_identity():
    net = Net()
    p = net.blocks[0].weight
    array = p.array
    buf = net.features[1].running_var
    new = {k: v.clone() + 1 if v.is_floating_point() else v.clone() for k, v in Net().state_dict().items()}
    net.load_state_dict(new)
    assert net.blocks[0].weight is p and p.array is array
    assert net.features[1].running_var is buf
    np.testing.assert_array_equal(npa(p), npa(new["blocks.0.weight"]))
    assert p.requires_grad and p.grad_fn is None


def test_load_casts_dtype_into_the_existing_parameters():
    m = nn.Linear(2, 2)
    src = nn.Linear(2, 2).double()
    m.load_state_dict(src.state_dict())
    assert m.weight.dtype == mt.float32
    np.testing.assert_allclose(npa(m.weight), npa(src.weight), rtol=1e-6)


def test_strict_load_names_every_missing_and_unexpected_key():
    net = Net()
    sd = net.state_dict()
    del sd["features.0.bias"]
    del sd["rnn.weight_hh_l1"]
    sd["features.9.weight"] = mt.zeros(1)
    sd["extra"] = mt.zeros(1)
    sd["heads.cls.bias"] = mt.zeros(3)
    with pytest.raises(RuntimeError) as err:
        net.load_state_dict(sd)
    msg = str(err.value)
    assert msg.startswith("Error(s) in loading state_dict for Net:")
    assert 'Missing key(s) in state_dict: "features.0.bias", "rnn.weight_hh_l1".' in msg
    # found module by module, root first (PyTorch's order)
    assert 'Unexpected key(s) in state_dict: "extra", "features.9.weight", "heads.cls.bias".' in msg


def test_non_strict_load_reports_keys_and_loads_the_rest():
    net = Net()
    sd = Net().state_dict()
    del sd["embed.weight"]
    sd["bogus"] = mt.zeros(2)
    result = net.load_state_dict(sd, strict=False)
    assert result.missing_keys == ["embed.weight"] and result.unexpected_keys == ["bogus"]
    assert result == (["embed.weight"], ["bogus"])  # a NamedTuple, as PyTorch
    np.testing.assert_array_equal(npa(net.blocks[0].weight), npa(sd["blocks.0.weight"]))


def test_shape_mismatch_is_an_error_even_when_not_strict():
    net = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    sd = nn.Sequential(nn.Linear(3, 5), nn.Linear(5, 2)).state_dict()
    before = npa(net[1].bias)
    for strict in (True, False):
        with pytest.raises(RuntimeError) as err:
            net.load_state_dict(sd, strict=strict)
        msg = str(err.value)
        assert ("size mismatch for 0.weight: copying a param with shape minitensor.Size([5, 3]) from checkpoint, "
                "the shape in current model is minitensor.Size([4, 3]).") in msg  # PyTorch's, its torch.Size
        assert "size mismatch for 0.bias" in msg and "size mismatch for 1.weight" in msg
        assert "1.bias" not in msg
    # every problem is reported at once; the matching entries were still copied, as PyTorch does
    np.testing.assert_array_equal(npa(net[1].bias), npa(sd["1.bias"]))
    assert not np.array_equal(before, npa(net[1].bias))


def test_non_tensor_value_is_reported():
    m = nn.Linear(2, 1)
    sd = m.state_dict()
    sd["bias"] = [0.0]
    with pytest.raises(RuntimeError, match='parameter named "bias", expected Tensor'):
        m.load_state_dict(sd)
    with pytest.raises(TypeError, match="dict-like"):
        m.load_state_dict([("bias", mt.zeros(1))])


def test_none_entries_and_untracked_statistics_have_no_keys():
    assert list(nn.Linear(2, 2, bias=False).state_dict()) == ["weight"]
    bn = nn.BatchNorm1d(3, affine=False, track_running_stats=False)
    assert list(bn.state_dict()) == []
    assert list(nn.LayerNorm(3, elementwise_affine=False).state_dict()) == []
    bn2 = nn.BatchNorm1d(3, affine=False)
    assert list(bn2.state_dict()) == ["running_mean", "running_var", "num_batches_tracked"]


def test_loss_weight_buffers_are_saved_and_loaded():
    loss = nn.CrossEntropyLoss(weight=mt.tensor([1.0, 2.0]))
    assert list(loss.state_dict()) == ["weight"]
    other = nn.CrossEntropyLoss(weight=mt.tensor([0.0, 0.0]))
    other.load_state_dict(loss.state_dict())
    np.testing.assert_array_equal(npa(other.weight), [1.0, 2.0])


def test_data_parallel_keys_and_loading_across_the_wrapper():
    inner = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    dp = nn.DataParallel(inner)
    assert list(dp.state_dict()) == ["module.0.weight", "module.0.bias", "module.1.weight", "module.1.bias",
                                     "module.1.running_mean", "module.1.running_var",
                                     "module.1.num_batches_tracked"]
    plain = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    with pytest.raises(RuntimeError, match='Missing key.*"0.weight".*\n.*Unexpected key.*"module.0.weight"'):
        plain.load_state_dict(dp.state_dict())
    plain.load_state_dict({k[len("module."):]: v for k, v in dp.state_dict().items()})
    np.testing.assert_array_equal(npa(plain[0].weight), npa(inner[0].weight))
    nn.DataParallel(plain).load_state_dict(dp.state_dict())


def test_deepcopy_and_pickle_give_independent_equal_models():
    net = Net()
    for clone in (copy.deepcopy(net), pickle.loads(pickle.dumps(net))):
        assert list(clone.state_dict()) == NET_KEYS
        assert isinstance(clone.blocks[0].weight, nn.Parameter)
        for (k, v), w in zip(net.state_dict().items(), clone.state_dict().values()):
            np.testing.assert_array_equal(npa(v), npa(w), err_msg=k)
            assert not np.shares_memory(v.array, w.array), k


def test_assign_makes_the_checkpoints_tensors_the_modules():
    """``load_state_dict(assign=True)`` (PyTorch 2.1+): no copy; a plain tensor becomes a Parameter with the
    module's ``requires_grad``, a Parameter keeps its identity, a buffer is the tensor itself (dtype included)."""
    m = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    m[0].bias.requires_grad_(False)
    sd = {k: v.clone() + 1 for k, v in m.state_dict().items()}
    sd["0.weight"] = nn.Parameter(sd["0.weight"], requires_grad=False)
    sd["1.running_var"] = sd["1.running_var"].double()
    old = m[0].weight
    assert repr(m.load_state_dict(sd, assign=True)) == "<All keys matched successfully>"
    assert m[0].weight is sd["0.weight"] and m[0].weight is not old and m[0].weight.requires_grad
    assert type(m[0].bias) is nn.Parameter and not m[0].bias.requires_grad
    assert m[0].bias.data_ptr() == sd["0.bias"].data_ptr()
    assert m[1].running_mean is sd["1.running_mean"] and m[1].running_var.dtype == mt.float64
    assert [n for n, _ in m.named_parameters()] == ["0.weight", "0.bias", "1.weight", "1.bias"]
    assert [n for n, _ in m.named_buffers()] == ["1.running_mean", "1.running_var", "1.num_batches_tracked"]
    with pytest.raises(RuntimeError, match=r"size mismatch for 0.weight"):
        m.load_state_dict({"0.weight": mt.zeros(4, 4)}, strict=False, assign=True)


def test_load_pre_hooks_see_the_assign_flag_in_local_metadata():
    m = nn.Linear(2, 1)
    seen = []
    m.register_load_state_dict_pre_hook(lambda mod, sd, prefix, metadata, *rest: seen.append(dict(metadata)))
    m.load_state_dict(m.state_dict(), assign=True)
    m.load_state_dict(m.state_dict())
    assert seen == [{"assign_to_params_buffers": True}, {}]


@pytest.mark.torch
def test_assign_matches_pytorch():
    torch = pytest.importorskip("torch")

    def run(lib):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        sd = {k: lib.tensor(np.arange(v.numel(), dtype=np.float32).reshape(tuple(v.shape)) / 4).to(v.dtype)
              for k, v in m.state_dict().items()}
        opt = lib.optim.SGD(m.parameters(), lr=0.1)
        m.load_state_dict(sd, assign=True)
        m(lib.ones(4, 2)).sum().backward()
        opt.step()  # the optimizer holds the replaced Parameters: the module's are not stepped
        return [(type(p).__name__, p.requires_grad, p.grad is not None, p.detach().numpy().round(6).tolist())
                for p in m.parameters()]

    assert run(mt) == run(torch)


def test_a_subclass_overriding_load_from_state_dict_with_pytorchs_signature():
    """PyTorch's ``_load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
    unexpected_keys, error_msgs)``, as modules that rename old checkpoints' keys override it."""

    class Renamed(nn.Linear):
        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                                  error_msgs):
            if prefix + "w" in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(prefix + "w")
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                          unexpected_keys, error_msgs)

    m = nn.Sequential(Renamed(2, 1))
    m.load_state_dict({"0.w": mt.full((1, 2), 3.0), "0.bias": mt.zeros(1)})
    np.testing.assert_array_equal(npa(m[0].weight), np.full((1, 2), 3.0, np.float32))
