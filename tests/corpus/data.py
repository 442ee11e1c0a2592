"""Data the corpus programs read from their working folder, made locally (their own scripts download)."""
from __future__ import annotations

import importlib.util
import pickle
import tarfile
from pathlib import Path

import numpy as np


PLAY = "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n"


def char_text(cwd: Path) -> None:
    """minGPT's chargpt reads input.txt (there: tinyshakespeare) and prompts with "O God, O God!"."""
    (cwd / "input.txt").write_text((PLAY + "\nHAMLET:\nO God, O God!\n") * 100)


def shakespeare_char(cwd: Path) -> None:
    """nanoGPT's data/shakespeare_char (train.bin, val.bin, meta.pkl), as its prepare.py writes them, from a
    short play-like text repeated (prepare.py downloads tinyshakespeare)."""
    text = PLAY * 200
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


def wikitext2(cwd: Path, words: int = 6000) -> None:
    """pytorch/examples' word_language_model data: data/wikitext-2/{train,valid,test}.txt, lines of words
    (there: WikiText-2, downloaded), here sentences drawn from a small fixed grammar so that a few steps
    learn something; valid and test are a tenth of train each."""
    rng = np.random.default_rng(0)
    nouns, verbs = ["cat", "dog", "king", "river", "city", "ship"], ["sees", "likes", "follows", "finds"]
    adjs = ["old", "red", "quiet", "large"]
    out = cwd / "data" / "wikitext-2"
    out.mkdir(parents=True)
    for name, n in (("train", words), ("valid", words // 10), ("test", words // 10)):
        lines, count = [], 0
        while count < n:
            s = ["the", str(rng.choice(adjs)), str(rng.choice(nouns)), str(rng.choice(verbs)), "a",
                 str(rng.choice(nouns)), "."]
            lines.append(" " + " ".join(s) + " ")
            count += len(s) + 1
        (out / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf8")


def ptb_like(cwd: Path) -> None:
    """yunjey/pytorch-tutorial's language model reads data/train.txt (there: Penn Treebank): the same
    grammar's sentences as ``wikitext2``, 3,000 words."""
    wikitext2(cwd, words=3000)
    (cwd / "data" / "wikitext-2" / "train.txt").rename(cwd / "data" / "train.txt")


def cora(cwd: Path) -> None:
    """data/cora/cora.{content,cites} as pyGAT keeps them (there: the real Cora): the synthetic Cora the
    requests stand-in serves to pytorch/examples' gcn and gat, with 1,600 nodes: enough for pyGAT's fixed
    train/val/test ranges (up to node 1,500), and its dense attention (nodes x nodes) stays small."""
    spec = importlib.util.spec_from_file_location("corpus_requests", Path(__file__).parent / "standins" / "requests.py")
    assert spec is not None and spec.loader is not None
    requests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(requests)
    with tarfile.open(fileobj=requests._cora_tgz(n=1600), mode="r:gz") as tgz:
        tgz.extractall(cwd / "data", filter="data")


def mnist_pickle(cwd: Path, n: int = 1024) -> None:
    """pytorch/tutorials' nn_tutorial reads data/mnist/mnist.pkl.gz (there: downloaded), the pickled
    ((x_train, y_train), (x_valid, y_valid), (x_test, y_test)) of float32 rows of 784 pixels in [0, 1] and int64
    labels; here ``n`` training images of ten fixed templates plus noise (learnable in a few steps), n / 4
    for validation and test."""
    import gzip
    templates = np.random.default_rng(0).random((10, 784)) < 0.25

    def split(count: int, seed: int) -> tuple:
        rng = np.random.default_rng(seed)
        y = rng.integers(0, 10, count)
        x = (templates[y] ^ (rng.random((count, 784)) < 0.05)).astype(np.float32)
        return x, y.astype(np.int64)

    out = cwd / "data" / "mnist"
    out.mkdir(parents=True)
    with gzip.open(out / "mnist.pkl.gz", "wb") as f:
        pickle.dump((split(n, 1), split(n // 4, 2), split(n // 4, 3)), f)


def sine_waves(cwd: Path, n: int = 13, length: int = 100) -> None:
    """pytorch/examples' time_sequence_prediction reads traindata.pt, which its generate_sine_wave.py writes with
    ``torch.save`` (100 waves of 1,000 steps): here ``n`` waves of ``length`` steps, drawn the same way, in
    torch.save's zip layout (a pickled float64 NumPy array, no storages), so that either framework loads it."""
    import zipfile
    rng = np.random.RandomState(2)
    x = np.arange(length) + rng.randint(-80, 80, n).reshape(n, 1)
    data = np.sin(x / 1.0 / 20).astype("float64")
    with zipfile.ZipFile(cwd / "traindata.pt", "w", zipfile.ZIP_STORED) as z:
        z.writestr("traindata/data.pkl", pickle.dumps(data, protocol=2))
        z.writestr("traindata/byteorder", "little")
        z.writestr("traindata/version", "3\n")


def bsds300(cwd: Path, train: int = 8, test: int = 4, size: int = 256) -> None:
    """pytorch/examples' super_resolution reads dataset/BSDS300/images/{train,test}/*.jpg (there: BSDS300,
    downloaded unless that folder exists): here smooth random RGB images (a few low-frequency waves per
    channel), ``size`` square, so that upscaling them is learnable in a few steps."""
    from PIL import Image
    rng = np.random.default_rng(0)
    yy, xx = np.mgrid[0:size, 0:size] / size
    for split, count in (("train", train), ("test", test)):
        out = cwd / "dataset" / "BSDS300" / "images" / split
        out.mkdir(parents=True)
        for i in range(count):
            f = rng.uniform(1, 6, (3, 2, 3))  # per channel: three waves' x and y frequencies
            phase = rng.uniform(0, 2 * np.pi, (3, 3))
            img = sum(np.sin(2 * np.pi * (f[:, 0, k, None, None] * xx + f[:, 1, k, None, None] * yy)
                             + phase[:, k, None, None]) for k in range(3))
            rgb = ((img / 6 + 0.5) * 255).clip(0, 255).astype(np.uint8).transpose(1, 2, 0)
            Image.fromarray(rgb).save(out / f"{i}.jpg", quality=95)


def eng_fra(cwd: Path) -> None:
    """pytorch/tutorials' seq2seq translation reads data/eng-fra.txt (there: 135,842 tab-separated English / French
    pairs, downloaded): here 36 pairs of a small fixed grammar (subject and adjective), a few lines its filter drops
    (no "i am"-like English prefix), and pairs that hold every word of the four French sentences it translates at
    its end (those sentences themselves are 10 words long with their full stop, over its filter's 9)."""
    subjects = [("I am", "Je suis"), ("He is", "Il est"), ("She is", "Elle est"), ("We are", "Nous sommes"),
                ("You are", "Vous êtes"), ("They are", "Ils sont")]
    adjectives = [("cold", "froid"), ("tired", "fatigué"), ("happy", "heureux"), ("late", "en retard"),
                  ("tall", "grand"), ("ready", "prêt")]
    lines = [f"{e} {ea}.\t{f} {fa}." for e, f in subjects for ea, fa in adjectives]
    lines += ["Go.\tVa !", "Run!\tCours !", "Who?\tQui ?",
              "He isn't tall.\tIl n'est pas grand.", "He is as tall as his father.\tIl est aussi grand que son père.",
              "I'm too tired to drive.\tJe suis trop fatigué pour conduire.",
              "I'm sorry if it is a question.\tJe suis désolé si c'est une question.",
              "She is stupid.\tElle est idiote.",
              "I'm really proud of you.\tJe suis réellement fière de vous."]
    (cwd / "data").mkdir(parents=True, exist_ok=True)
    (cwd / "data" / "eng-fra.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def names(cwd: Path, per_language: int = 40) -> None:
    """pytorch/tutorials' char-RNN classification reads data/names/[Language].txt (there: 20,074 surnames of 18
    languages, downloaded): here ``per_language`` made-up surnames for each of four languages, each language
    its own syllables (and accents, which the tutorial strips to ASCII), so that a few epochs tell them apart."""
    rng = np.random.default_rng(0)
    syllables = {"Italian": ["ri", "ni", "lo", "cci", "ta", "ello"],
                 "Polish": ["ski", "wicz", "ł", "cz", "ow", "ak"],
                 "Japanese": ["ka", "shi", "mo", "to", "ya", "su"],
                 "Scottish": ["mac", "gor", "don", "ald", "mc", "ie"]}
    out = cwd / "data" / "names"
    out.mkdir(parents=True)
    for language, parts in syllables.items():
        words = ["".join(rng.choice(parts, rng.integers(2, 4))).capitalize() for _ in range(per_language)]
        (out / f"{language}.txt").write_text("\n".join(words) + "\n", encoding="utf-8")


def gutenberg_books(cwd: Path, books: int = 2, repeats: int = 12) -> None:
    """rasbt/LLMs-from-scratch's pretraining_simple.py trains on the .txt files under gutenberg/data (there:
    Project Gutenberg's books, which its prepare_dataset.py downloads and joins): here ``books`` short files of
    the play-like text, one a nested folder down, as os.walk finds them."""
    for k in range(books):
        out = cwd / "gutenberg" / "data" / ("" if k == 0 else f"part_{k}")
        out.mkdir(parents=True, exist_ok=True)
        (out / f"book_{k}.txt").write_text(PLAY * repeats, encoding="utf-8")


def tinystories_shards(cwd: Path, vocab_size: int = 64, shards: int = 3, tokens: int = 4096) -> None:
    """karpathy/llama2.c's train.py with ``vocab_source=custom`` reads data/tok{vocab_size}/*.bin, uint16 token ids
    that tinystories.py writes after training a SentencePiece vocabulary on TinyStories (downloaded): here
    ``shards`` files of ``tokens`` ids each (shard 0 is its validation split), sentences of a small fixed grammar
    over ids below ``vocab_size``, each opened by BOS (1) as its pretokenize stage does, so that a few steps learn."""
    rng = np.random.default_rng(0)
    subjects, verbs, objects = np.arange(3, 13), np.arange(13, 23), np.arange(23, vocab_size)
    out = cwd / "data" / f"tok{vocab_size}"
    out.mkdir(parents=True)
    for k in range(shards):
        ids: list[int] = []
        while len(ids) < tokens:
            s = int(rng.choice(subjects))
            ids += [1, s, int(verbs[s % len(verbs)]), int(rng.choice(objects)), 2]
        np.array(ids[:tokens], dtype=np.uint16).tofile(out / f"data{k:02d}.bin")


def llmc_tinyshakespeare(cwd: Path) -> None:
    """karpathy/llm.c's train_gpt2.py reads dev/data/tinyshakespeare/tiny_shakespeare_{train,val}.bin, which its
    dev/data/tinyshakespeare.py writes (tinyshakespeare, downloaded, in GPT-2 tokens): a header of 256 int32
    (magic 20240520, version 1, the token count), then the uint16 tokens. Here the play-like text, in the
    tiktoken stand-in's GPT-2 byte tokens, each scene opened by <|endoftext|> as that script does."""
    spec = importlib.util.spec_from_file_location("corpus_tiktoken", Path(__file__).parent / "standins" / "tiktoken.py")
    assert spec is not None and spec.loader is not None
    tiktoken = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tiktoken)
    enc = tiktoken.get_encoding("gpt2")
    out = cwd / "dev" / "data" / "tinyshakespeare"
    out.mkdir(parents=True)
    for split, repeats in (("val", 4), ("train", 20)):
        ids = [t for _ in range(repeats) for t in [enc.eot_token, *enc.encode_ordinary(PLAY)]]
        header = np.zeros(256, dtype=np.int32)
        header[:3] = (20240520, 1, len(ids))
        with open(out / f"tiny_shakespeare_{split}.bin", "wb") as f:
            f.write(header.tobytes())
            f.write(np.array(ids, dtype=np.uint16).tobytes())
