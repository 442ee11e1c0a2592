"""The PyTorch twins of ``workloads.py``, for ``compare.py`` only: the same layers, losses, optimizers and
update order, started from a minitensor workload's ``Snapshot`` (weights, batch, the GAN's first noise).

PyTorch is an optional reference, never a dependency: it is imported inside the functions, so that asv's
discovery (which imports every module under ``benchmarks/``) neither needs nor loads it.
"""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import torch_lm_workloads
from .workloads import IMAGE_SIZE, LATENT_DIM, NUM_CLASSES, TRANSFORMER, Snapshot

GAN_LR, GAN_BETAS = 2e-4, (0.5, 0.999)  # examples/gan.py's
HIDDEN = {"mlp-s": (128,), "mlp-l": (1024, 1024)}


def available(device: str = "cpu") -> bool:
    """Whether PyTorch is installed here and, for ``device`` cuda, built with CUDA and seeing a GPU."""
    if importlib.util.find_spec("torch") is None:
        return False
    if device == "cuda":
        import torch
        return torch.cuda.is_available()
    return True


@dataclass
class TorchWorkload:
    """The twin of a ``workloads.Workload``: ``step()`` runs one training step on the fixed batch and returns
    the detached losses by the same names."""
    name: str
    device: Any  # torch.device
    modules: dict[str, Any]
    step: Callable[[], dict[str, Any]]

    def synchronize(self) -> None:
        import torch
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)


def build(snapshot: Snapshot, device: str = "cpu", amp: bool = False) -> TorchWorkload:
    """The PyTorch twin of ``snapshot``'s workload on ``device``, from its weights and batch; with ``amp``
    (classifiers only) under PyTorch's mixed-precision recipe (``_Precision``)."""
    import torch
    device = torch.device(device)
    if amp and snapshot.name == "gan":  # F.binary_cross_entropy refuses CUDA autocast: another computation
        raise ValueError("the GAN has no AMP twin: PyTorch's autocast refuses binary_cross_entropy")
    x, y = (torch.tensor(a, device=device) for a in snapshot.batch)  # copies: the twin owns its batch
    modules = {name: _load(_MODULES[name](snapshot.name), state, device)
               for name, state in snapshot.state.items()}
    if snapshot.name == "gan":
        step = _gan_step(modules["generator"], modules["discriminator"], x, snapshot.first_noise)
    else:
        model = modules["model"]
        optimizer = (torch_lm_workloads.optimizer(snapshot.name, model) if snapshot.name in ("gpt", "lstm")
                     else torch.optim.Adam(model.parameters()))
        step = _classifier_step(model, optimizer, x, y, _Precision(device, amp))
    return TorchWorkload(snapshot.name, device, modules, step)


# ------------------------------------------------------------------------------------------------ models
def _classifier(name: str) -> Any:
    """examples/models.py's mlp, cnn and TransformerLM, and workloads.mlp_large, in PyTorch (same module
    names, so the state-dict keys match)."""
    from torch import nn
    if name == "transformer":
        return _transformer_lm(**TRANSFORMER)
    if name in ("gpt", "lstm"):
        return torch_lm_workloads.model(name)
    if name == "cnn":
        side = IMAGE_SIZE // 4
        return nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(64 * side * side, 128), nn.ReLU(), nn.Linear(128, NUM_CLASSES))
    layers: list[Any] = [nn.Flatten()]
    width = IMAGE_SIZE * IMAGE_SIZE
    for hidden in HIDDEN[name]:
        layers += [nn.Linear(width, hidden), nn.ReLU()]
        width = hidden
    return nn.Sequential(*layers, nn.Linear(width, NUM_CLASSES))


def _transformer_lm(ntoken: int, d_model: int, nhead: int, d_hid: int, nlayers: int, dropout: float,
                    max_len: int) -> Any:
    """models.TransformerLM in PyTorch; its ``pe`` buffer comes with the state dict."""
    import math

    import torch
    from torch import nn

    class TransformerLM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.d_model = d_model
            self.input_emb = nn.Embedding(ntoken, d_model)
            self.register_buffer("pe", torch.zeros(max_len, 1, d_model))
            layer = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
            self.encoder = nn.TransformerEncoder(layer, nlayers, enable_nested_tensor=False)
            self.decoder = nn.Linear(d_model, ntoken)

        def forward(self, src: Any) -> Any:
            mask = nn.Transformer.generate_square_subsequent_mask(src.shape[0], device=src.device)
            x = self.input_emb(src) * math.sqrt(self.d_model) + self.pe[:src.shape[0]]
            logits = self.decoder(self.encoder(x, mask=mask))
            return logits.reshape(-1, logits.shape[-1])
    return TransformerLM()


def _generator(_name: str, hidden: int = 256) -> Any:
    from torch import nn
    return nn.Sequential(nn.Linear(LATENT_DIM, hidden), nn.LeakyReLU(0.2),
                         nn.Linear(hidden, IMAGE_SIZE * IMAGE_SIZE), nn.Tanh(),
                         nn.Unflatten(1, (1, IMAGE_SIZE, IMAGE_SIZE)))


def _discriminator(_name: str, hidden: int = 256) -> Any:
    from torch import nn
    return nn.Sequential(nn.Flatten(), nn.Linear(IMAGE_SIZE * IMAGE_SIZE, hidden), nn.LeakyReLU(0.2),
                         nn.Linear(hidden, 1), nn.Sigmoid())


_MODULES = {"model": _classifier, "generator": _generator, "discriminator": _discriminator}


def _load(module: Any, state: dict[str, np.ndarray], device: Any) -> Any:
    import torch
    module.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})  # strict: keys must match
    return module.to(device)


# ------------------------------------------------------------------------------------------------- steps
class _Precision:
    """PyTorch's AMP recipe (its "Automatic Mixed Precision" recipe): ``torch.autocast(device_type, dtype)``,
    float16 on CUDA and bfloat16 on the CPU, and ``torch.amp.GradScaler`` enabled on CUDA only (bfloat16 has
    float32's range, so PyTorch's CPU recipe scales nothing). Disabled, each call is the float32 one."""

    def __init__(self, device: Any, enabled: bool) -> None:
        import torch
        self.device_type, self.enabled = device.type, enabled
        self.dtype = torch.float16 if device.type == "cuda" else torch.bfloat16
        self.scaler = torch.amp.GradScaler(device.type, enabled=enabled and device.type == "cuda")

    def autocast(self) -> Any:
        import torch
        return torch.autocast(self.device_type, dtype=self.dtype, enabled=self.enabled)


def _classifier_step(model: Any, optimizer: Any, x: Any, y: Any, amp: _Precision) -> Callable[[], dict[str, Any]]:
    """common.classifier_step: cross-entropy (under ``amp``'s autocast), zero_grad, backward and the
    ``optimizer`` step through ``amp``'s scaler."""
    import torch

    def step() -> dict[str, Any]:
        with amp.autocast():
            loss = torch.nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        amp.scaler.scale(loss).backward()
        amp.scaler.step(optimizer)
        amp.scaler.update()
        return {"loss": loss.detach()}
    return step


def _gan_step(generator: Any, discriminator: Any, real: Any, first_noise: np.ndarray | None
              ) -> Callable[[], dict[str, Any]]:
    """gan.gan_step: D on real and detached fakes, then G (non-saturating) against the updated D. The
    first step uses ``first_noise`` (minitensor's), later ones draw their own."""
    import torch
    bce = torch.nn.functional.binary_cross_entropy
    opt_g = torch.optim.Adam(generator.parameters(), lr=GAN_LR, betas=GAN_BETAS)
    opt_d = torch.optim.Adam(discriminator.parameters(), lr=GAN_LR, betas=GAN_BETAS)
    pending = [] if first_noise is None else [torch.tensor(first_noise, device=real.device)]

    def step() -> dict[str, Any]:
        noise = pending.pop() if pending else torch.randn(real.shape[0], LATENT_DIM, device=real.device)
        fake = generator(noise)
        opt_d.zero_grad()
        d_real, d_fake = discriminator(real), discriminator(fake.detach())
        loss_d = bce(d_real, torch.ones_like(d_real)) + bce(d_fake, torch.zeros_like(d_fake))
        loss_d.backward()
        opt_d.step()
        opt_g.zero_grad()
        d_fake = discriminator(fake)
        loss_g = bce(d_fake, torch.ones_like(d_fake))
        loss_g.backward()
        opt_g.step()
        return {"loss_D": loss_d.detach(), "loss_G": loss_g.detach()}
    return step
