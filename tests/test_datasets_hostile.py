"""IDX files and mirrors that misbehave: gzip bombs, headers that declare more than the file can hold,
servers that drip bytes forever or send more than the file's size. Each must fail fast, with bounded
memory and a clear error; the real MNIST test split still reads exactly."""
from __future__ import annotations

import gzip
import http.server
import struct
import threading
import time
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest
from test_datasets import SHARED, fake_split, idx_bytes, md5, needs_shared

from minitensor.datasets import (
    MNIST,
    DownloadError,
    IDXFormatError,
    download_file,
    read_idx,
)


def bomb(path: Path, header: bytes, zeros_mb: int) -> Path:
    """A gzip file: ``header`` then ``zeros_mb`` MiB of zeros (about 1 KiB on disk per MiB)."""
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    parts = [c.compress(header)] + [c.compress(bytes(1 << 20)) for _ in range(zeros_mb)] + [c.flush()]
    path.write_bytes(b"".join(parts))
    return path


def peak_mb_of(fn) -> float:
    tracemalloc.start()
    try:
        fn()
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return peak / 2**20


def test_a_gzip_bomb_is_refused_without_decompressing_it(tmp_path):
    small_header = struct.pack(">BBBBIII", 0, 0, 8, 3, 1, 28, 28)  # one image, then 200 MiB of zeros
    path = bomb(tmp_path / "bomb-idx3-ubyte.gz", small_header, 200)
    assert path.stat().st_size < 300_000

    def read():
        with pytest.raises(IDXFormatError, match="longer than its header says") as info:
            read_idx(path)
        assert str(path) in str(info.value)
    assert peak_mb_of(read) < 8  # the whole stream would be 200 MiB


def test_a_header_declaring_more_than_the_file_can_hold_is_refused_before_allocating(tmp_path):
    huge = struct.pack(">BBBBIII", 0, 0, 0x0E, 3, 2**32 - 1, 2**32 - 1, 2**32 - 1)  # float64, ~6e29 bytes
    for path in (bomb(tmp_path / "huge.gz", huge, 1), tmp_path / "huge.raw"):
        if path.suffix == ".raw":
            path.write_bytes(huge + bytes(64))
        with pytest.raises(IDXFormatError, match=r"truncated.*shape \(4294967295, 4294967295, 4294967295\)"):
            read_idx(path)
    mid = struct.pack(">BBBBIII", 0, 0, 8, 3, 1_000_000, 28, 28)  # 784 MB declared in a ~1 MB file
    path = bomb(tmp_path / "mid.gz", mid, 1)
    assert peak_mb_of(lambda: pytest.raises(IDXFormatError, read_idx, path)) < 8


def test_wrong_headers_in_an_mnist_folder_name_the_file(tmp_path):
    images, labels = fake_split(5, 0)
    folder = tmp_path / "mnist"
    folder.mkdir()
    (folder / "t10k-labels-idx1-ubyte").write_bytes(idx_bytes(labels))
    (folder / "t10k-images-idx3-ubyte").write_bytes(b"\x00\x00\x08\x03" + idx_bytes(images)[4:12])
    with pytest.raises(IDXFormatError, match="truncated IDX header") as info:
        MNIST(tmp_path, train=False)
    assert "t10k-images-idx3-ubyte" in str(info.value)


@needs_shared
def test_the_real_test_split_streams_to_the_same_values_as_a_whole_decompression():
    for name, shape in (("t10k-images-idx3-ubyte.gz", (10000, 28, 28)), ("t10k-labels-idx1-ubyte.gz", (10000,))):
        raw = gzip.decompress((SHARED / name).read_bytes())
        reference = np.frombuffer(raw, np.uint8, offset=4 + 4 * len(shape)).reshape(shape)
        np.testing.assert_array_equal(read_idx(SHARED / name), reference)
    # memory: the 7.8 MB array plus bounded buffers, not the decompressed file on top of it
    assert peak_mb_of(lambda: read_idx(SHARED / "t10k-images-idx3-ubyte.gz")) < 7.5 + 4


# ------------------------------------------------------------------------------ misbehaving mirrors
class Mirror:
    """A local HTTP server whose paths misbehave: /drip/ sends the body a byte at a time, /drip-headers/
    its headers a byte at a time, /big/ more bytes than the file has (with an honest Content-Length),
    /big-unsized/ the same without one; /good/ serves the file. Every handler ends within ~3 s."""

    def __init__(self, name: str, blob: bytes):
        served = {"name": name, "blob": blob}

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_GET(self):
                kind, _, file = self.path.strip("/").partition("/")
                if file != served["name"]:
                    return self.send_error(404)
                body = served["blob"] * (3 if kind.startswith("big") else 1)
                if kind == "drip-headers":
                    self.wfile.write(b"HTTP/1.0 200 OK\r\n")
                    return self.drip(b"X-Slow: " + b"a" * 1000)
                self.send_response(200)
                if kind != "big-unsized":
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if kind == "drip":
                    return self.drip(body)
                self.wfile.write(body)

            def drip(self, data: bytes):
                end = time.monotonic() + 3.0  # bounded, so the server thread always finishes
                for i in range(len(data)):
                    if time.monotonic() > end:
                        return
                    try:
                        self.wfile.write(data[i:i + 1])
                        self.wfile.flush()
                    except OSError:
                        return  # the client hung up: what the deadline should make it do
                    time.sleep(0.01)

            def log_message(self, *args):
                pass
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.handle_error = lambda request, address: None
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def mirror():
    images, _ = fake_split(20, 5)
    blob = gzip.compress(idx_bytes(images))
    server = Mirror("t10k-images-idx3-ubyte.gz", blob)
    yield server, blob
    server.close()


@pytest.mark.parametrize("kind", ["drip", "drip-headers"])
def test_a_dripping_mirror_is_given_up_at_the_deadline(mirror, tmp_path, kind):
    server, blob = mirror
    start = time.monotonic()
    with pytest.raises(DownloadError, match="deadline") as info:
        download_file("t10k-images-idx3-ubyte.gz", [server.url + kind + "/"], md5(blob), tmp_path,
                      timeout=5.0, deadline=0.5, max_bytes=len(blob))
    assert time.monotonic() - start < 2.5  # dripping would take over 100 s; each byte comes within timeout
    assert server.url + kind in str(info.value)
    assert list(tmp_path.iterdir()) == []  # nothing partial left


@pytest.mark.parametrize("kind, why", [("big", "offers"), ("big-unsized", "sent more than")])
def test_a_mirror_sending_more_than_the_file_is_cut_off(mirror, tmp_path, kind, why):
    server, blob = mirror
    with pytest.raises(DownloadError, match=why):
        download_file("t10k-images-idx3-ubyte.gz", [server.url + kind + "/"], md5(blob), tmp_path,
                      max_bytes=len(blob))
    path = download_file("t10k-images-idx3-ubyte.gz", [server.url + kind + "/", server.url + "good/"],
                         md5(blob), tmp_path, max_bytes=len(blob))
    assert path.read_bytes() == blob and sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_mnist_downloads_use_the_known_sizes_and_deadline(mirror, tmp_path, monkeypatch):
    server, blob = mirror
    labels = gzip.compress(idx_bytes(fake_split(20, 5)[1]))
    (tmp_path / "mnist").mkdir()
    (tmp_path / "mnist" / "t10k-labels-idx1-ubyte.gz").write_bytes(labels)

    class Tiny(MNIST):
        resources = {**MNIST.resources, "t10k-images-idx3-ubyte.gz": md5(blob)}
        sizes = {**MNIST.sizes, "t10k-images-idx3-ubyte.gz": len(blob)}
        download_deadline = 0.5
    with pytest.raises(DownloadError, match="sent more than"):
        Tiny(tmp_path, train=False, download=True, mirrors=[server.url + "big-unsized/"])
    with pytest.raises(DownloadError, match="deadline"):
        Tiny(tmp_path, train=False, download=True, mirrors=[server.url + "drip/"])
    assert len(Tiny(tmp_path, train=False, download=True, mirrors=[server.url + "good/"])) == 20
    assert MNIST.sizes["t10k-images-idx3-ubyte.gz"] == 1648877  # the official file's size
