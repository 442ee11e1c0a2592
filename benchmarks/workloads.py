"""The training-step workloads of the asv suite and of ``compare.py``, one definition each, built from the
examples' own models and step functions so that a timing is always about what the examples train:

===============  ==========================================================  =====  ========================
name             model                                                       batch  optimizer
===============  ==========================================================  =====  ========================
``mlp-s``        ``models.mlp``: 784-128-10                                  100    Adam (lr 1e-3)
``mlp-l``        ``models.mlp(hidden=(1024, 1024))``: 784-1024-1024-10      512    Adam (lr 1e-3)
``cnn``          ``models.cnn``: two conv+ReLU+max-pool blocks, 3136-128-10  64     Adam (lr 1e-3)
``gan``          ``gan.build_gan("gan")``: G 100-256-784, D 784-256-1; one   64     Adam each (lr 2e-4,
                 D update on real + fake, then one G update                         betas 0.5, 0.999)
``transformer``  ``models.TransformerLM``: PyTorch's default encoder layers  32     Adam (lr 1e-3)
                 (d_model 512, 8 heads, feed-forward 2048), 2 of them,
                 causal, on 128 tokens of a 1000-word vocabulary; dropout 0
``gpt``          ``lm_workloads.GPTLM``: nanoGPT, 4 layers, 4 heads, 128     12     AdamW (lr 1e-3, betas
                 wide, block 64, vocabulary 65, tied output layer                   0.9, 0.99, decay 0.1)
``lstm``         ``lm_workloads.LSTMLM``: Embedding(65, 128), 2-layer        16     Adam (lr 1e-3)
                 LSTM(128, 256), Linear(256, 65); 64 tokens
===============  ==========================================================  =====  ========================

float32 throughout, or with ``amp=True`` the examples' --amp (``common.Precision``: autocast in the device's
16-bit dtype and a GradScaler); ``batch_size`` overrides the table's batch. The weights come from
``mt.manual_seed(seed)`` on the host and are then moved, so every device starts from the same ones; each
workload trains on one fixed batch (random MNIST-shaped images; labels for the classifiers, images in [-1, 1]
for the GAN; random tokens for the language models), which stays on the device.
"""
from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import minitensor as mt
from minitensor import nn, optim

from . import lm_workloads

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))  # the examples are scripts
from common import Precision, StepFn, classifier_step, synchronize  # noqa: E402
from gan import build_gan, gan_step  # noqa: E402
from models import LATENT_DIM, NUM_CLASSES, TransformerLM, cnn, mlp  # noqa: E402

IMAGE_SIZE = 28
BATCH_SIZES = {"mlp-s": 100, "mlp-l": 512, "cnn": 64, "gan": 64, "transformer": 32, **lm_workloads.BATCH_SIZES}
IMAGE_WORKLOADS = ("mlp-s", "mlp-l", "cnn", "gan")
# The Transformer: PyTorch's default sizes, a sequence of 128 tokens. Dropout is 0 so that both frameworks
# compute the same first loss (their dropout masks differ); PyTorch skips dropout at p = 0, as we do.
SEQ_LEN, VOCAB, TRANSFORMER_LAYERS = 128, 1000, 2
TRANSFORMER = {"ntoken": VOCAB, "d_model": 512, "nhead": 8, "d_hid": 2048, "nlayers": TRANSFORMER_LAYERS,
               "dropout": 0.0, "max_len": SEQ_LEN}
WORKLOADS = tuple(BATCH_SIZES)
DEVICES = ("cpu", "cuda")
NOISE_SEED_OFFSET = 1  # the GAN's noise stream starts from seed + this, after the weights and the batch


@dataclass
class Workload:
    """A model (or the GAN's two), its optimizer(s) and one fixed batch on ``device``: images and labels, or
    the Transformer's tokens (SEQ_LEN, batch) and next tokens (SEQ_LEN * batch,)."""
    name: str
    device: mt.device
    seed: int
    modules: dict[str, nn.Module]
    batch: tuple[mt.Tensor, mt.Tensor]
    step_fn: StepFn

    def step(self) -> dict[str, mt.Tensor]:
        """One training step on the fixed batch; the detached losses stay on the device (no host sync)."""
        return self.step_fn(*self.batch)

    def synchronize(self) -> None:
        """Wait for the device's queued work (a no-op on the CPU)."""
        synchronize(self.device)

    def snapshot(self) -> Snapshot:
        """NumPy copies of the initial weights, the batch and (GAN) the first step's noise, for a twin in
        another framework. Call it before the first step: it re-seeds the noise stream."""
        state = {name: {k: v.cpu().numpy().copy() for k, v in module.state_dict().items()}
                 for name, module in self.modules.items()}
        noise = None
        if self.name == "gan":
            mt.manual_seed(self.seed + NOISE_SEED_OFFSET)
            noise = mt.randn(self.batch[0].shape[0], LATENT_DIM, device=self.device).cpu().numpy()
            mt.manual_seed(self.seed + NOISE_SEED_OFFSET)  # so that the first step draws this noise again
        return Snapshot(self.name, state, tuple(t.cpu().numpy() for t in self.batch), noise)


@dataclass
class Snapshot:
    """A workload's starting point as NumPy arrays: ``state[module][key]``, ``batch`` = (x, y), and the
    noise the GAN's first step draws (None for the classifiers)."""
    name: str
    state: dict[str, dict[str, np.ndarray]]
    batch: tuple[np.ndarray, np.ndarray]
    first_noise: np.ndarray | None


CLASSIFIERS = {"mlp-s": mlp, "mlp-l": functools.partial(mlp, hidden=(1024, 1024)), "cnn": cnn}


def build(name: str, device: str | mt.device = "cpu", seed: int = 0, batch_size: int | None = None,
          amp: bool = False) -> Workload:
    """The workload ``name`` (one of WORKLOADS) on ``device``, from ``seed``; ``batch_size`` samples (default:
    the workload's own), under the examples' --amp when ``amp``."""
    if name not in BATCH_SIZES:
        raise ValueError(f"unknown workload {name!r}; choose one of {', '.join(WORKLOADS)}")
    if batch_size is not None and batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    device = mt.device(device)
    batch = batch_size or BATCH_SIZES[name]
    precision = Precision(amp, device)
    mt.manual_seed(seed)
    if name == "gan":
        generator, discriminator, opt_g, opt_d = build_gan("gan", IMAGE_SIZE, device)
        modules = {"generator": generator, "discriminator": discriminator}
        step = gan_step(generator, discriminator, opt_g, opt_d, precision=precision)
        x = mt.rand(batch, 1, IMAGE_SIZE, IMAGE_SIZE) * 2 - 1  # "real" images in the generator's range
    elif name in lm_workloads.BATCH_SIZES:
        model, optimizer, tokens, targets = lm_workloads.build(name, batch, device)
        mt.manual_seed(seed + NOISE_SEED_OFFSET)
        return Workload(name, device, seed, {"model": model}, (tokens.to(device), targets.to(device)),
                        classifier_step(model, optimizer, precision))
    elif name == "transformer":
        model = TransformerLM(**TRANSFORMER).to(device)
        modules = {"model": model}
        step = classifier_step(model, optim.Adam(model.parameters()), precision)
        tokens = mt.randint(0, VOCAB, (SEQ_LEN + 1, batch))
        mt.manual_seed(seed + NOISE_SEED_OFFSET)
        return Workload(name, device, seed, modules, (tokens[:-1].to(device), tokens[1:].reshape(-1).to(device)),
                        step)
    else:
        model = CLASSIFIERS[name](IMAGE_SIZE).to(device)
        modules = {"model": model}
        step = classifier_step(model, optim.Adam(model.parameters()), precision)
        x = mt.randn(batch, 1, IMAGE_SIZE, IMAGE_SIZE)
    y = mt.randint(0, NUM_CLASSES, (batch,))
    mt.manual_seed(seed + NOISE_SEED_OFFSET)
    return Workload(name, device, seed, modules, (x.to(device), y.to(device)), step)


def require_device(device: str) -> None:
    """asv's way to skip a benchmark: NotImplementedError from setup when ``device`` is cuda and no GPU is
    usable here."""
    if mt.device(device).type == "cuda" and not mt.cuda.is_available():
        raise NotImplementedError("no CUDA device (mt.cuda.is_available() is False)")

