"""Fetch a file from a list of mirrors into a cache folder, checked against its md5.

Each mirror is tried in order; a download goes to a temporary file in the destination folder and is
renamed into place only when its md5 matches, so the cache never holds a partial or wrong file. Each
attempt is bounded three ways: ``timeout`` for any single network wait, ``deadline`` for the whole
attempt (a watchdog shuts the connection when it passes, so a server that drips bytes, in its headers or
its body, cannot hold the download), and ``max_bytes`` for the size (a server sending more is cut off).
"""
from __future__ import annotations

import hashlib
import http.client
import os
import socket
import threading
import urllib.request
from pathlib import Path
from typing import Any, Sequence

from ..utils._files import atomic_write

_CHUNK = 1 << 20


class DownloadError(RuntimeError):
    """Every mirror failed; the message lists why for each and what to do instead."""


def download_file(filename: str, mirrors: Sequence[str], md5: str, dest_dir: str | os.PathLike,
                  timeout: float = 30.0, *, deadline: float = 600.0, max_bytes: int | None = None) -> Path:
    """Download ``mirror + filename`` from the first mirror that serves it with the right md5, within
    ``deadline`` seconds per mirror and at most ``max_bytes`` bytes (None: no cap).

    Returns the final path ``dest_dir / filename``; raises ``DownloadError`` when no mirror works.
    """
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    failures = []
    for mirror in mirrors:
        url = mirror.rstrip("/") + "/" + filename
        try:
            return _fetch_verified(url, md5, dest_dir / filename, timeout, deadline, max_bytes)
        except (OSError, ValueError, http.client.HTTPException) as e:  # URLError is an OSError
            failures.append(f"  {url}: {e}")
    raise DownloadError(f"could not download {filename} (md5 {md5}) from any mirror:\n" + "\n".join(failures)
                        + f"\nDownload it yourself and put it in {dest_dir}.")


def _fetch_verified(url: str, md5: str, dest: Path, timeout: float, deadline: float,
                    max_bytes: int | None) -> Path:
    """Stream ``url`` into a temporary file beside ``dest``; it becomes ``dest`` only if the md5 matches."""
    digest = hashlib.md5(usedforsecurity=False)
    watchdog = _Watchdog(deadline)
    try:
        with atomic_write(dest) as out, watchdog.opener().open(url, timeout=min(timeout, deadline)) as response:
            declared = response.headers.get("Content-Length", "")
            if max_bytes is not None and declared.isdigit() and int(declared) > max_bytes:
                raise ValueError(f"the server offers {declared} bytes; the file has {max_bytes}")
            received = 0
            while chunk := response.read(_CHUNK):
                received += len(chunk)
                if max_bytes is not None and received > max_bytes:
                    raise ValueError(f"the server sent more than the file's {max_bytes} bytes")
                digest.update(chunk)
                out.write(chunk)
            if watchdog.expired:  # the shut connection can look like a short, complete body
                raise TimeoutError
            if digest.hexdigest() != md5:
                raise ValueError(f"md5 mismatch: got {digest.hexdigest()}, expected {md5}")
    except (OSError, http.client.HTTPException) as e:
        if watchdog.expired:
            raise TimeoutError(f"not complete within the {deadline:g} s deadline") from e
        raise
    finally:
        watchdog.cancel()
    return dest


class _Watchdog:
    """Shuts every connection an opener makes once ``seconds`` have passed since it was created."""

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._sockets:
                _shut(sock)

    def _watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock)
            if self.expired:
                _shut(sock)

    def cancel(self) -> None:
        self._timer.cancel()

    def opener(self) -> urllib.request.OpenerDirector:
        """urllib's opener (redirects, proxies, HTTPS as usual) whose connections the watchdog can shut."""
        watch = self._watch

        def watched(connection_class: type) -> type:
            class Watched(connection_class):
                def connect(self) -> None:
                    super().connect()
                    watch(self.sock)
            return Watched

        class HTTP(urllib.request.HTTPHandler):
            def do_open(self, http_class: Any, req: Any, **kw: Any) -> Any:
                return super().do_open(watched(http_class), req, **kw)  # type: ignore[arg-type]

        class HTTPS(urllib.request.HTTPSHandler):
            def do_open(self, http_class: Any, req: Any, **kw: Any) -> Any:
                return super().do_open(watched(http_class), req, **kw)  # type: ignore[arg-type]
        return urllib.request.build_opener(HTTP, HTTPS)


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)  # wakes a read blocked on it, in any thread
    except OSError:
        pass
