"""tiktoken stand-in: GPT-2's encoding ("gpt2", "r50k_base") without its 50,000 merges, which tiktoken downloads.

Text encodes byte by byte to GPT-2's 256 byte tokens (their ids in GPT-2's vocabulary: the order of its
``bytes_to_unicode`` table) and ``<|endoftext|>`` to 50256, so ids and vocabulary size are GPT-2's and
``decode(encode(text)) == text``; the ids a merge would stand for (256-50255) decode to U+FFFD, as tiktoken's
``errors="replace"`` does for bytes it cannot decode. nanoGPT's sample.py imports it for GPT-2 checkpoints only;
rasbt/LLMs-from-scratch's GPTs tokenize their prompts and training text with it."""
from __future__ import annotations

from collections.abc import Collection
from typing import Literal

EOT = "<|endoftext|>"


def _byte_order() -> list[int]:
    """GPT-2's bytes_to_unicode order: the printable Latin-1 bytes first, then the other 68 in order."""
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    return printable + [b for b in range(256) if b not in printable]


_ID_TO_BYTE = _byte_order()
_BYTE_TO_ID = {b: i for i, b in enumerate(_ID_TO_BYTE)}


class Encoding:
    """An encoding of GPT-2's ids: bytes and <|endoftext|> only (no merges)."""

    def __init__(self, name: str):
        self.name = name
        self.n_vocab = 50257
        self.eot_token = 50256
        self.special_tokens_set = {EOT}

    def encode(self, text: str, *, allowed_special: Literal["all"] | Collection[str] = frozenset(),
               disallowed_special: Literal["all"] | Collection[str] = "all") -> list[int]:
        allowed = self.special_tokens_set if allowed_special == "all" else set(allowed_special)
        disallowed = self.special_tokens_set - allowed if disallowed_special == "all" else set(disallowed_special)
        if EOT in disallowed and EOT in text:  # tiktoken's check and message
            raise ValueError(f"Encountered text corresponding to disallowed special token {EOT!r}.\n")
        parts = text.split(EOT) if EOT in allowed else [text]
        ids: list[int] = []
        for k, part in enumerate(parts):
            if k:
                ids.append(self.eot_token)
            ids += [_BYTE_TO_ID[b] for b in part.encode("utf-8")]
        return ids

    def encode_ordinary(self, text: str) -> list[int]:
        return [_BYTE_TO_ID[b] for b in text.encode("utf-8")]

    def decode_bytes(self, tokens: list[int]) -> bytes:
        out = bytearray()
        for t in tokens:
            if t < 256:
                out.append(_ID_TO_BYTE[t])
            elif t == self.eot_token:
                out += EOT.encode()
            else:  # a merged token: its bytes are in the merges this stand-in lacks
                out += "\ufffd".encode()
        return bytes(out)

    def decode(self, tokens: list[int], errors: str = "replace") -> str:
        return self.decode_bytes(tokens).decode("utf-8", errors=errors)


def get_encoding(name: str) -> Encoding:
    if name not in ("gpt2", "r50k_base"):
        raise ValueError(f"tiktoken stand-in: no BPE encoding {name!r} offline (only GPT-2's bytes)")
    return Encoding(name)


def encoding_for_model(model_name: str) -> Encoding:
    return get_encoding("gpt2")
