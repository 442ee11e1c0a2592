"""MNIST and Fashion-MNIST from their IDX files, found locally or downloaded from mirrors.

``root`` defaults to ``$MINITENSOR_DATA``, else ``~/.cache/minitensor``. Each file is looked for, as
``NAME.gz`` then ``NAME``, in the class's ``folders`` under root (MNIST: ``root/MNIST/raw``,
``root/mnist``, ``root`` itself; FashionMNIST: ``root/FashionMNIST/raw``, ``root/fashion-mnist``);
``download=True`` fetches the missing ones into the first of them.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Sequence, TypeVar

import numpy as np

from ..creation import from_numpy
from ._images import ImageClassificationDataset, Transform, fixed_split_rows
from .download import download_file
from .idx import IDXFormatError, read_idx

# The four IDX files, the same names for MNIST and Fashion-MNIST.
_FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
          "t10k-labels-idx1-ubyte.gz")
T = TypeVar("T")


def _per_file(*values: T) -> dict[str, T]:
    """{file name: value} for one value per file of _FILES, in its order."""
    return dict(zip(_FILES, values, strict=True))


def default_root() -> Path:
    """``$MINITENSOR_DATA`` if set, else ``~/.cache/minitensor``."""
    return Path(os.environ.get("MINITENSOR_DATA") or Path.home() / ".cache" / "minitensor").expanduser()


class MNIST(ImageClassificationDataset):
    """The MNIST digits: 60,000 training and 10,000 test images, 28x28 (see ImageClassificationDataset
    for items, ``data``, ``targets`` and ``tensors()``).

    ``mirrors`` (a class attribute, or the keyword argument for one instance) are tried in order; every
    download is checked against the official md5 in ``resources``, cut off past the official size in
    ``sizes``, and given ``download_deadline`` seconds per mirror.
    """

    mirrors: Sequence[str] = ("https://ossci-datasets.s3.amazonaws.com/mnist/",
                              "https://storage.googleapis.com/cvdf-datasets/mnist/")
    # file name: its official md5, and its size in bytes (a download is cut off past it)
    resources: dict[str, str] = _per_file("f68b3c2dcbeaaa9fbdd348bbdeb94873", "d53e105ee54ea40749a09fcbcd1e9432",
                                          "9fb629c4189551a2d022fa330f9573f3", "ec29112dd5afa0611ce80d1b7f02629c")
    sizes: dict[str, int] = _per_file(9912422, 28881, 1648877, 4542)
    folders: Sequence[str] = ("MNIST/raw", "mnist", ".")
    download_timeout: float = 30.0  # seconds of silence before a mirror is given up
    download_deadline: float = 600.0  # seconds for a whole file from one mirror
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five", "6 - six",
               "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root: str | os.PathLike | None = None, train: bool = True,
                 transform: Transform | None = None, target_transform: Transform | None = None,
                 download: bool = False, *, mirrors: Sequence[str] | None = None) -> None:
        self.root = default_root() if root is None else Path(root).expanduser()
        self.train = train
        if mirrors is not None:
            self.mirrors = tuple(mirrors)
        prefix = "train" if train else "t10k"
        images_path, labels_path = self._locate([f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"],
                                                download)
        images, labels = read_idx(images_path), read_idx(labels_path)
        _check_images_and_labels(images, labels, images_path, labels_path)
        super().__init__(images, labels, transform, target_transform)

    def _locate(self, stems: list[str], download: bool) -> list[Path]:
        """The path of each file (``stem.gz`` or ``stem``), downloading missing ones when allowed."""
        dirs = [self.root / folder for folder in self.folders]
        found = {stem: _first_existing(dirs, stem) for stem in stems}
        missing = [stem for stem, path in found.items() if path is None]
        if missing and not download:
            raise FileNotFoundError(
                f"{type(self).__name__}: missing {', '.join(s + '(.gz)' for s in missing)}; looked in "
                f"{', '.join(str(d) for d in dirs)}. Put the files in one of these folders (or set "
                f"MINITENSOR_DATA to a folder holding them), or pass download=True.")
        for stem in missing:
            name = stem + ".gz"
            found[stem] = download_file(name, self.mirrors, self.resources[name], dirs[0],
                                        timeout=self.download_timeout, deadline=self.download_deadline,
                                        max_bytes=self.sizes.get(name))
        return [found[stem] for stem in stems]  # type: ignore[misc]


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST: the same format and sizes as MNIST, ten kinds of clothing.

    md5s and sizes: the official ones published with the dataset (github.com/zalandoresearch/fashion-mnist;
    the md5s are also torchvision's).
    """

    mirrors: Sequence[str] = ("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
                              "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/")
    resources: dict[str, str] = _per_file("8d4fb7e6c68d591d4c3dfef9ec88bf0d", "25c81989df183df01b3e8a0aad5dffbe",
                                          "bef4ecab320f06d8554ea6380940ec79", "bb300cfdad3c16e7a12a480ee83cd310")
    sizes: dict[str, int] = _per_file(26421880, 29515, 4422102, 5148)
    folders: Sequence[str] = ("FashionMNIST/raw", "fashion-mnist")
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]


def mnist_test_split(root: str | os.PathLike | None = None, train: bool = True,
                     transform: Transform | None = None, target_transform: Transform | None = None,
                     download: bool = False) -> MNIST:
    """MNIST made from the official test split alone (for when only its 10,000 images are at hand):
    ``np.random.default_rng(0).permutation(10000)``, first 8,000 to train, the other 2,000 to test."""
    dataset = MNIST(root, train=False, transform=transform, target_transform=target_transform,
                    download=download)
    rows = fixed_split_rows(len(dataset), train)
    dataset.data = from_numpy(dataset.data.numpy()[rows])
    dataset.targets = from_numpy(dataset.targets.numpy()[rows])
    dataset.train = train
    return dataset


def _first_existing(dirs: list[Path], stem: str) -> Path | None:
    for d in dirs:
        for name in (stem + ".gz", stem):
            if (d / name).is_file():
                return d / name
    return None


def _check_images_and_labels(images: np.ndarray, labels: np.ndarray, images_path: Path,
                             labels_path: Path) -> None:
    """Refuse files that parse as IDX but do not hold (N, 28, 28) uint8 images and N labels in 0..9."""
    if images.ndim != 3 or images.shape[1:] != (28, 28) or images.dtype != np.uint8:
        raise IDXFormatError(f"{images_path}: expected uint8 images of shape (N, 28, 28), found "
                             f"{images.dtype} {images.shape}")
    if labels.ndim != 1 or labels.dtype != np.uint8 or (labels.size and labels.max() > 9):
        raise IDXFormatError(f"{labels_path}: expected N uint8 labels in 0..9, found {labels.dtype} "
                             f"{labels.shape} with maximum {labels.max() if labels.size else None}")
    if len(images) != len(labels):
        raise IDXFormatError(f"{images_path} holds {len(images)} images but {labels_path} holds "
                             f"{len(labels)} labels")
