"""Fetch a file from a list of mirrors into a cache folder, checked against its md5.

Each mirror is tried in order; a download goes to a temporary file in the destination folder and is
renamed into place only when its md5 matches, so the cache never holds a partial or wrong file.
"""
from __future__ import annotations

import hashlib
import http.client
import os
import urllib.request
from pathlib import Path
from typing import Sequence

from ..utils._files import atomic_write

_CHUNK = 1 << 20


class DownloadError(RuntimeError):
    """Every mirror failed; the message lists why for each and what to do instead."""


def download_file(filename: str, mirrors: Sequence[str], md5: str, dest_dir: str | os.PathLike,
                  timeout: float = 30.0) -> Path:
    """Download ``mirror + filename`` from the first mirror that serves it with the right md5.

    Returns the final path ``dest_dir / filename``; raises ``DownloadError`` when no mirror works.
    """
    dest_dir = Path(dest_dir)
    dest_dir.mkdir(parents=True, exist_ok=True)
    failures = []
    for mirror in mirrors:
        url = mirror.rstrip("/") + "/" + filename
        try:
            return _fetch_verified(url, md5, dest_dir / filename, timeout)
        except (OSError, ValueError, http.client.HTTPException) as e:  # URLError is an OSError
            failures.append(f"  {url}: {e}")
    raise DownloadError(f"could not download {filename} (md5 {md5}) from any mirror:\n" + "\n".join(failures)
                        + f"\nDownload it yourself and put it in {dest_dir}.")


def _fetch_verified(url: str, md5: str, dest: Path, timeout: float) -> Path:
    """Stream ``url`` into a temporary file beside ``dest``; it becomes ``dest`` only if the md5 matches."""
    digest = hashlib.md5(usedforsecurity=False)
    with atomic_write(dest) as out, urllib.request.urlopen(url, timeout=timeout) as response:
        while chunk := response.read(_CHUNK):
            digest.update(chunk)
            out.write(chunk)
        if digest.hexdigest() != md5:
            raise ValueError(f"md5 mismatch: got {digest.hexdigest()}, expected {md5}")
    return dest
