"""One WGAN-GP training step (examples/gan.py --model wgan-gp: a critic step with the gradient penalty, a
second-order gradient, and every 5th step a generator step) in minitensor and in PyTorch, on the CPU, same
shapes, the two alternated step by step so that a shared machine's drift hits both alike.

    python benchmarks/wgan_gp_step.py [--batch-size 64] [--steps 20] [--threads 2]

Prints the median ms per step of each and their ratio (minitensor / PyTorch; a cycle of 5 steps holds one
generator step, so --steps should be a multiple of 5).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))

import minitensor as mt  # noqa: E402

import gan  # noqa: E402


def torch_step(torch: object, batch: int) -> object:
    """PyTorch's twin of gan.wgan_gp_step on the DCGAN generator and the critic of examples/models.py."""
    nn = torch.nn  # type: ignore[attr-defined]
    w, side = 64, 7
    G = nn.Sequential(nn.Linear(100, 2 * w * side * side, bias=False), nn.BatchNorm1d(2 * w * side * side), nn.ReLU(),
                      nn.Unflatten(1, (2 * w, side, side)), nn.ConvTranspose2d(2 * w, w, 4, 2, 1, bias=False),
                      nn.BatchNorm2d(w), nn.ReLU(), nn.ConvTranspose2d(w, 1, 4, 2, 1), nn.Tanh())
    C = nn.Sequential(nn.Conv2d(1, w, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(w, 2 * w, 4, 2, 1), nn.LeakyReLU(0.2),
                      nn.Flatten(), nn.Linear(2 * w * side * side, 1))
    opt_g = torch.optim.Adam(G.parameters(), gan.WGAN_LR, betas=gan.WGAN_BETAS)  # type: ignore[attr-defined]
    opt_c = torch.optim.Adam(C.parameters(), gan.WGAN_LR, betas=gan.WGAN_BETAS)  # type: ignore[attr-defined]
    real = torch.randn(batch, 1, 28, 28)  # type: ignore[attr-defined]
    count = [0]

    def step() -> None:
        fake = G(torch.randn(batch, 100)).detach()  # type: ignore[attr-defined]
        e = torch.rand(batch, 1, 1, 1)  # type: ignore[attr-defined]
        x_hat = (e * real + (1 - e) * fake).requires_grad_(True)
        g, = torch.autograd.grad(C(x_hat).sum(), x_hat, create_graph=True)  # type: ignore[attr-defined]
        loss = C(fake).mean() - C(real).mean() + gan.GP_WEIGHT * ((g.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
        opt_c.zero_grad()
        loss.backward()
        opt_c.step()
        count[0] += 1
        if count[0] % gan.N_CRITIC == 0:
            opt_g.zero_grad()
            (-C(G(torch.randn(batch, 100))).mean()).backward()  # type: ignore[attr-defined]
            opt_g.step()
    return step


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--threads", type=int, default=2)
    args = p.parse_args()
    import torch
    torch.set_num_threads(args.threads)
    mt.manual_seed(0)
    torch.manual_seed(0)
    generator, critic, opt_g, opt_c = gan.build_gan("wgan-gp", 28, mt.device("cpu"), gan.WGAN_LR)
    ours = gan.wgan_gp_step(generator, critic, opt_g, opt_c)
    real = mt.randn(args.batch_size, 1, 28, 28)
    theirs = torch_step(torch, args.batch_size)
    times: dict[str, list[float]] = {"minitensor": [], "PyTorch": []}
    for k in range(args.steps + gan.N_CRITIC):  # the first cycle warms up
        for name, run in (("minitensor", lambda: ours(real, real)), ("PyTorch", theirs)):
            start = time.perf_counter()
            run()
            if k >= gan.N_CRITIC:
                times[name].append(time.perf_counter() - start)
    med = {k: statistics.median(v) * 1000 for k, v in times.items()}
    print(f"WGAN-GP step, batch {args.batch_size}, 28x28, cpu, {args.threads} threads, median of {args.steps}: "
          f"minitensor {med['minitensor']:.1f} ms, PyTorch {med['PyTorch']:.1f} ms, "
          f"ratio {med['minitensor'] / med['PyTorch']:.2f}")


if __name__ == "__main__":
    main()
