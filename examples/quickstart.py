"""Train the 784-128-10 MLP on MNIST and report test accuracy: the smallest end-to-end minitensor run.

Data, first found wins: the official MNIST split in --data-dir / $MINITENSOR_DATA / the cache (downloaded
with --download); only the official *test* split at hand (as on an offline machine with
../shared/data/mnist): its fixed 8,000/2,000 split; otherwise scikit-learn's bundled 8x8 digits, which
need no network. The full examples (MLP, CNN, GAN and the speedup report) arrive with the examples issue.

    python examples/quickstart.py [--epochs 3] [--data-dir DIR] [--download]
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import minitensor as mt
import minitensor.nn.functional as F
from minitensor import datasets, nn, optim
from minitensor.utils.data import DataLoader, TensorDataset

SHARED_MNIST = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "mnist"
MNIST_MEAN, MNIST_STD = 0.1307, 0.3081  # the usual normalisation of MNIST pixels in [0, 1]


def normalized(images: mt.Tensor, labels: mt.Tensor) -> TensorDataset:
    return TensorDataset((images - MNIST_MEAN) / MNIST_STD, labels)


def load_data(data_dir: str | None, download: bool) -> tuple[str, TensorDataset, TensorDataset]:
    """(name, train, test) as TensorDatasets of float32 images (N, 1, H, W) and int64 labels; MNIST images
    normalised with its usual mean and std."""
    try:
        train = datasets.MNIST(data_dir, train=True, download=download)
        test = datasets.MNIST(data_dir, train=False, download=download)
        return "MNIST", normalized(*train.tensors()), normalized(*test.tensors())
    except (FileNotFoundError, RuntimeError, OSError):
        pass
    for root in (data_dir, os.environ.get("MINITENSOR_DATA"), str(SHARED_MNIST)):
        if not root:
            continue
        try:
            train = datasets.mnist_test_split(root, train=True)
            test = datasets.mnist_test_split(root, train=False)
            return "MNIST test split (8,000 train / 2,000 test)", \
                normalized(*train.tensors()), normalized(*test.tensors())
        except (FileNotFoundError, RuntimeError, OSError):
            continue
    print("MNIST not found and not downloadable: using scikit-learn's 8x8 digits instead")
    train, test = datasets.Digits(train=True), datasets.Digits(train=False)
    return "digits (8x8)", TensorDataset(*train.tensors()), TensorDataset(*test.tensors())


def evaluate(model: nn.Module, loader: DataLoader) -> float:
    model.eval()
    correct = total = 0
    with mt.no_grad():
        for x, y in loader:
            correct += int((model(x).argmax(1) == y).sum().item())
            total += y.shape[0]
    model.train()
    return correct / total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--data-dir", default=None, help="folder holding the MNIST IDX files")
    parser.add_argument("--download", action="store_true", help="download MNIST when it is not found")
    args = parser.parse_args()

    mt.manual_seed(args.seed)
    name, train, test = load_data(args.data_dir, args.download)
    image_pixels = train.tensors[0][0].numel()
    model = nn.Sequential(nn.Flatten(), nn.Linear(image_pixels, 128), nn.ReLU(), nn.Linear(128, 10))
    opt = optim.Adam(model.parameters(), lr=args.lr)
    train_loader = DataLoader(train, batch_size=args.batch_size, shuffle=True, generator=args.seed)
    test_loader = DataLoader(test, batch_size=1000)
    print(f"data: {name}; model: {model}")

    for epoch in range(1, args.epochs + 1):
        t0, steps = time.perf_counter(), 0
        for x, y in train_loader:
            loss = F.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            steps += 1
        ms = (time.perf_counter() - t0) / steps * 1e3
        print(f"epoch {epoch}: loss {loss.item():.4f}  test accuracy {evaluate(model, test_loader):.2%}  "
              f"{ms:.2f} ms/step")


if __name__ == "__main__":
    main()
