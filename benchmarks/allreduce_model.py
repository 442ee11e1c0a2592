"""The alpha-beta cost of a ring all-reduce for the four workloads, at 8, 64 and 512 GPUs over NVLink and
InfiniBand: when does data parallelism stop paying? (docs/distributed.md shows the table and the
assumptions.)

    python benchmarks/allreduce_model.py

Ring all-reduce of n bytes on p ranks: T = 2(p-1) alpha + 2 (p-1)/p n beta (a reduce-scatter and an
all-gather, p-1 steps each, every step moving n/p bytes). n = 4 x parameters (float32 gradients). Weak
scaling (a fixed batch per GPU, the workloads' own): one step takes t + T without overlap, and t + max(0,
T - t_backward) with perfect overlap (backward = 2/3 of t); the speedup over one GPU is p t / step. With a
flat ring the latency term alone caps the speedup at t / (2 alpha), whatever p is.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# (alpha s, bandwidth bytes/s per GPU and direction). NVLink: H100 SXM, NVSwitch, 900 GB/s bidirectional =
# 450 GB/s each way; alpha ~1 us per ring step (NCCL's small-message all-reduce on 8 GPUs takes ~15 us).
# InfiniBand NDR: 400 Gb/s = 50 GB/s per GPU (one NIC each), alpha ~5 us per step (wire, switch, NCCL's
# proxy). An NVLink domain of 64 or 512 GPUs exists only as NVLink Switch systems (up to 256 or 576 GPUs):
# those rows read "if the whole job had NVLink".
FABRICS = {"NVLink": (1e-6, 450e9), "InfiniBand NDR": (5e-6, 50e9)}
GPUS = (8, 64, 512)
# ms/step on this repository's 2-core CPU (2 threads), docs/perf/2026-11-23-cpu-2threads-after-issue-14-15-
# merges.md; and forward+backward FLOPs per step (6 x multiply-adds x batch; the GAN: D on real and fake, G).
CPU_MS = {"mlp-s": 0.44, "mlp-l": 23.38, "cnn": 14.56, "gan": 2.17}
GPU_FLOPS_PER_S, GPU_FLOOR_S = 200e12, 0.25e-3  # assumed H100 step: FLOPs at 200 TFLOP/s, at least 0.25 ms


def parameter_counts() -> dict[str, int]:
    from benchmarks.workloads import IMAGE_WORKLOADS, build
    return {name: sum(p.numel() for m in build(name).modules.values() for p in m.parameters())
            for name in IMAGE_WORKLOADS}


def step_flops(name: str) -> float:
    """Multiply-adds of one forward per sample, x 6 (forward + backward) x the batch."""
    macs = {"mlp-s": 784 * 128 + 128 * 10, "mlp-l": 784 * 1024 + 1024 * 1024 + 1024 * 10,
            "cnn": 28 * 28 * 32 * 9 + 14 * 14 * 64 * 32 * 9 + 3136 * 128 + 128 * 10}
    batch = {"mlp-s": 100, "mlp-l": 512, "cnn": 64, "gan": 64}[name]
    if name == "gan":  # D forward+backward on real and fake and in G's step (3), G forward+backward (1.33)
        return 2 * batch * (3 * 3 * (784 * 256 + 256) + 4 * (100 * 256 + 256 * 784))
    return 6 * macs[name] * batch


def ring_allreduce_s(n_bytes: float, p: int, alpha: float, bandwidth: float) -> float:
    return 2 * (p - 1) * alpha + 2 * (p - 1) / p * n_bytes / bandwidth


def table() -> str:
    counts = parameter_counts()
    lines = ["| workload | params | grad MB | t CPU ms | t GPU ms (assumed) | fabric | p | all-reduce ms | "
             "speedup GPU, no overlap | speedup GPU, overlap | speedup CPU-time, no overlap |",
             "| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
    for name, params in counts.items():
        n = 4 * params
        reductions = 2 if name == "gan" else 1  # the GAN reduces D's and G's gradients separately
        t_gpu = max(step_flops(name) / GPU_FLOPS_PER_S, GPU_FLOOR_S)
        t_cpu = CPU_MS[name] / 1e3
        for fabric, (alpha, bw) in FABRICS.items():
            for p in GPUS:
                t_ar = reductions * ring_allreduce_s(n / reductions, p, alpha, bw)
                plain = p * t_gpu / (t_gpu + t_ar)
                hidden = p * t_gpu / (t_gpu + max(0.0, t_ar - 2 * t_gpu / 3))
                cpu = p * t_cpu / (t_cpu + t_ar)
                lines.append(f"| {name} | {params:,} | {n / 1e6:.2f} | {1e3 * t_cpu:.2f} | {1e3 * t_gpu:.2f} | "
                             f"{fabric} | {p} | {1e3 * t_ar:.3f} | {plain:.0f} | {hidden:.0f} | {cpu:.0f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(table())
