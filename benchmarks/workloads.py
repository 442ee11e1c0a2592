"""Training-step workloads shared by the asv suite and scripts: the MLP and CNN of the examples."""
from __future__ import annotations

from typing import Callable

import minitensor as mt
import minitensor.nn.functional as F
from minitensor import nn, optim


def mlp() -> nn.Module:
    """784-128-10 with ReLU (the quickstart's and the examples' MLP)."""
    return nn.Sequential(nn.Flatten(), nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))


def cnn() -> nn.Module:
    """Two conv(3x3, padding 1) + ReLU + MaxPool(2) blocks of 32 and 64 channels, Linear(3136, 128), ReLU,
    Linear(128, 10)."""
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Linear(128, 10))


MODELS: dict[str, tuple[Callable[[], nn.Module], int]] = {"mlp": (mlp, 100), "cnn": (cnn, 64)}


def training_step(name: str, device: str = "cpu", seed: int = 0) -> Callable[[], float]:
    """A closure running one Adam step (forward, cross-entropy, backward, update) on a fixed batch of
    MNIST-shaped data; returns the loss."""
    make, batch = MODELS[name]
    mt.manual_seed(seed)
    model = make().to(device)
    opt = optim.Adam(model.parameters(), lr=1e-3)
    x = mt.randn(batch, 1, 28, 28).to(device)
    y = mt.randint(0, 10, (batch,)).to(device)

    def step() -> float:
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss.item()

    return step
