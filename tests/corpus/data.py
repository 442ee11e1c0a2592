"""Data the corpus programs read from their working folder, made locally (their own scripts download)."""
from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np


def shakespeare_char(cwd: Path) -> None:
    """nanoGPT's data/shakespeare_char (train.bin, val.bin, meta.pkl), as its prepare.py writes them, from a
    short play-like text repeated (prepare.py downloads tinyshakespeare)."""
    text = "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n" * 200
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    ids = np.array([stoi[c] for c in text], dtype=np.uint16)
    out = cwd / "data" / "shakespeare_char"
    out.mkdir(parents=True)
    n = int(0.9 * len(ids))
    ids[:n].tofile(out / "train.bin")
    ids[n:].tofile(out / "val.bin")
    with open(out / "meta.pkl", "wb") as f:
        pickle.dump({"vocab_size": len(chars), "itos": dict(enumerate(chars)), "stoi": stoi}, f)
