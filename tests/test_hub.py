"""``minitensor.hub``: the cache folder, downloads from a local HTTP server (complete, checksum mismatch,
unreachable), ``load_state_dict_from_url``, and ``load`` / ``list`` / ``help`` of a local hubconf.py."""
from __future__ import annotations

import functools
import hashlib
import http.server
import socket
import threading
import zipfile

import pytest

import minitensor as mt
from minitensor import hub


@pytest.fixture
def served(tmp_path):
    """(folder, base URL) of an HTTP server on 127.0.0.1 serving the folder."""
    folder = tmp_path / "served"
    folder.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    yield folder, f"http://127.0.0.1:{httpd.server_address[1]}/"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setattr(hub, "_hub_dir", None)
    for var in ("MINITENSOR_HOME", "TORCH_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    return tmp_path / "cache"


def test_get_dir_follows_the_environment_and_set_dir(cache, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert hub.get_dir() == str(tmp_path / "xdg" / "minitensor" / "hub")
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    assert hub.get_dir() == str(tmp_path / "torch" / "hub")
    monkeypatch.setenv("MINITENSOR_HOME", str(tmp_path / "mt"))
    assert hub.get_dir() == str(tmp_path / "mt" / "hub")
    hub.set_dir(cache)
    assert hub.get_dir() == str(cache)


def test_download_with_and_without_a_hash(served, tmp_path):
    folder, url = served
    blob = b"minitensor" * 10000
    (folder / "blob.bin").write_bytes(blob)
    digest = hashlib.sha256(blob).hexdigest()
    hub.download_url_to_file(url + "blob.bin", tmp_path / "a.bin", progress=False)
    assert (tmp_path / "a.bin").read_bytes() == blob
    hub.download_url_to_file(url + "blob.bin", str(tmp_path / "b.bin"), hash_prefix=digest[:10])
    assert (tmp_path / "b.bin").read_bytes() == blob


def test_checksum_mismatch_leaves_nothing(served, tmp_path):
    folder, url = served
    (folder / "blob.bin").write_bytes(b"payload")
    (tmp_path / "keep.bin").write_bytes(b"old")
    with pytest.raises(RuntimeError, match='invalid hash value \\(expected "deadbeef", got "'):
        hub.download_url_to_file(url + "blob.bin", tmp_path / "keep.bin", hash_prefix="deadbeef")
    assert (tmp_path / "keep.bin").read_bytes() == b"old"  # the old file is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.bin", "served"]  # no temporary left


def test_unreachable_url_and_missing_file_give_clear_errors(served, tmp_path):
    _, url = served
    with pytest.raises(Exception, match="404.*missing.bin"):
        hub.download_url_to_file(url + "missing.bin", tmp_path / "x")
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(OSError, match=f"could not download http://127.0.0.1:{port}/x.bin to .*x.bin"):
        hub.download_url_to_file(f"http://127.0.0.1:{port}/x.bin", tmp_path / "x.bin")
    assert not (tmp_path / "x.bin").exists() and not (tmp_path / "x").exists()


def test_load_state_dict_from_url_caches_and_checks_the_hash(served, cache):
    folder, url = served
    state = {"w": mt.arange(6.0).reshape(2, 3), "b": mt.zeros(2)}
    mt.save(state, folder / "plain.pt")
    digest = hashlib.sha256((folder / "plain.pt").read_bytes()).hexdigest()
    (folder / f"model-{digest[:8]}.pt").write_bytes((folder / "plain.pt").read_bytes())
    (folder / "model-00000000.pt").write_bytes((folder / "plain.pt").read_bytes())
    hub.set_dir(cache)
    got = hub.load_state_dict_from_url(url + "plain.pt")
    assert set(got) == {"w", "b"} and mt.equal(got["w"], state["w"])
    assert (cache / "checkpoints" / "plain.pt").exists()
    (folder / "plain.pt").unlink()  # served from the cache from now on
    assert mt.equal(hub.load_state_dict_from_url(url + "plain.pt")["b"], state["b"])
    got = hub.load_state_dict_from_url(url + f"model-{digest[:8]}.pt", check_hash=True, file_name="named.pt",
                                       model_dir=str(cache / "elsewhere"))
    assert mt.equal(got["w"], state["w"]) and (cache / "elsewhere" / "named.pt").exists()
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.load_state_dict_from_url(url + "model-00000000.pt", check_hash=True)
    assert not (cache / "checkpoints" / "model-00000000.pt").exists()


def test_legacy_zipped_checkpoint(served, cache, tmp_path):
    folder, url = served
    mt.save({"w": mt.ones(2)}, tmp_path / "inner.pt")
    with zipfile.ZipFile(folder / "old.zip", "w") as z:
        z.write(tmp_path / "inner.pt", "inner.pt")
    assert mt.equal(hub.load_state_dict_from_url(url + "old.zip", model_dir=str(cache))["w"], mt.ones(2))


def test_local_hubconf(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "helper.py").write_text("SIZE = 3\n")
    (repo / "hubconf.py").write_text(
        "dependencies = ['minitensor']\n"
        "from helper import SIZE\n"
        "import minitensor\n"
        "def tiny(out=2, **kw):\n"
        "    '''A tiny linear layer.'''\n"
        "    return minitensor.nn.Linear(SIZE, out, **kw)\n"
        "def _private():\n"
        "    pass\n")
    layer = hub.load(str(repo), "tiny", 4, source="local", bias=False)
    assert isinstance(layer, mt.nn.Linear) and layer.weight.shape == (4, 3) and layer.bias is None
    assert hub.list(str(repo), source="local") == ["tiny"]
    assert hub.help(str(repo), "tiny", source="local") == "A tiny linear layer."
    with pytest.raises(RuntimeError, match="Cannot find callable nothing in hubconf"):
        hub.load(str(repo), "nothing", source="local")
    (repo / "hubconf.py").write_text("dependencies = ['surely_not_a_module_xyz']\n")
    with pytest.raises(RuntimeError, match="Missing dependencies: surely_not_a_module_xyz"):
        hub.load(str(repo), "tiny", source="local")


def test_github_sources_are_refused_clearly():
    for call in (lambda: hub.load("pytorch/vision", "resnet18"), lambda: hub.list("pytorch/vision"),
                 lambda: hub.help("pytorch/vision", "resnet18")):
        with pytest.raises(NotImplementedError, match="loading from GitHub .* is not supported.*source='local'"):
            call()
    with pytest.raises(ValueError, match='Unknown source: "pypi". Allowed values: "github" \\| "local".'):
        hub.load("x", "y", source="pypi")


@pytest.mark.torch
def test_hash_error_text_and_names_match_pytorch(served, tmp_path):
    torch = pytest.importorskip("torch")
    folder, url = served
    (folder / "blob.bin").write_bytes(b"payload")
    messages = []
    for module in (hub, torch.hub):
        with pytest.raises(RuntimeError) as info:
            module.download_url_to_file(url + "blob.bin", str(tmp_path / "t.bin"), hash_prefix="00", progress=False)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert sorted(hub.__all__) == sorted(torch.hub.__all__)
    assert hub.HASH_REGEX.pattern == torch.hub.HASH_REGEX.pattern
