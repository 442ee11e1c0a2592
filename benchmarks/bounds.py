"""How fast a training step of each workload could be on this machine: its GEMM FLOPs at the machine's sgemm
rate plus its memory-bound ops' bytes at its memcpy rate (issue #28), and each framework's distance from that.

    python -m benchmarks.bounds                  # FLOPs, bytes and the bound of every workload, rates measured here
    python benchmarks/compare.py --bound ...     # the same beside both frameworks' measured steps

The counts come from the workloads' shapes (``workloads.py``, ``lm_workloads.py``), not from a profiler:

- GEMM FLOPs: every matrix product of the step, 2·M·N·K each: forward, the weight gradient, and the input
  gradient except where the input needs none (the first layer of an image model, the GAN's noise). A
  convolution is its implicit GEMM (M = N·Ho·Wo, K = Cin·k²); attention is two batched products (Q·Kᵀ and
  P·V, the whole T×T square even when causal) and their four gradient products.
- bytes: the memory-bound ops, 4 bytes an element. An elementwise op (activation, LayerNorm, softmax,
  residual add, an LSTM gate) reads and writes its tensor forward, and reads the gradient and its saved
  tensor and writes a gradient backward: ELEMENTWISE_PASSES passes. Adam(W) reads parameter, gradient and
  two moments and writes three: OPTIMIZER_PASSES passes of the parameters. Max-pooling and embeddings move
  their inputs and outputs once each way; a convolution's unfolded (im2col) columns are written and read
  forward and again in the input gradient, and read by the weight gradient. Layout copies are not counted:
  an ideal implementation avoids them.
- rates: a 2048² float32 ``a @ b`` through NumPy's BLAS on --threads threads (2·2048³ FLOPs), and a large
  ``np.copyto`` (bytes read + bytes written), each the median of RATE_REPEATS, measured in a fresh process
  under the ISA's environment (``isa.environment``), so that the sgemm rate is the one of that ISA's kernels.

The target (issue #28): a step within max(0.6 × PyTorch's, 1.15 × the bound), 2 × the bound for the CNN,
whose convolutions are not plain GEMMs.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Mapping, Sequence

ROOT = Path(__file__).resolve().parents[1]
if __package__ in (None, ""):
    sys.path.insert(0, str(ROOT))

import minitensor  # noqa: E402,F401  (before NumPy: chooses OpenBLAS's kernels as minitensor's workers do)
from benchmarks import lm_workloads as lm  # noqa: E402
from benchmarks.workloads import BATCH_SIZES, IMAGE_SIZE, SEQ_LEN, TRANSFORMER, VOCAB  # noqa: E402

ELEMENTWISE_PASSES = 5
OPTIMIZER_PASSES = 7
BYTES = 4  # float32
SGEMM_SIZE, COPY_MIB, RATE_REPEATS = 2048, 256, 7
BOUND_FACTOR = {"cnn": 2.0}  # the target's factor on the bound; 1.15 elsewhere
DEFAULT_BOUND_FACTOR, PYTORCH_FACTOR = 1.15, 0.6


class Step:
    """A step's GEMM FLOPs and memory-bound bytes, added up op by op."""

    def __init__(self) -> None:
        self.flops = 0.0
        self.bytes = 0.0
        self.parameters = 0  # what the optimizer updates

    def gemm(self, m: int, n: int, k: int, dx: bool = True, count: int = 1) -> None:
        """``count`` products (M, K) x (K, N): forward, weight gradient and, with ``dx``, input gradient."""
        self.flops += 2.0 * m * n * k * (3 if dx else 2) * count

    def linear(self, rows: int, n_in: int, n_out: int, dx: bool = True) -> None:
        self.gemm(rows, n_out, n_in, dx)

    def elementwise(self, elements: int, ops: int = 1) -> None:
        self.bytes += BYTES * ELEMENTWISE_PASSES * elements * ops

    def moved(self, elements: int, passes: int) -> None:
        self.bytes += BYTES * passes * elements

    def optimizer(self, parameters: int) -> None:
        self.parameters += parameters
        self.moved(parameters, OPTIMIZER_PASSES)

    def conv(self, n: int, c_in: int, c_out: int, side: int, k: int = 3, dx: bool = True) -> None:
        """A same-padded k×k convolution on side×side images, as its implicit GEMM, and its unfolded columns."""
        self.gemm(n * side * side, c_out, c_in * k * k, dx)
        self.moved(n * side * side * c_in * k * k, 5 if dx else 3)


def count(name: str, batch: int) -> Step:
    """The GEMM FLOPs and bytes of one training step of workload ``name`` on ``batch`` samples."""
    s = Step()
    if name in ("mlp-s", "mlp-l"):
        widths = [IMAGE_SIZE * IMAGE_SIZE, *((128,) if name == "mlp-s" else (1024, 1024)), 10]
        for i, (a, b) in enumerate(zip(widths, widths[1:])):
            s.linear(batch, a, b, dx=i > 0)
            if i < len(widths) - 2:
                s.elementwise(batch * b)  # ReLU
        s.optimizer(sum(a * b + b for a, b in zip(widths, widths[1:])))
    elif name == "cnn":
        s.conv(batch, 1, 32, IMAGE_SIZE, dx=False)
        s.conv(batch, 32, 64, IMAGE_SIZE // 2)
        for c, side in ((32, IMAGE_SIZE), (64, IMAGE_SIZE // 2)):
            s.elementwise(batch * c * side * side)  # ReLU
            s.moved(batch * c * side * side, 2)  # max-pool reads its input forward, writes its gradient
            s.moved(batch * c * side * side // 4, 2)  # and writes its output, reads the output's gradient
        flat = 64 * (IMAGE_SIZE // 4) ** 2
        s.linear(batch, flat, 128)
        s.elementwise(batch * 128)
        s.linear(batch, 128, 10)
        s.optimizer(32 * 9 + 32 + 64 * 32 * 9 + 64 + flat * 128 + 128 + 128 * 10 + 10)
    elif name == "gan":
        pixels, hidden, latent = IMAGE_SIZE * IMAGE_SIZE, 256, 100
        s.linear(batch, latent, hidden, dx=False)
        s.linear(batch, hidden, pixels)
        s.elementwise(batch * (hidden + pixels))  # LeakyReLU, Tanh
        for dx in (False, False, True):  # D on real, on detached fakes, on fakes for G's update
            s.linear(batch, pixels, hidden, dx=dx)
            s.linear(batch, hidden, 1)
            s.elementwise(batch * (hidden + 1))  # LeakyReLU, Sigmoid
        s.optimizer(latent * hidden + hidden + hidden * pixels + pixels + pixels * hidden + hidden + hidden + 1)
    elif name == "transformer":
        d, heads, d_ff, layers = (int(TRANSFORMER[k]) for k in ("d_model", "nhead", "d_hid", "nlayers"))
        _transformer(s, batch * SEQ_LEN, batch, SEQ_LEN, d, heads, d_ff, layers, VOCAB, post_norm=True)
    elif name == "gpt":
        g = lm.GPT
        _transformer(s, batch * g["block_size"], batch, g["block_size"], g["n_embd"], g["n_head"],
                     4 * g["n_embd"], g["n_layer"], lm.VOCAB, post_norm=False)
    elif name == "lstm":
        _lstm(s, batch)
    else:
        raise ValueError(f"unknown workload {name!r}")
    return s


def _transformer(s: Step, rows: int, batch: int, seq: int, d: int, heads: int, d_ff: int, layers: int,
                 vocab: int, post_norm: bool) -> None:
    """Encoder layers (PyTorch's post-norm with biases, or nanoGPT's pre-norm without) and the output layer."""
    for _ in range(layers):
        s.linear(rows, d, 3 * d)
        s.gemm(seq, seq, d // heads, count=batch * heads)  # Q·Kᵀ
        s.gemm(seq, d // heads, seq, count=batch * heads)  # P·V
        s.elementwise(batch * heads * seq * seq)  # softmax
        s.linear(rows, d, d)
        s.linear(rows, d, d_ff)
        s.linear(rows, d_ff, d)
        s.elementwise(rows * d_ff)  # ReLU / GELU
        s.elementwise(rows * d, ops=4)  # two residual adds, two LayerNorms
    s.elementwise(rows * d, ops=0 if post_norm else 1)  # nanoGPT's final LayerNorm
    s.linear(rows, d, vocab)
    s.elementwise(rows * vocab)  # cross-entropy's log-softmax
    s.moved(rows * d, 4)  # the embeddings: gathered forward, scattered into the gradient backward
    per_layer = 4 * d * d + 2 * d * d_ff + (9 * d + d_ff if post_norm else 2 * d)  # biases and LayerNorms
    s.optimizer(layers * per_layer + vocab * d + (d * vocab + vocab if post_norm else seq * d + d))


def _lstm(s: Step, batch: int) -> None:
    """Per layer the input and recurrent products of the four gates, their activations and the cell's
    five elementwise ops (f·c, i·g, their sum, tanh c, o·tanh c); the decoder; the embedding."""
    c = lm.LSTM
    rows, hidden, parameters = c["seq_len"] * batch, c["hidden"], 0
    n_in = c["embed"]
    for _ in range(c["layers"]):
        s.linear(rows, n_in, 4 * hidden)
        s.linear(rows, hidden, 4 * hidden)
        s.elementwise(rows * 4 * hidden, ops=2)  # the two products' sum, the gates' activations
        s.elementwise(rows * hidden, ops=5)
        parameters += 4 * hidden * (n_in + hidden + 2)
        n_in = hidden
    s.linear(rows, hidden, lm.VOCAB)
    s.elementwise(rows * lm.VOCAB)
    s.moved(rows * c["embed"], 4)
    s.optimizer(parameters + lm.VOCAB * c["embed"] + hidden * lm.VOCAB + lm.VOCAB)


# ------------------------------------------------------------------------------------------------- rates
def _rates_here(threads: int) -> dict[str, Any]:
    """sgemm GFLOP/s and memcpy GB/s in this process (see the module's docstring)."""
    import numpy as np
    from threadpoolctl import threadpool_info, threadpool_limits  # type: ignore[import-untyped]

    with threadpool_limits(limits=threads, user_api="blas"):
        rng = np.random.default_rng(0)
        a, b = (rng.standard_normal((SGEMM_SIZE, SGEMM_SIZE), dtype=np.float32) for _ in range(2))
        out = np.empty_like(a)
        gemm = _seconds(lambda: np.matmul(a, b, out=out))
    src = np.ones(COPY_MIB * 2 ** 20 // 4, np.float32)
    dst = np.empty_like(src)
    copy = _seconds(lambda: np.copyto(dst, src))
    blas: dict[str, Any] = next((lib for lib in threadpool_info() if lib.get("user_api") == "blas"), {})
    return {"sgemm_gflops_samples": [2.0 * SGEMM_SIZE ** 3 / t / 1e9 for t in gemm],
            "memcpy_gbps_samples": [2.0 * src.nbytes / t / 1e9 for t in copy],
            "threads": threads, "openblas": blas.get("architecture"), "blas": blas.get("internal_api")}


def _seconds(call: Any) -> list[float]:
    """RATE_REPEATS timings of ``call``, after one untimed call."""
    call()
    times = []
    for _ in range(RATE_REPEATS):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times


def combine(*measured: Mapping[str, Any]) -> dict[str, Any]:
    """One set of rates from several measurements (compare.py takes one before and one after the workloads,
    so that the rates see the run's load): the medians of all their samples, which are kept too."""
    out: dict[str, Any] = {k: v for k, v in measured[0].items() if not k.endswith("_samples")}
    for key in ("sgemm_gflops", "memcpy_gbps"):
        out[f"{key}_samples"] = [x for m in measured for x in m[f"{key}_samples"]]
        out[key] = statistics.median(out[f"{key}_samples"])
    return out


def measure_rates(threads: int, env: Mapping[str, str | None]) -> dict[str, Any]:
    """The rates, measured in a fresh Python process whose environment has ``env``'s changes (None removes)."""
    child = {k: v for k, v in os.environ.items() if k not in env or env[k] is not None}
    child.update({k: v for k, v in env.items() if v is not None})
    child["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), child.get("PYTHONPATH")]))
    out = subprocess.run([sys.executable, "-m", "benchmarks.bounds", "--rates-only", "--threads", str(threads)],
                         env=child, cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


# -------------------------------------------------------------------------------------------------- bound
def bound(name: str, batch: int, rates: Mapping[str, Any], row: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``name``'s FLOPs, bytes and bound (ms) at ``rates``; with a compare.py result ``row``, each framework's
    step over the bound, the issue's target step and whether minitensor meets it."""
    s = count(name, batch)
    bound_ms = 1e3 * (s.flops / (rates["sgemm_gflops"] * 1e9) + s.bytes / (rates["memcpy_gbps"] * 1e9))
    out: dict[str, Any] = {"gemm_gflop": s.flops / 1e9, "mbytes": s.bytes / 1e6, "bound_ms": bound_ms}
    mt_ms, pt_ms = (row or {}).get("minitensor_ms"), (row or {}).get("pytorch_ms")
    out["minitensor_over_bound"] = mt_ms / bound_ms if mt_ms else None
    out["pytorch_over_bound"] = pt_ms / bound_ms if pt_ms else None
    target = BOUND_FACTOR.get(name, DEFAULT_BOUND_FACTOR) * bound_ms
    out["target_ms"] = max(target, PYTORCH_FACTOR * pt_ms) if pt_ms else target
    out["meets_target"] = mt_ms <= out["target_ms"] if mt_ms else None
    return out


def _cell(value: Any, digits: int = 2) -> str:
    return "-" if value is None else ("yes" if value else "no") if isinstance(value, bool) else f"{value:.{digits}f}"


def markdown(rows: Sequence[Mapping[str, Any]], info: Mapping[str, Any]) -> str:
    """compare.py --bound's table, below its own."""
    r = info["rates"]
    lines = ["", f"Bound: GEMM FLOPs / sgemm rate + bytes / memcpy rate (benchmarks/bounds.py). sgemm {SGEMM_SIZE}² "
             f"float32 via NumPy on {r['threads']} threads ({r['blas']} {r['openblas']} kernels): "
             f"{r['sgemm_gflops']:.1f} GFLOP/s; memcpy (np.copyto of {COPY_MIB} MiB, read + write): "
             f"{r['memcpy_gbps']:.1f} GB/s. Target: max({PYTORCH_FACTOR} x PyTorch, {DEFAULT_BOUND_FACTOR} x bound; "
             f"CNN {BOUND_FACTOR['cnn']:g} x bound).", "",
             "| workload | GEMM GFLOP | MB moved | bound ms | minitensor ms | PyTorch ms | minitensor / PyTorch "
             "| minitensor / bound | PyTorch / bound | target ms | meets target |",
             "| --- " + "| ---: " * 10 + "|"]
    for row in rows:
        b = row.get("bound") or {}
        lines.append(f"| {row['workload']} | " + " | ".join(_cell(v) for v in (
            b.get("gemm_gflop"), b.get("mbytes"), b.get("bound_ms"), row.get("minitensor_ms"), row.get("pytorch_ms"),
            row.get("ratio"), b.get("minitensor_over_bound"), b.get("pytorch_over_bound"), b.get("target_ms"),
            b.get("meets_target"))) + " |")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", type=int, default=2, help="BLAS threads of the sgemm rate (default: 2)")
    p.add_argument("--rates-only", action="store_true", help="print this process's rates as JSON and stop")
    args = p.parse_args(argv)
    if args.rates_only:
        print(json.dumps(_rates_here(args.threads)))
        return 0
    rates = combine(_rates_here(args.threads))
    print(f"sgemm {rates['sgemm_gflops']:.1f} GFLOP/s, memcpy {rates['memcpy_gbps']:.1f} GB/s ({rates['openblas']})")
    for name, batch in BATCH_SIZES.items():
        b = bound(name, batch, rates)
        print(f"{name:12} {b['gemm_gflop']:8.3f} GFLOP {b['mbytes']:9.1f} MB   bound {b['bound_ms']:8.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
