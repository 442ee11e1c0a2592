"""Train the MLP (784-128-10, ReLU) on MNIST with Adam and cross-entropy, and report test accuracy.

    python examples/mlp.py                                   # MNIST (downloads it; digits offline)
    python examples/mlp.py --device cuda --epochs 5
    python examples/mlp.py --dataset mnist-test-split --data-dir ../shared/data/mnist

Outputs in --out (default runs/mlp): metrics.json (per-epoch loss, accuracy, timings) and checkpoint.mt
(resume with --resume).
"""
from __future__ import annotations

from typing import Any, Sequence

from common import run_classifier
from models import mlp


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    return run_classifier("mlp", mlp, __doc__, argv, epochs=5, batch_size=100)


if __name__ == "__main__":
    main()
