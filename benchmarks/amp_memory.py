"""Activation memory of one training step of the examples' CNN, float32 against autocast (docs/amp.md).

    python benchmarks/amp_memory.py [--batch 256] [--device cpu]

Two measures, each for float32 and for ``autocast(device)`` (the device's 16-bit dtype):
- saved: the bytes the graph holds for backward after the forward and the loss (every node's saved arrays,
  each memory block counted once, the parameters' own arrays left out): what the step keeps alive;
- peak (CPU only): tracemalloc's peak over the whole step (forward, backward, Adam), less the memory
  allocated before it (``memory.peak_above_start``): NumPy reports its allocations to tracemalloc, so this
  includes temporaries.
With --torch (where PyTorch is installed), the same saved-bytes measure of PyTorch's CPU autocast on the same
model (through ``saved_tensors_hooks``), for reference.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # ``benchmarks`` when run as a script

import minitensor as mt  # noqa: E402
from benchmarks.memory import peak_above_start  # noqa: E402
from models import cnn  # noqa: E402


def saved_bytes(loss: mt.Tensor, params: set[int]) -> int:
    """Bytes of the distinct memory blocks the graph behind ``loss`` saved for backward."""
    blocks: dict[int, int] = {}
    seen, stack = set(), [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen or not hasattr(node, "_next"):
            continue
        seen.add(id(node))
        for a in node._saved or ():
            if hasattr(a, "nbytes"):
                base = a.base if getattr(a, "base", None) is not None else a
                if id(base) not in params:
                    blocks[id(base)] = base.nbytes
        stack.extend(edge for _, edge, is_node, _, _ in node._next if is_node)
    return sum(blocks.values())


def measure(amp: bool, batch: int, device: mt.device) -> dict[str, Any]:
    mt.manual_seed(0)
    model = cnn(28).to(device)
    opt = mt.optim.Adam(model.parameters(), lr=1e-3)
    x, y = mt.randn(batch, 1, 28, 28, device=device), mt.randint(0, 10, (batch,), device=device)
    params = {id(p.array) for p in model.parameters()}
    for _ in range(2):  # warm up (Adam's state, allocator pools)
        with mt.autocast(device.type, enabled=amp):
            loss = mt.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    saved = []

    def step() -> None:
        with mt.autocast(device.type, enabled=amp):
            loss = mt.nn.functional.cross_entropy(model(x), y)
        saved.append(saved_bytes(loss, params))
        opt.zero_grad()
        loss.backward()
        opt.step()

    if device.type == "cpu":
        peak = peak_above_start(step)
        return {"saved_MiB": saved[0] / 2 ** 20, "peak_MiB": peak / 2 ** 20}
    step()
    return {"saved_MiB": saved[0] / 2 ** 20}


def torch_saved_mib(batch: int) -> dict[str, float]:
    """PyTorch's saved bytes for the same CNN, float32 and CPU autocast (each storage once, parameters out)."""
    import torch
    from torch import nn as tnn
    torch.manual_seed(0)
    model = tnn.Sequential(tnn.Conv2d(1, 32, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2),
                           tnn.Conv2d(32, 64, 3, padding=1), tnn.ReLU(), tnn.MaxPool2d(2), tnn.Flatten(),
                           tnn.Linear(3136, 128), tnn.ReLU(), tnn.Linear(128, 10))
    x, y = torch.randn(batch, 1, 28, 28), torch.randint(0, 10, (batch,))
    params = {p.untyped_storage().data_ptr() for p in model.parameters()}
    out = {}
    for amp in (False, True):
        blocks: dict[int, int] = {}

        def pack(t: Any) -> Any:
            s = t.untyped_storage()
            if s.data_ptr() not in params:
                blocks[s.data_ptr()] = s.nbytes()
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t), torch.autocast("cpu", enabled=amp):
            tnn.functional.cross_entropy(model(x), y)
        out["autocast" if amp else "float32"] = sum(blocks.values()) / 2 ** 20
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--device", default="cpu")
    p.add_argument("--torch", action="store_true", help="also PyTorch's saved bytes for the same model")
    args = p.parse_args()
    device = mt.device(args.device)
    fp32, amp = measure(False, args.batch, device), measure(True, args.batch, device)
    for key in fp32:
        print(f"{key}: float32 {fp32[key]:.1f}, autocast {amp[key]:.1f}, ratio {amp[key] / fp32[key]:.2f}")
    if args.torch:
        ref = torch_saved_mib(args.batch)
        print(f"PyTorch saved_MiB: float32 {ref['float32']:.1f}, autocast {ref['autocast']:.1f}, ratio "
              f"{ref['autocast'] / ref['float32']:.2f}")


if __name__ == "__main__":
    main()
