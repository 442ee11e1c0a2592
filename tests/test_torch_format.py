"""PyTorch's checkpoint layout without PyTorch: files laid out as torch.save writes them (the pickle written
opcode by opcode here, as torch/serialization.py ``_save`` and ``persistent_id`` produce it) load into
minitensor tensors; ``save(..., format="torch")`` writes that layout; weights_only refuses every global it
does not know, and hostile pickles run nothing."""
from __future__ import annotations

import collections
import io
import os
import pickle
import pickletools
import struct
import zipfile

import numpy as np
import pytest

import minitensor as mt
from minitensor import serialization
from minitensor.serialization import load, save


# ------------------------------------------------------------------ a torch.save file written by hand
def glob(module: str, name: str) -> bytes:
    return b"c" + f"{module}\n{name}\n".encode()


def text(s: str) -> bytes:
    return b"X" + struct.pack("<I", len(s)) + s.encode()


def ints(values) -> bytes:
    return b"(" + b"".join(b"J" + struct.pack("<i", v) for v in values) + b"t"


def tensor(storage: str, key: str, numel: int, offset: int, size, stride, requires_grad=False) -> bytes:
    """``_rebuild_tensor_v2(persistent ('storage', torch.<storage>, key, 'cpu', numel), offset, size, stride,
    requires_grad, OrderedDict())`` as torch.save's pickle spells it."""
    pid = b"(" + text("storage") + glob("torch", storage) + text(key) + text("cpu") + ints([numel])[1:-1] + b"t"
    return (glob("torch._utils", "_rebuild_tensor_v2") + b"(" + pid + b"Q" + ints([offset])[1:-1] + ints(size)
            + ints(stride) + (b"\x88" if requires_grad else b"\x89") + glob("collections", "OrderedDict")
            + b")R" + b"tR")


def dict_of(items: list[tuple[bytes, bytes]], ordered: bool = False) -> bytes:
    start = glob("collections", "OrderedDict") + b")R" if ordered else b"}"
    return start + b"(" + b"".join(k + v for k, v in items) + b"u"


def torch_file(path, pickled: bytes, storages: dict[str, bytes], byteorder: bytes | None = b"little",
               folder: str = "resnet") -> None:
    """The zip torch.save writes: ``<folder>/data.pkl``, ``byteorder``, ``data/<key>``, ``version``."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{folder}/data.pkl", b"\x80\x02" + pickled + b".")
        if byteorder is not None:
            z.writestr(f"{folder}/byteorder", byteorder)
        for key, data in storages.items():
            z.writestr(f"{folder}/data/{key}", data)
        z.writestr(f"{folder}/version", b"3\n")


W = np.arange(6, dtype=np.float32)
CHECKPOINT = dict_of([
    (text("model"), dict_of([
        (text("fc.weight"), tensor("FloatStorage", "0", 6, 0, (2, 3), (3, 1), requires_grad=True)),
        (text("fc.weight_t"), tensor("FloatStorage", "0", 6, 0, (3, 2), (1, 3))),  # a transpose: same storage
        (text("column"), tensor("FloatStorage", "0", 6, 1, (2,), (3,))),
        (text("half"), tensor("HalfStorage", "1", 2, 0, (2,), (1,))),
        (text("bf16"), tensor("BFloat16Storage", "2", 2, 0, (2,), (1,))),
        (text("steps"), tensor("LongStorage", "3", 1, 0, (), ())),
        (text("mask"), tensor("BoolStorage", "4", 3, 0, (3,), (1,))),
        (text("empty"), tensor("FloatStorage", "5", 0, 0, (0, 4), (4, 1))),
    ], ordered=True)),
    (text("optimizer"), dict_of([
        (text("state"), dict_of([(b"K\x00", dict_of([(text("step"), b"G" + struct.pack(">d", 3.0))]))])),
        (text("param_groups"), b"](" + dict_of([(text("lr"), b"G" + struct.pack(">d", 0.1)),
                                                 (text("params"), b"](K\x00e")]) + b"e"),
    ])),
    (text("epoch"), b"K\x03"),
    (text("tag"), glob("_codecs", "encode") + b"(" + text("ab") + text("latin1") + b"tR"),
    (text("ids"), glob("__builtin__", "set") + b"((K\x01K\x02lt" + b"R"),
    (text("dtype"), glob("torch", "float16")),
    (text("where"), glob("torch", "device") + b"(" + text("cpu") + b"tR"),
])
STORAGES = {"0": W.tobytes(), "1": np.array([0.5, -2], np.float16).tobytes(),
            "2": np.array([0x3FC0, 0xC010], np.uint16).tobytes(),  # bfloat16 1.5 and -2.25
            "3": np.array([7], np.int64).tobytes(), "4": np.array([1, 0, 1], np.uint8).tobytes(), "5": b""}


def check_checkpoint(back):
    model = back["model"]
    assert isinstance(model, collections.OrderedDict) and list(model) == [
        "fc.weight", "fc.weight_t", "column", "half", "bf16", "steps", "mask", "empty"]
    w = model["fc.weight"]
    assert w.dtype == mt.float32 and w.requires_grad and w.is_leaf and w.shape == (2, 3)
    np.testing.assert_array_equal(w.detach().numpy(), W.reshape(2, 3))
    np.testing.assert_array_equal(model["fc.weight_t"].numpy(), W.reshape(2, 3).T)
    np.testing.assert_array_equal(model["column"].numpy(), [1, 4])
    assert model["half"].dtype == mt.float16 and model["half"].tolist() == [0.5, -2.0]
    assert model["bf16"].dtype == mt.bfloat16 and model["bf16"].tolist() == [1.5, -2.25]
    assert model["steps"].dtype == mt.int64 and model["steps"].shape == () and model["steps"].item() == 7
    assert model["mask"].dtype == mt.bool and model["mask"].tolist() == [True, False, True]
    assert model["empty"].shape == (0, 4)
    with mt.no_grad():
        w[1, 1] = 40.0  # one storage: the views see the write, as in PyTorch
    assert model["column"].tolist() == [1.0, 40.0] and model["fc.weight_t"][1, 1].item() == 40.0
    assert back["optimizer"] == {"state": {0: {"step": 3.0}}, "param_groups": [{"lr": 0.1, "params": [0]}]}
    assert back["epoch"] == 3 and back["tag"] == b"ab" and back["ids"] == {1, 2}
    assert back["dtype"] is mt.float16 and back["where"] == mt.device("cpu")


def test_reads_what_torch_save_writes_without_torch(tmp_path):
    path = tmp_path / "resnet.pth"
    torch_file(path, CHECKPOINT, STORAGES)
    check_checkpoint(load(path))
    with open(path, "rb") as f:
        check_checkpoint(load(io.BytesIO(f.read()), weights_only=True))


def test_big_endian_files_and_files_without_a_byteorder_record(tmp_path):
    swapped = {k: np.frombuffer(v, {"0": "<f4", "1": "<f2", "2": "<u2", "3": "<i8"}.get(k, "u1"))
               .byteswap().tobytes() for k, v in STORAGES.items()}
    torch_file(tmp_path / "big.pt", CHECKPOINT, swapped, byteorder=b"big")
    check_checkpoint(load(tmp_path / "big.pt"))
    torch_file(tmp_path / "old.pt", CHECKPOINT, STORAGES, byteorder=None)  # PyTorch < 1.13: native order
    check_checkpoint(load(tmp_path / "old.pt"))


def test_state_dicts_load_into_a_model_and_its_optimizer(tmp_path):
    mt.manual_seed(0)
    model = mt.nn.Sequential(mt.nn.Linear(3, 4), mt.nn.BatchNorm1d(4), mt.nn.Linear(4, 2))
    opt = mt.optim.Adam(model.parameters(), lr=0.01)
    x = mt.randn(5, 3)
    model(x).square().sum().backward()
    opt.step()
    save({"model": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3}, tmp_path / "ck.pt",
         format="torch")
    ck = load(tmp_path / "ck.pt")
    fresh = mt.nn.Sequential(mt.nn.Linear(3, 4), mt.nn.BatchNorm1d(4), mt.nn.Linear(4, 2))
    fresh_opt = mt.optim.Adam(fresh.parameters(), lr=0.01)
    fresh.load_state_dict(ck["model"])
    fresh_opt.load_state_dict(ck["optimizer"])
    assert ck["epoch"] == 3
    opt.zero_grad()
    for m in (model, fresh):
        m(x).square().sum().backward()
    opt.step()
    fresh_opt.step()
    for a, b in zip(model.state_dict().values(), fresh.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_the_written_layout_is_torch_saves(tmp_path):
    """Member names and order, version 3, byte order, 64-byte aligned storages (torch.load(mmap=True)),
    and a pickle naming only what PyTorch's weights_only unpickler accepts."""
    w = mt.arange(12.0).reshape(3, 4)
    sd = collections.OrderedDict([("w", w), ("w_t", w.T), ("row", w[1]), ("p", mt.nn.Parameter(mt.ones(2))),
                                  ("n", mt.tensor(5)), ("h", mt.zeros(3, dtype=mt.float16))])
    path = tmp_path / "sd.pt"
    save({"sd": sd, "lr": 0.1, "dtype": mt.float32, "dev": mt.device("cpu")}, path, format="torch")
    raw = path.read_bytes()
    with zipfile.ZipFile(path) as z:
        infos = z.infolist()
        assert [i.filename for i in infos] == [
            "archive/data.pkl", "archive/.format_version", "archive/.storage_alignment", "archive/byteorder",
            "archive/data/0", "archive/data/1", "archive/data/2", "archive/data/3", "archive/version",
            "archive/.data/serialization_id"]
        assert z.read("archive/version") == b"3\n" and z.read("archive/byteorder") == b"little"
        assert all(i.compress_type == zipfile.ZIP_STORED for i in infos)
        for i in infos[4:8]:
            start = i.header_offset + 30 + struct.unpack("<H", raw[i.header_offset + 26:][:2])[0] \
                + struct.unpack("<H", raw[i.header_offset + 28:][:2])[0]
            assert start % 64 == 0, i.filename
        np.testing.assert_array_equal(np.frombuffer(z.read("archive/data/0"), "<f4"), np.arange(12))
        ops = list(pickletools.genops(z.read("archive/data.pkl")))
    globals_named = {arg for op, arg, _ in ops if op.name == "GLOBAL"}
    assert globals_named == {"collections OrderedDict", "torch._utils _rebuild_tensor_v2", "torch FloatStorage",
                             "torch._utils _rebuild_parameter", "torch LongStorage", "torch HalfStorage",
                             "torch float32", "torch device"}
    assert ops[0][0].name == "PROTO" and ops[0][1] == 2
    assert sum(op.name == "BINPERSID" for op, _, _ in ops) == 6  # w, w.T and w[1] share storage "0"
    back = load(path)
    np.testing.assert_array_equal(back["sd"]["w_t"].numpy(), np.arange(12.0).reshape(3, 4).T)
    assert back["sd"]["row"].tolist() == [4.0, 5.0, 6.0, 7.0] and back["dtype"] is mt.float32
    assert isinstance(back["sd"]["p"], mt.nn.Parameter) and back["sd"]["p"].requires_grad


def test_map_location(tmp_path):
    path = tmp_path / "ck.pt"
    torch_file(path, CHECKPOINT, STORAGES)
    seen = []

    def keep(storage, location):
        seen.append(location)
        return storage
    check_checkpoint(load(path, map_location=keep))
    assert seen and set(seen) == {"cpu"}
    check_checkpoint(load(path, map_location={"cuda:0": "cpu"}))
    check_checkpoint(load(path, map_location=mt.device("cpu")))
    with pytest.raises(TypeError, match="map_location returned int"):
        load(path, map_location=lambda storage, location: 0)


def test_device_tensors_record_their_location(tmp_path, device):
    w = mt.arange(6.0).reshape(2, 3).to(device)
    save({"w": w, "row": w[1]}, tmp_path / "d.pt", format="torch")
    seen = []

    def record(storage, location):
        seen.append(location)
        return storage
    back = load(tmp_path / "d.pt", map_location=record)
    assert set(seen) == {str(device)} and back["w"].device == mt.device("cpu")
    assert back["row"].tolist() == [3.0, 4.0, 5.0]
    for where in (device, {str(device): device}):
        on = load(tmp_path / "d.pt", map_location=where)
        assert on["w"].device == device and on["row"].cpu().tolist() == [3.0, 4.0, 5.0]


# ------------------------------------------------------------------ whole modules and safe globals
class Net(mt.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = mt.nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x).relu()


def test_a_whole_module_needs_weights_only_false_or_a_safe_global(tmp_path):
    net, x = Net(), mt.randn(4, 3)
    save(net, tmp_path / "net.pt")  # pickled, as torch.save(model) does
    with pytest.raises(pickle.UnpicklingError) as info:
        load(tmp_path / "net.pt")
    message = str(info.value)
    assert "GLOBAL test_torch_format.Net was not an allowed global by default" in message or \
        "GLOBAL tests.test_torch_format.Net was not an allowed global" in message
    assert "weights_only` set to `False`" in message and "add_safe_globals([" in message
    back = load(tmp_path / "net.pt", weights_only=False)
    assert type(back) is Net and back is not net
    np.testing.assert_array_equal(back(x).detach().numpy(), net(x).detach().numpy())
    assert isinstance(back.fc.weight, mt.nn.Parameter) and back.fc.weight.requires_grad

    assert serialization.get_safe_globals() == []
    with serialization.safe_globals([Net, mt.nn.Linear]):
        assert serialization.get_safe_globals() == [Net, mt.nn.Linear]
        assert type(load(tmp_path / "net.pt")) is Net
    assert serialization.get_safe_globals() == []
    serialization.add_safe_globals([Net])
    try:
        with pytest.raises(pickle.UnpicklingError, match="GLOBAL minitensor.nn.modules.linear.Linear was not"):
            load(tmp_path / "net.pt")
        serialization.add_safe_globals([(mt.nn.Linear, "minitensor.nn.modules.linear.Linear")])
        assert type(load(tmp_path / "net.pt").fc) is mt.nn.Linear
    finally:
        serialization.clear_safe_globals()
    assert serialization.get_safe_globals() == []
    with pytest.raises(ValueError, match="tuple of length 2"):
        serialization.add_safe_globals([(Net,)])


def test_save_format_choice(tmp_path):
    with pytest.raises(TypeError, match="whole Net module"):
        save({"net": Net()}, tmp_path / "a.mt", format="minitensor")
    with pytest.raises(ValueError, match="format must be"):
        save({}, tmp_path / "a.mt", format="pickle")
    save({"ids": {1, 2}}, tmp_path / "set.pt", format="torch")  # any picklable object in the torch layout
    assert load(tmp_path / "set.pt") == {"ids": {1, 2}}
    assert not list(tmp_path.glob("*.mt"))


def test_a_failed_torch_save_leaves_the_previous_file_intact(tmp_path):
    path = tmp_path / "ck.pt"
    save({"w": mt.ones(2)}, path, format="torch")
    before = path.read_bytes()
    with pytest.raises(pickle.PicklingError):
        save({"w": mt.zeros(2), "f": lambda: 0}, path, format="torch")
    assert path.read_bytes() == before and [p.name for p in tmp_path.iterdir()] == ["ck.pt"]


# ------------------------------------------------------------------ hostile and damaged files
def hostile_cases():
    """Each case: the pickle, given the path of a marker file it tries to create, and the error's gist."""
    t = tensor("FloatStorage", "0", 6, 0, (2,), (1,))
    return {
        "os.system": (lambda m: glob("os", "system") + b"(" + text(f"touch {m}") + b"tR", "module os is blocked"),
        "posix.system": (lambda m: glob("posix", "system") + b"(" + text(f"touch {m}") + b"tR",
                         "module posix is blocked"),
        "subprocess": (lambda m: glob("subprocess", "check_call") + b"((" + text("touch") + text(m) + b"ltR",
                       "GLOBAL subprocess.check_call was not an allowed global"),
        "eval": (lambda m: glob("builtins", "eval") + b"(" + text(f"open({m!r}, 'w')") + b"tR",
                 "GLOBAL eval was not an allowed global"),
        "getattr chain": (lambda m: glob("__builtin__", "getattr") + b"(" + glob("collections", "OrderedDict")
                          + text("x") + b"tR", "GLOBAL getattr was not an allowed global"),
        "a global inside a tensor": (lambda m: t.replace(glob("collections", "OrderedDict"), glob("os", "system")),
                                     "module os is blocked"),
        "a PyTorch module": (lambda m: glob("torch.nn.modules.linear", "Linear") + b")\x81", "cannot rebuild"),
        "an unknown persistent id": (lambda m: b"(" + text("module") + text("x") + b"tQ", "unknown persistent id"),
        "a storage that is not there": (lambda m: tensor("FloatStorage", "9", 6, 0, (2,), (1,)), "storage '9'"),
        "a storage of the wrong size": (lambda m: tensor("FloatStorage", "0", 7, 0, (2,), (1,)),
                                        "not the 7 elements"),
        "a view past its storage": (lambda m: tensor("FloatStorage", "0", 6, 2, (2, 3), (3, 1)),
                                    "reaches element 7"),
        "a negative stride": (lambda m: tensor("FloatStorage", "0", 6, 5, (2,), (-1,)), "non-negative ints"),
        "an unsupported storage": (lambda m: t.replace(b"FloatStorage", b"ComplexFloatStorage"),
                                   "torch.ComplexFloatStorage, whose dtype"),
        "a truncated pickle": (lambda m: glob("collections", "OrderedDict")[:-3], "truncated"),
        "a call with wrong arguments": (lambda m: glob("collections", "OrderedDict") + b"(K\x01K\x02tR",
                                        "Weights only load failed: TypeError"),
    }


HOSTILE = hostile_cases()


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_and_damaged_pickles_raise_unpickling_error_and_run_nothing(tmp_path, case):
    body, why = HOSTILE[case]
    marker = tmp_path / "pwned"
    path = tmp_path / "evil.pt"
    torch_file(path, body(str(marker)), {"0": W.tobytes()})
    with pytest.raises(pickle.UnpicklingError) as info:
        load(path)
    assert why in str(info.value) and str(path) in str(info.value), str(info.value)
    assert not marker.exists()
    if case.endswith("system"):
        serialization.add_safe_globals([(os.system, "os.system"), (os.system, "posix.system")])
        try:  # blocked modules stay blocked whatever the user allows
            with pytest.raises(pickle.UnpicklingError, match="is blocked"):
                load(path)
        finally:
            serialization.clear_safe_globals()
        assert not marker.exists()


def test_damaged_archives_and_legacy_files_are_clear_runtime_errors(tmp_path):
    path = tmp_path / "ck.pt"
    torch_file(path, CHECKPOINT, STORAGES)
    good = path.read_bytes()
    path.write_bytes(good[:-40])
    with pytest.raises(RuntimeError, match="ck.pt"):
        load(path)
    at = good.index(W.tobytes())
    path.write_bytes(good[:at] + b"\xff" + good[at + 1:])  # a storage's bytes changed: its CRC fails
    with pytest.raises(pickle.UnpicklingError, match="storage '0'.*CRC"):
        load(path)
    legacy = tmp_path / "legacy.pt"
    legacy.write_bytes(pickle.dumps(0x1950A86A20F9469CFC6C, protocol=2) + pickle.dumps(1001, protocol=2))
    with pytest.raises(RuntimeError, match="legacy .pre-1.6. format") as info:
        load(legacy)
    assert type(info.value) is RuntimeError
    torch_file(path, CHECKPOINT, STORAGES)
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("resnet/constants.pkl", b"\x80\x02).")
    with pytest.raises(RuntimeError, match="TorchScript archive"):
        load(path)
    torch_file(path, CHECKPOINT, STORAGES, byteorder=b"middle")
    with pytest.raises(RuntimeError, match="unknown byte order"):
        load(path)
