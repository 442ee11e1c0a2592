"""tiktoken stand-in: nanoGPT's sample.py imports it at the top but uses it only for GPT-2 checkpoints (the
char-level run reads meta.pkl), so importing suffices; asking for an encoding says it is a stand-in."""


def get_encoding(name):
    raise RuntimeError(f"tiktoken stand-in: no BPE encoding {name!r} offline")
