"""The quality bars of the classifier examples on the offline MNIST split (the official test split: 8,000
images of a fixed permutation to train on, the other 2,000 to test), run through the examples themselves.
PyTorch reaches 93.0-94.4% (MLP, 5 epochs) and 96.8-98.0% (CNN, 3 epochs) on the same split and settings.
Marked slow (about half a minute together on 2 cores); .ci/run runs them. Skipped only when the data files
are absent."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))

import cnn  # noqa: E402
import common  # noqa: E402
import mlp  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def split_dir() -> str:
    if not (common.SHARED_MNIST / "t10k-images-idx3-ubyte.gz").exists():
        pytest.skip(f"the official MNIST test split is not at {common.SHARED_MNIST}")
    return str(common.SHARED_MNIST)


@pytest.mark.parametrize("example, epochs, bar", [(mlp, 5, 0.925), (cnn, 3, 0.965)], ids=["mlp", "cnn"])
def test_example_reaches_its_bar_on_the_offline_split(example, epochs, bar, split_dir, tmp_path):
    log = example.main(["--dataset", "mnist-test-split", "--data-dir", split_dir, "--epochs", str(epochs),
                        "--device", "cpu", "--no-progress", "--out", str(tmp_path)])
    assert log["dataset"].startswith("MNIST test split") and len(log["epochs"]) == epochs
    assert log["final"]["test_accuracy"] >= bar
