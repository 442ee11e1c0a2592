"""Train the CNN (two conv3x3+ReLU+MaxPool blocks of 32 and 64 channels, Linear(3136, 128), ReLU,
Linear(128, 10)) on MNIST with Adam and cross-entropy, and report test accuracy.

    python examples/cnn.py                                   # MNIST (downloads it; digits offline)
    python examples/cnn.py --device cuda --batch-size 256
    python examples/cnn.py --dataset mnist-test-split --data-dir ../shared/data/mnist

Outputs in --out (default runs/cnn): metrics.json (per-epoch loss, accuracy, timings) and checkpoint.mt
(resume with --resume; gan.py --score uses it as its judge).
"""
from __future__ import annotations

from typing import Any, Sequence

from common import run_classifier
from models import cnn


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    return run_classifier("cnn", cnn, __doc__, argv, epochs=3, batch_size=64)


if __name__ == "__main__":
    main()
