"""requests stand-in for pytorch/examples' gcn: ``get(cora_url, stream=True)`` answers with a small
synthetic Cora (cora/cora.content: id, 64 binary words, label; cora/cora.cites: id pairs) as a .tgz,
generated here: two-community graph whose words hint at the label, learnable in a few epochs."""
import io
import tarfile

import numpy as np


def _cora_tgz(n=2000, words=64, classes=3):
    g = np.random.default_rng(0)
    labels = g.integers(0, classes, n)
    hint = (np.arange(words) % classes == labels[:, None]) & (g.random((n, words)) < 0.3)
    feats = (g.random((n, words)) < 0.05) | hint
    ids = np.arange(100, 100 + n)
    content = "".join(f"{i}\t" + "\t".join(map(str, f.astype(int))) + f"\tclass_{c}\n"
                      for i, f, c in zip(ids, feats, labels))
    src = g.integers(0, n, 4 * n)
    members = [np.flatnonzero(labels == c) for c in range(classes)]
    dst = np.array([g.choice(members[labels[a]]) if g.random() < 0.9 else g.integers(0, n) for a in src])
    cites = "".join(f"{ids[a]}\t{ids[b]}\n" for a, b in zip(src, dst) if a != b)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in (("cora/cora.content", content), ("cora/cora.cites", cites)):
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    buf.seek(0)
    return buf


class _Response:
    def __init__(self, raw):
        self.raw = raw

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def get(url, stream=False, **kwargs):
    if "cora" not in url:
        raise ConnectionError(f"requests stand-in: offline, no {url}")
    return _Response(_cora_tgz())
