"""sentencepiece stand-in: llama2.c's tokenizer.py imports ``SentencePieceProcessor`` at the top (tinystories.py,
which train.py imports, imports both), but training reads pretokenized shards and never builds a tokenizer; using
either class says it is a stand-in (the real ones load or train a .model file)."""


class SentencePieceProcessor:
    def __init__(self, *args, **kwargs):
        raise RuntimeError("sentencepiece stand-in: no SentencePiece model can be loaded offline")


class SentencePieceTrainer:
    @staticmethod
    def train(*args, **kwargs):
        raise RuntimeError("sentencepiece stand-in: no SentencePiece training offline")
