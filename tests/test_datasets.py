"""minitensor.datasets: the IDX parser, the mirror downloader (against a local HTTP server), MNIST on
files the tests write and on the real shared test split, and scikit-learn's Digits."""
from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import os
import struct
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minitensor as mt
from minitensor import datasets
from minitensor.datasets import MNIST, DownloadError, FashionMNIST, IDXFormatError, read_idx
from minitensor.utils.data import DataLoader, Subset, default_collate

FEW = settings(max_examples=25, deadline=None)

# IDX written here from the format's definition, independently of the library's parser.
TYPE_CODES = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C, np.float32: 0x0D,
              np.float64: 0x0E}


def idx_bytes(a: np.ndarray) -> bytes:
    header = struct.pack(">BBBB", 0, 0, TYPE_CODES[a.dtype.type], a.ndim)
    header += b"".join(struct.pack(">I", n) for n in a.shape)
    return header + a.astype(a.dtype.newbyteorder(">")).tobytes()


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def arr(t):
    return np.asarray(t.numpy())


# ------------------------------------------------------------------------------------------------ IDX
@FEW
@given(dtype=st.sampled_from(list(TYPE_CODES)), shape=st.lists(st.integers(0, 5), min_size=1, max_size=4),
       compressed=st.booleans(), seed=st.integers(0, 2**31))
def test_idx_round_trip(tmp_path_factory, dtype, shape, compressed, seed):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 100).astype(dtype)
    raw = idx_bytes(a)
    path = tmp_path_factory.mktemp("idx") / "x-idx"
    write(path, gzip.compress(raw) if compressed else raw)
    got = read_idx(path)
    assert got.dtype == np.dtype(dtype) and got.dtype.isnative and got.shape == tuple(shape)
    np.testing.assert_array_equal(got, a)
    got[...] = 0  # writable, not a view of the file's bytes


def test_idx_truncated_trailing_and_bad_headers(tmp_path):
    good = idx_bytes(np.arange(24, dtype=np.uint8).reshape(2, 3, 4))
    cases = {
        "truncated": good[:-1],
        "longer than its header": good + b"\x00",
        "not an IDX file": b"\x01" + good[1:],
        "unknown IDX type code": good[:2] + b"\x07" + good[3:],
        "truncated IDX header": good[:9],
        "0 dimensions": good[:3] + b"\x00",
        "65 dimensions": good[:3] + bytes([65]) + b"\x00\x00\x00\x01" * 65 + b"\x00",
    }
    for why, data in cases.items():
        for name, blob in ((f"{len(why)}.raw", data), (f"{len(why)}.gz", gzip.compress(data))):
            path = write(tmp_path / name, blob)
            with pytest.raises(IDXFormatError, match=why) as info:
                read_idx(path)
            assert str(path) in str(info.value)


def test_idx_corrupt_or_truncated_gzip_names_the_file(tmp_path):
    data = gzip.compress(idx_bytes(np.random.default_rng(0).integers(0, 255, (50, 28, 28)).astype(np.uint8)))
    truncated = write(tmp_path / "truncated.gz", data[: len(data) // 2])
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0xFF
    corrupt = write(tmp_path / "corrupt.gz", bytes(flipped))
    for path in (truncated, corrupt):
        with pytest.raises(IDXFormatError) as info:  # never a bare EOFError / zlib.error
            read_idx(path)
        assert str(path) in str(info.value) and "gzip" in str(info.value)


# ------------------------------------------------------------------------------- MNIST on written files
def fake_split(n, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 256, (n, 28, 28)).astype(np.uint8), rng.integers(0, 10, n).astype(np.uint8)


def write_split(folder: Path, prefix: str, images, labels, compress=True):
    for kind, a in (("images-idx3", images), ("labels-idx1", labels)):
        raw = idx_bytes(a)
        name = f"{prefix}-{kind}-ubyte"
        write(folder / (name + ".gz" if compress else name), gzip.compress(raw) if compress else raw)


@pytest.fixture
def fake_root(tmp_path):
    """root/MNIST/raw holds a gzip train split (30 images); root/mnist a raw t10k split (12)."""
    train, test = fake_split(30, 1), fake_split(12, 2)
    write_split(tmp_path / "MNIST" / "raw", "train", *train)
    write_split(tmp_path / "mnist", "t10k", *test, compress=False)
    return tmp_path, train, test


def test_mnist_items_data_targets_and_tensors(fake_root):
    root, (images, labels), (test_images, test_labels) = fake_root
    ds = MNIST(root)
    assert len(ds) == 30
    assert ds.data.dtype == mt.uint8 and ds.data.shape == (30, 28, 28)
    assert ds.targets.dtype == mt.int64
    np.testing.assert_array_equal(arr(ds.data), images)
    np.testing.assert_array_equal(arr(ds.targets), labels)
    image, label = ds[7]
    assert image.dtype == mt.float32 and image.shape == (1, 28, 28)
    assert isinstance(label, int) and label == labels[7]
    np.testing.assert_allclose(arr(image)[0], images[7].astype(np.float64) / 255, rtol=1e-7, atol=0)
    assert 0.0 <= arr(image).min() and arr(image).max() <= 1.0
    x, y = ds.tensors()
    assert x.shape == (30, 1, 28, 28) and x.dtype == mt.float32 and y.dtype == mt.int64
    np.testing.assert_array_equal(arr(x)[7], arr(image))
    raw, _ = ds.tensors(normalize=False)
    assert raw.dtype == mt.uint8 and np.array_equal(arr(raw)[:, 0], images)
    test = MNIST(root, train=False)
    np.testing.assert_array_equal(arr(test.data), test_images)
    np.testing.assert_array_equal(arr(test.targets), test_labels)


def test_mnist_transforms_get_the_uint8_image(fake_root):
    root, (images, labels), _ = fake_root
    received = []

    def transform(t):
        received.append(t)
        t[...] = 0  # writing into it must not change the dataset
        return "image"
    ds = MNIST(root, transform=transform, target_transform=lambda y: y + 100)
    assert ds[3] == ("image", int(labels[3]) + 100)
    t = received[0]
    assert t.dtype == mt.uint8 and t.shape == (1, 28, 28)
    np.testing.assert_array_equal(arr(ds.data)[3], images[3])


def test_mnist_loader_fast_path_equals_per_sample_path(fake_root):
    root, _, _ = fake_root
    ds = Subset(MNIST(root), list(range(3, 27)))
    fast = list(DataLoader(ds, batch_size=5, shuffle=True, generator=4))
    slow = list(DataLoader(ds, batch_size=5, shuffle=True, generator=4, collate_fn=lambda b: default_collate(b)))
    assert len(fast) == len(slow) == 5
    for (fx, fy), (sx, sy) in zip(fast, slow):
        assert fx.dtype == sx.dtype == mt.float32 and fy.dtype == sy.dtype == mt.int64
        np.testing.assert_array_equal(arr(fx), arr(sx))
        np.testing.assert_array_equal(arr(fy), arr(sy))


def test_mnist_root_from_environment_and_missing_files_message(fake_root, tmp_path_factory, monkeypatch):
    root, (images, _), _ = fake_root
    monkeypatch.setenv("MINITENSOR_DATA", str(root))
    np.testing.assert_array_equal(arr(MNIST().data), images)
    empty = tmp_path_factory.mktemp("empty")
    with pytest.raises(FileNotFoundError) as info:
        MNIST(empty, train=False)
    message = str(info.value)
    for part in ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", str(empty / "MNIST" / "raw"),
                 str(empty / "mnist"), "download=True"):
        assert part in message
    with pytest.raises(FileNotFoundError, match="FashionMNIST"):
        FashionMNIST(root)  # MNIST files are not looked for as Fashion-MNIST ones


def test_mnist_refuses_inconsistent_files(tmp_path):
    images, labels = fake_split(10, 0)
    write_split(tmp_path / "mnist", "train", images, labels[:9])
    with pytest.raises(IDXFormatError, match="10 images but"):
        MNIST(tmp_path)
    write_split(tmp_path / "mnist", "train", images[:, :27], labels)
    with pytest.raises(IDXFormatError, match="28, 28"):
        MNIST(tmp_path)


# --------------------------------------------------------------------------------- the downloader
class Server:
    """An HTTP server on 127.0.0.1 (port 0) serving a folder; records the paths it was asked for."""

    def __init__(self, folder: Path):
        self.requests: list[str] = []
        requests = self.requests

        class Handler(http.server.SimpleHTTPRequestHandler):
            def do_GET(self):
                requests.append(self.path)
                if self.path.startswith("/slow/"):
                    time.sleep(2.0)  # longer than the client's timeout
                super().do_GET()

            def log_message(self, *args):
                pass
        handler = functools.partial(Handler, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.httpd.handle_error = lambda request, address: None  # a client that timed out is expected
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def mirror(tmp_path):
    """Mirror folders good/ (right files), bad/ (wrong bytes, same names) and empty/, and a Fake MNIST
    class whose md5s are those of the good files."""
    served = tmp_path / "served"
    images, labels = fake_split(8, 3)
    blobs = {"t10k-images-idx3-ubyte.gz": gzip.compress(idx_bytes(images)),
             "t10k-labels-idx1-ubyte.gz": gzip.compress(idx_bytes(labels))}
    for name, blob in blobs.items():
        write(served / "good" / name, blob)
        write(served / "bad" / name, blob + b"junk")
    (served / "empty").mkdir()

    class FakeMNIST(MNIST):
        resources = {name: md5(blob) for name, blob in blobs.items()}
        download_timeout = 5.0
    server = Server(served)
    yield server, FakeMNIST, images, labels, blobs
    server.close()


def test_download_success_then_cache_hit_without_network(mirror, tmp_path):
    server, FakeMNIST, images, labels, blobs = mirror
    root = tmp_path / "root"
    ds = FakeMNIST(root, train=False, download=True, mirrors=[server.url + "good/"])
    np.testing.assert_array_equal(arr(ds.data), images)
    np.testing.assert_array_equal(arr(ds.targets), labels)
    raw = root / "MNIST" / "raw"
    assert sorted(p.name for p in raw.iterdir()) == sorted(blobs)  # no temporary files left behind
    for name, blob in blobs.items():
        assert md5((raw / name).read_bytes()) == md5(blob)
    asked = len(server.requests)
    again = FakeMNIST(root, train=False, download=True, mirrors=["http://127.0.0.1:9/"])  # nothing there
    np.testing.assert_array_equal(arr(again.data), images)
    assert len(server.requests) == asked


def test_md5_mismatch_falls_through_to_the_next_mirror(mirror, tmp_path):
    server, FakeMNIST, images, _, blobs = mirror
    root = tmp_path / "root"
    ds = FakeMNIST(root, train=False, download=True,
                   mirrors=[server.url + "bad/", server.url + "empty/", server.url + "good/"])
    np.testing.assert_array_equal(arr(ds.data), images)
    name = "t10k-images-idx3-ubyte.gz"
    assert [p for p in server.requests if p.endswith(name)] == [f"/bad/{name}", f"/empty/{name}",
                                                               f"/good/{name}"]
    assert md5((root / "MNIST" / "raw" / name).read_bytes()) == md5(blobs[name])


def test_all_mirrors_failing_gives_a_clear_error(mirror, tmp_path):
    server, FakeMNIST, _, _, _ = mirror
    root = tmp_path / "root"
    mirrors = [server.url + "bad/", server.url + "empty/", "http://127.0.0.1:9/"]
    with pytest.raises(DownloadError) as info:
        FakeMNIST(root, train=False, download=True, mirrors=mirrors)
    message = str(info.value)
    assert "t10k-images-idx3-ubyte.gz" in message and "md5 mismatch" in message and "404" in message
    for m in mirrors:
        assert m in message
    assert list((root / "MNIST" / "raw").iterdir()) == []  # nothing partial in the cache


def test_a_mirror_that_does_not_answer_in_time_is_skipped(mirror, tmp_path, monkeypatch):
    server, FakeMNIST, images, _, _ = mirror
    monkeypatch.setattr(FakeMNIST, "download_timeout", 0.2)
    start = time.monotonic()
    ds = FakeMNIST(tmp_path / "r", train=False, download=True, mirrors=[server.url + "slow/", server.url + "good/"])
    np.testing.assert_array_equal(arr(ds.data), images)
    assert time.monotonic() - start < 1.5  # two timed-out requests, not two full waits
    assert sum(p.startswith("/slow/") for p in server.requests) == 2


def test_mirrors_class_attribute_is_used(mirror, tmp_path, monkeypatch):
    server, FakeMNIST, images, _, _ = mirror
    monkeypatch.setattr(FakeMNIST, "mirrors", (server.url + "good/",))
    np.testing.assert_array_equal(arr(FakeMNIST(tmp_path / "r", train=False, download=True).data), images)


# ------------------------------------------------------------------------- the real MNIST test split
OFFICIAL_MD5 = {"t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
                "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c"}


def shared_mnist_folder():
    env = os.environ.get("MINITENSOR_SHARED_DATA")
    repo_root = Path(__file__).resolve().parents[1]
    candidates = ([Path(env), Path(env) / "mnist"] if env else []) + [repo_root.parent / "shared" / "data" / "mnist"]
    for folder in candidates:
        if all((folder / name).is_file() for name in OFFICIAL_MD5):
            return folder
    return None


SHARED = shared_mnist_folder()
needs_shared = pytest.mark.skipif(SHARED is None, reason="the shared MNIST test split is not available")


@needs_shared
def test_real_mnist_test_split():
    for name, digest in OFFICIAL_MD5.items():
        assert md5((SHARED / name).read_bytes()) == digest
    ds = MNIST(SHARED, train=False)
    assert ds.data.shape == (10000, 28, 28) and ds.data.dtype == mt.uint8
    assert ds.targets.shape == (10000,) and ds.targets.dtype == mt.int64
    counts = np.bincount(arr(ds.targets), minlength=10)
    assert counts.sum() == 10000 and len(counts) == 10 and counts.min() > 800
    image, label = ds[0]
    assert label == 7  # the first test digit of MNIST is a 7
    assert image.shape == (1, 28, 28) and image.dtype == mt.float32
    assert float(image.min()) == 0.0 and float(image.max()) == 1.0


@needs_shared
def test_mnist_test_split_helper():
    full = MNIST(SHARED, train=False)
    order = np.random.default_rng(0).permutation(10000)
    train, test = datasets.mnist_test_split(SHARED, train=True), datasets.mnist_test_split(SHARED, train=False)
    assert len(train) == 8000 and len(test) == 2000
    np.testing.assert_array_equal(arr(train.data), arr(full.data)[order[:8000]])
    np.testing.assert_array_equal(arr(test.targets), arr(full.targets)[order[8000:]])
    x, y = train.tensors()
    assert x.shape == (8000, 1, 28, 28) and y.shape == (8000,)


# ------------------------------------------------------------------------------------------- Digits
def test_digits_splits():
    pytest.importorskip("sklearn")
    from sklearn.datasets import load_digits
    reference = load_digits()
    train, test = datasets.Digits(train=True), datasets.Digits(train=False)
    order = np.random.default_rng(0).permutation(1797)
    assert len(train) == 1437 and len(test) == 360
    np.testing.assert_array_equal(arr(train.targets), reference.target[order[:1437]])
    np.testing.assert_array_equal(arr(test.data), reference.images[order[1437:]])
    assert not set(order[:1437].tolist()) & set(order[1437:].tolist())
    image, label = test[5]
    assert image.shape == (1, 8, 8) and image.dtype == mt.float32
    np.testing.assert_allclose(arr(image)[0], reference.images[order[1437 + 5]] / 16, rtol=1e-7)
    assert label == reference.target[order[1437 + 5]]
    x, y = train.tensors()
    assert x.shape == (1437, 1, 8, 8) and 0 <= float(x.min()) and float(x.max()) <= 1 and y.dtype == mt.int64


def test_digits_without_sklearn_explains_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(ImportError, match="examples"):
        datasets.Digits()
