"""``minitensor.hub``: PyTorch's ``torch.hub`` for checkpoints by URL and local ``hubconf.py`` entry points.

The cache folder is ``$MINITENSOR_HOME/hub``, else ``$TORCH_HOME/hub`` (a checkpoint PyTorch downloaded is
the same file, so its cache serves both), else ``$XDG_CACHE_HOME/minitensor/hub`` (``~/.cache``); ``set_dir``
overrides all three. Downloads go to a temporary file beside the target, renamed into place only when
complete and, with a hash prefix, only when its SHA-256 matches. ``load`` / ``list`` / ``help`` read a
local folder's ``hubconf.py`` (``source="local"``); minitensor downloads no code from GitHub.
"""
from __future__ import annotations

import builtins
import hashlib
import importlib.util
import os
import re
import sys
import urllib.error
import urllib.request
import zipfile
from types import ModuleType
from typing import Any, Callable
from urllib.parse import urlparse

from .utils._files import atomic_write

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")  # PyTorch's: "name-<sha256 prefix>.ext"
_CHUNK = 1 << 16
_hub_dir: str | None = None


def get_dir() -> str:
    """The cache folder: ``set_dir``'s, else ``$MINITENSOR_HOME/hub``, ``$TORCH_HOME/hub`` or
    ``$XDG_CACHE_HOME/minitensor/hub``."""
    if _hub_dir is not None:
        return _hub_dir
    home = os.getenv("MINITENSOR_HOME") or os.getenv("TORCH_HOME") or \
        os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "minitensor")
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d: str | os.PathLike) -> None:
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def download_url_to_file(url: str, dst: str | os.PathLike, hash_prefix: str | None = None,
                         progress: bool = True, *, timeout: float = 60.0) -> None:
    """Download ``url`` to ``dst``; with ``hash_prefix``, the file's SHA-256 must start with it (PyTorch's
    RuntimeError otherwise, and ``dst`` is left as it was). ``timeout``: seconds for any one network wait.
    ``progress`` is accepted (no bar is drawn)."""
    dst = os.path.expanduser(os.fspath(dst))
    request = urllib.request.Request(url, headers={"User-Agent": "minitensor.hub"})
    sha256 = hashlib.sha256() if hash_prefix is not None else None
    try:
        with atomic_write(dst) as out, urllib.request.urlopen(request, timeout=timeout) as response:
            while chunk := response.read(_CHUNK):
                out.write(chunk)
                if sha256 is not None:
                    sha256.update(chunk)
            if sha256 is not None and hash_prefix is not None:
                digest = sha256.hexdigest()
                if digest[:len(hash_prefix)] != hash_prefix:
                    raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
    except urllib.error.HTTPError as e:  # the URL in the message: urllib's says only "HTTP Error 404"
        raise urllib.error.HTTPError(url, e.code, f"{e.reason} ({url})", e.headers, None) from e
    except urllib.error.URLError as e:
        raise urllib.error.URLError(f"could not download {url} to {dst}: {e.reason}") from e
    except TimeoutError as e:
        raise TimeoutError(f"could not download {url} to {dst}: no data for {timeout:g} s") from e


def _is_legacy_zip(path: str) -> bool:
    """PyTorch's old checkpoints zipped alone: one plain member, not a torch.save archive."""
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as z:
        members = z.infolist()
    return len(members) == 1 and not members[0].is_dir()


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location: Any = None,
                             progress: bool = True, check_hash: bool = False, file_name: str | None = None,
                             weights_only: bool | None = None) -> Any:
    """``minitensor.load`` of the file at ``url``, downloaded once into ``model_dir`` (default
    ``get_dir()/checkpoints``) under ``file_name`` or the URL's name. ``check_hash``: the name's
    ``-<hex>.`` part must prefix the file's SHA-256. ``weights_only``: ``minitensor.load``'s (None: True)."""
    from .serialization import load as _load
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached = os.path.join(model_dir, filename)
    if not os.path.exists(cached):
        sys.stdout.write(f'Downloading: "{url}" to {cached}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        download_url_to_file(url, cached, match.group(1) if match else None, progress=progress)
    if _is_legacy_zip(cached):
        with zipfile.ZipFile(cached) as z:
            member = z.infolist()[0].filename
            z.extractall(model_dir)
        cached = os.path.join(model_dir, member)
    return _load(cached, map_location=map_location, weights_only=weights_only)


def _local_hubconf(repo_or_dir: str, source: str, what: str) -> ModuleType:
    """The ``hubconf.py`` of a local folder, imported with the folder on ``sys.path`` (its own imports)."""
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        raise NotImplementedError(f"minitensor.hub.{what}: loading from GitHub ({repo_or_dir!r}) is not supported "
                                  "(minitensor downloads no code); clone the repository and pass its folder with "
                                  "source='local'")
    path = os.path.join(os.path.expanduser(repo_or_dir), "hubconf.py")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no hubconf.py in {repo_or_dir}")
    spec = importlib.util.spec_from_file_location("hubconf", path)
    assert spec is not None and spec.loader is not None  # a .py path always has a loader
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(path))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(os.path.dirname(path))
    missing = [d for d in getattr(module, "dependencies", []) if importlib.util.find_spec(d) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return module


def _entry(module: ModuleType, model: str) -> Callable[..., Any]:
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    func = getattr(module, model, None)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def load(repo_or_dir: str, model: str, *args: Any, source: str = "github", trust_repo: Any = "check",
         force_reload: bool = False, verbose: bool = True, skip_validation: bool = False, **kwargs: Any) -> Any:
    """``model(*args, **kwargs)``, the entry point of ``repo_or_dir``'s ``hubconf.py`` (``source="local"``)."""
    return _entry(_local_hubconf(repo_or_dir, source, "load"), model)(*args, **kwargs)


def list(github: str, force_reload: bool = False, skip_validation: bool = False, trust_repo: Any = "check",
         verbose: bool = True, *, source: str = "github") -> builtins.list[str]:
    """The entry points (public callables) of a local folder's ``hubconf.py`` (``source="local"``)."""
    module = _local_hubconf(github, source, "list")
    return [name for name in dir(module) if callable(getattr(module, name)) and not name.startswith("_")]


def help(github: str, model: str, force_reload: bool = False, skip_validation: bool = False,
         trust_repo: Any = "check", *, source: str = "github") -> str | None:
    """The docstring of an entry point of a local folder's ``hubconf.py`` (``source="local"``)."""
    return _entry(_local_hubconf(github, source, "help"), model).__doc__
