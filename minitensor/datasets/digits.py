"""scikit-learn's bundled 8x8 handwritten digits (1,797 images), split 80/20 by a fixed permutation."""
from __future__ import annotations

from ._images import ImageClassificationDataset, Transform, fixed_split_rows


class Digits(ImageClassificationDataset):
    """``sklearn.datasets.load_digits``: pixels 0..16, so items are float32 (1, 8, 8) images / 16.

    ``train=True`` holds the first 80% of ``np.random.default_rng(0).permutation(1797)`` (1,437 images),
    ``train=False`` the other 360: disjoint, and the same on every machine. Needs scikit-learn (the
    ``examples`` extra); no download.
    """

    pixel_max = 16
    classes = [str(d) for d in range(10)]

    def __init__(self, train: bool = True, transform: Transform | None = None,
                 target_transform: Transform | None = None) -> None:
        try:
            from sklearn.datasets import load_digits  # type: ignore[import-untyped]
        except ImportError as e:
            raise ImportError("minitensor.datasets.Digits needs scikit-learn: pip install "
                              "'minitensor[examples]' (or pip install scikit-learn)") from e
        bunch = load_digits()
        rows = fixed_split_rows(len(bunch.target), train)
        self.train = train
        super().__init__(bunch.images[rows], bunch.target[rows], transform, target_transform)
