"""The dtypes ops give under ``autocast("cpu", dtype=bfloat16)``, as PyTorch 2.13's CPU policy gives them:
GEMMs and prelu in bfloat16, the losses, cdist, inverse, prod, trace and the reflect (1-, 2-d) / replicate
pads in float32, and everything else (softmax, log_softmax, the norms, exp/log, sums and scans, addmv, the
circular, constant and 3-d reflect pads) in the dtype it is fed, unlike CUDA's longer float32 list."""
from __future__ import annotations

import pytest

import minitensor as mt


def autocast_dtypes(lib):
    """Each op's output dtype under CPU autocast, fed float32 and fed bfloat16 tensors."""
    F = lib.nn.functional
    out = {}
    for src in ("float32", "bfloat16"):
        dt = getattr(lib, src)
        x, t = lib.rand(2, 4, 6).to(dt) + 0.5, lib.rand(2, 4, 6).to(dt)
        w, m, img = lib.ones(6).to(dt), lib.rand(6, 6).to(dt), lib.rand(1, 2, 5, 5).to(dt)
        labels = lib.tensor([0, 1, 2, 3])
        ops = {
            "softmax": lambda: F.softmax(x, -1), "log_softmax": lambda: F.log_softmax(x, -1),
            "layer_norm": lambda: F.layer_norm(x, (6,), w, w), "group_norm": lambda: F.group_norm(x, 2),
            "batch_norm": lambda: F.batch_norm(x, None, None, training=True),
            "instance_norm": lambda: F.instance_norm(x),
            "exp": lambda: x.exp(), "log": lambda: x.log(), "pow": lambda: x.pow(2), "sum": lambda: x.sum(),
            "cumsum": lambda: x.cumsum(0), "logsumexp": lambda: x.logsumexp(0), "rsqrt": lambda: x.rsqrt(),
            "softplus": lambda: F.softplus(x), "norm": lambda: x.norm(), "normalize": lambda: F.normalize(x),
            "cosine_similarity": lambda: F.cosine_similarity(x, t), "prod": lambda: x.prod(),
            "matmul": lambda: x @ m, "linear": lambda: F.linear(x, m), "addmm": lambda: lib.addmm(m, m, m),
            "bmm": lambda: lib.bmm(x, x.transpose(1, 2)), "mv": lambda: lib.mv(m, w), "dot": lambda: lib.dot(w, w),
            "conv2d": lambda: F.conv2d(img, lib.ones(3, 2, 3, 3).to(dt)),
            "einsum": lambda: lib.einsum("bij,jk->bik", x, m), "sdpa": lambda: F.scaled_dot_product_attention(x, x, x),
            "mse": lambda: F.mse_loss(x, t), "bce_logits": lambda: F.binary_cross_entropy_with_logits(x, t),
            "cross_entropy": lambda: F.cross_entropy(x[0], labels), "nll": lambda: F.nll_loss(x[0], labels),
            "kl_div": lambda: F.kl_div(x, t, reduction="batchmean"), "cdist": lambda: lib.cdist(x, x),
            "inverse": lambda: lib.inverse(m + 3 * lib.eye(6).to(dt)),
            "gelu": lambda: F.gelu(x), "add_f32": lambda: x + lib.ones(6), "cat_f32": lambda: lib.cat([x, x.float()]),
            "prelu": lambda: F.prelu(x, lib.ones(4) / 4), "trace": lambda: lib.trace(m),
            "addmv": lambda: lib.addmv(w, m, w), "reflection_pad": lambda: lib.nn.ReflectionPad2d(1)(img),
            **{f"{mode}{d}d": lambda d=d, mode=mode: F.pad(lib.rand(1, 2, *(4,) * d).to(dt), (1, 2) * d, mode=mode)
               for mode in ("reflect", "replicate", "circular", "constant") for d in (1, 2, 3)},
        }
        with lib.autocast("cpu", dtype=lib.bfloat16):
            for name, op in ops.items():
                out[f"{src}:{name}"] = str(op().dtype).split(".")[-1]
    return out


def test_cpu_autocast_output_dtypes():
    got = autocast_dtypes(mt)
    for name in ("softmax", "log_softmax", "layer_norm", "group_norm", "batch_norm", "exp", "sum", "norm", "gelu"):
        assert got[f"bfloat16:{name}"] == "bfloat16" and got[f"float32:{name}"] == "float32", name
    for name in ("matmul", "linear", "addmm", "bmm", "conv2d", "einsum", "sdpa"):
        assert got[f"float32:{name}"] == got[f"bfloat16:{name}"] == "bfloat16", name
    for name in ("mse", "bce_logits", "cross_entropy", "nll", "kl_div", "cdist", "inverse", "prod"):
        assert got[f"float32:{name}"] == got[f"bfloat16:{name}"] == "float32", name
    assert got["float32:mv"] == got["float32:dot"] == "float32"  # not on the CPU's lower-precision list
    assert got["bfloat16:add_f32"] == got["bfloat16:cat_f32"] == "float32"


def test_cpu_autocast_prelu_trace_pads_and_addmv():
    """prelu is on the lower-precision list; trace, reflection_pad1d/2d and replication_pad1d/2d/3d on the
    float32 one; addmv (a CUDA-only entry), reflection_pad3d and the other pads on neither."""
    got = autocast_dtypes(mt)
    assert got["float32:prelu"] == got["bfloat16:prelu"] == "bfloat16"
    for name in ("trace", "reflection_pad", "reflect1d", "reflect2d", "replicate1d", "replicate2d", "replicate3d"):
        assert got[f"float32:{name}"] == got[f"bfloat16:{name}"] == "float32", name
    for name in ("addmv", "reflect3d", "circular1d", "circular2d", "circular3d", "constant1d", "constant3d"):
        assert got[f"float32:{name}"] == "float32" and got[f"bfloat16:{name}"] == "bfloat16", name


@pytest.mark.torch
def test_cpu_autocast_output_dtypes_match_torch():
    torch = pytest.importorskip("torch")
    assert autocast_dtypes(mt) == autocast_dtypes(torch)


def float32_list_dtypes(lib):
    """More of the CPU's float32 list, fed bfloat16 under CPU autocast: the 3-d pools, max_unpool, the
    margin / embedding losses (composed of ops that would otherwise stay in bfloat16) and quantile (which
    refuses bfloat16 outside autocast)."""
    F = lib.nn.functional
    x = lib.rand(2, 3, 4, 4, 4).to(lib.bfloat16)
    v, t = lib.rand(4, 5).to(lib.bfloat16) + 0.1, lib.rand(4, 5).to(lib.bfloat16)
    sign = lib.ones(4, 5).to(lib.bfloat16)
    ops = {
        "avg_pool3d": lambda: F.avg_pool3d(x, 2), "max_pool3d": lambda: F.max_pool3d(x, 2),
        "adaptive_avg_pool3d": lambda: F.adaptive_avg_pool3d(x, 2),
        "max_unpool2d": lambda: F.max_unpool2d(*F.max_pool2d(x[:, :, 0], 2, return_indices=True), 2),
        "cosine_embedding": lambda: F.cosine_embedding_loss(v, t, sign[:, 0]),
        "hinge_embedding": lambda: F.hinge_embedding_loss(v, sign), "poisson_nll": lambda: F.poisson_nll_loss(v, t),
        "margin_ranking": lambda: F.margin_ranking_loss(v[0], t[0], sign[0]),
        "soft_margin": lambda: F.soft_margin_loss(v, sign), "triplet": lambda: F.triplet_margin_loss(v, t, v),
        "multi_margin": lambda: F.multi_margin_loss(v, lib.tensor([0, 1, 2, 3])),
        "quantile": lambda: lib.quantile(v, 0.5, dim=1), "nanquantile": lambda: lib.nanquantile(v, 0.25),
        "quantile_q": lambda: lib.quantile(v, lib.tensor([0.5, 0.75]).to(lib.bfloat16)),
        "max_pool2d": lambda: F.max_pool2d(x[:, :, 0], 2), "gaussian_nll": lambda: F.gaussian_nll_loss(v, t, v),
    }
    with lib.autocast("cpu", dtype=lib.bfloat16):
        return {name: str(op().dtype).split(".")[-1] for name, op in ops.items()}


def test_cpu_autocast_3d_pools_margin_losses_and_quantile_in_float32():
    got = float32_list_dtypes(mt)
    assert got.pop("max_pool2d") == got.pop("gaussian_nll") == "bfloat16"  # on neither list
    assert set(got.values()) == {"float32"}, got


@pytest.mark.torch
def test_cpu_autocast_3d_pools_margin_losses_and_quantile_match_torch():
    torch = pytest.importorskip("torch")
    assert float32_list_dtypes(mt) == float32_list_dtypes(torch)
