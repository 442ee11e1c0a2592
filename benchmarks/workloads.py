"""Training-step workloads shared by the asv suite and scripts: the MLP and CNN of the examples, built by
the examples' own ``models`` module so that a timing is always about the model the examples train."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import minitensor as mt
import minitensor.nn.functional as F
from minitensor import nn, optim

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))  # the examples are scripts
from models import cnn, mlp  # noqa: E402

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
