"""In-memory image classification data: the shared body of MNIST, FashionMNIST and Digits."""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ..tensor import Tensor
from ..creation import from_numpy
from ..utils.data.dataset import BatchFetcher, Dataset

Transform = Callable[[Any], Any]


class ImageClassificationDataset(Dataset[tuple]):
    """Grey images of integer pixels in [0, pixel_max] with int64 labels.

    Attributes, as in torchvision: ``data``, a uint8 Tensor (N, H, W); ``targets``, an int64 Tensor (N,).
    Items are ``(image, label)``: ``image`` is a float32 Tensor (1, H, W) equal to pixels / pixel_max (so
    in [0, 1]); with a ``transform``, the transform instead receives a fresh uint8 Tensor (1, H, W) of the
    raw pixels and its result is the image. ``label`` is a Python int, or ``target_transform(label)``.
    Without transforms, the DataLoader builds whole batches at once (``batch_fetcher``).
    """

    pixel_max: int = 255

    def __init__(self, images: np.ndarray, labels: np.ndarray, transform: Transform | None = None,
                 target_transform: Transform | None = None) -> None:
        self.data: Tensor = from_numpy(np.ascontiguousarray(images, dtype=np.uint8))
        self.targets: Tensor = from_numpy(np.asarray(labels, dtype=np.int64))
        self.transform = transform
        self.target_transform = target_transform

    def __len__(self) -> int:
        return self.data.shape[0]

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        i = operator.index(index)
        pixels = self.data.numpy()[i][None]  # (1, H, W) uint8
        label = int(self.targets.numpy()[i])
        if self.transform is not None:
            image = self.transform(from_numpy(pixels.copy()))  # a copy: the transform may write into it
        else:
            image = from_numpy(self._to_unit_float(pixels))
        if self.target_transform is not None:
            label = self.target_transform(label)
        return image, label

    def tensors(self, normalize: bool = True) -> tuple[Tensor, Tensor]:
        """All images (N, 1, H, W) and labels (N,) int64, for training loops that slice batches themselves.

        ``normalize=True``: float32 pixels / pixel_max in [0, 1], as the items; ``False``: the uint8
        pixels (a view of ``data``). The labels are ``targets`` itself.
        """
        pixels = self.data.numpy()[:, None]
        images = self._to_unit_float(pixels) if normalize else pixels
        return from_numpy(images), self.targets

    def batch_fetcher(self) -> BatchFetcher | None:
        """Whole batches at once, only without transforms (they are defined per item)."""
        if self.transform is not None or self.target_transform is not None:
            return None
        return self._take

    def _take(self, indices: np.ndarray) -> list[Tensor]:
        pixels = self.data.numpy()[indices][:, None]
        return [from_numpy(self._to_unit_float(pixels)), from_numpy(self.targets.numpy()[indices])]

    def _to_unit_float(self, pixels: np.ndarray) -> np.ndarray:
        """pixels / pixel_max in float32 (one expression for items and batches, so they agree bit for bit)."""
        out = pixels.astype(np.float32)
        out /= np.float32(self.pixel_max)
        return out

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n={len(self)}, image shape {tuple(self.data.shape[1:])})"


def fixed_split_rows(n: int, train: bool, seed: int = 0) -> np.ndarray:
    """Rows of a fixed 80/20 split of n samples: ``np.random.default_rng(seed).permutation(n)``, whose
    first ``n * 4 // 5`` entries are the training rows and the rest the test rows (in permuted order)."""
    order = np.random.default_rng(seed).permutation(n)
    cut = n * 4 // 5
    return order[:cut] if train else order[cut:]
