"""The added losses and distances against PyTorch: values and the gradients of every float input, in float64,
for every function and reduction (each case builds the same inputs for both libraries)."""
import math
import warnings

import numpy as np
import pytest

import minitensor as mt
import minitensor.nn.functional as MF

pytestmark = pytest.mark.torch
REDUCTIONS = ["mean", "sum", "none"]
INF = math.inf


def _data(seed):
    rng = np.random.default_rng(seed)
    signs = lambda *s: rng.choice([-1.0, 1.0], size=s)  # noqa: E731
    probs = rng.random((3, 4))
    probs[0, 1] = probs[2, 3] = 0.0  # zero targets: xlogy's 0 in the value, its nan in the target's gradient
    counts = np.array([[0.0, 0.5, 1.0, 3.5], [2.0, 7.0, 1.5, 4.0], [0.0, 1.0, 2.5, 9.0]])
    return rng, signs, probs, counts


def _cases():
    """(name, [(array, requires_grad) or a plain value], kwargs) for each function and its options."""
    rng, signs, probs, counts = _data(0)
    n = rng.standard_normal
    cases = []
    for red in REDUCTIONS + ["batchmean"]:
        cases.append(("kl_div", [(n((3, 4)), True), (probs, True)], {"reduction": red}))
        cases.append(("kl_div", [(n((3, 4)), True), (n((4,)), True)], {"reduction": red, "log_target": True}))
    for red in REDUCTIONS:
        cases += [
            ("margin_ranking_loss", [(n(6), True), (n(6), True), (signs(6), True)], {"margin": 0.3, "reduction": red}),
            ("hinge_embedding_loss", [(n((3, 4)), True), (signs(4), False)], {"margin": 0.5, "reduction": red}),
            ("cosine_embedding_loss", [(n((4, 5)), True), (n((4, 5)), True), (signs(4), False)],
             {"margin": 0.2, "reduction": red}),
            ("cosine_embedding_loss", [(n(5), True), (n(5), True), (np.array(-1.0), False)],
             {"margin": -0.5, "reduction": red}),
            ("soft_margin_loss", [(n((3, 4)) * 3, True), (signs(4), False)], {"reduction": red}),
            ("multilabel_soft_margin_loss", [(n((3, 4)), True), ((n((3, 4)) > 0) * 1.0, True)], {"reduction": red}),
            ("multilabel_soft_margin_loss", [(n((2, 3, 4)), True), ((n((2, 3, 4)) > 0) * 1.0, False)],
             {"weight": rng.random(4), "reduction": red}),
            ("poisson_nll_loss", [(n((3, 4)), True), (counts + 0.25, True)], {"reduction": red}),
            ("poisson_nll_loss", [(rng.random((3, 4)) + 0.1, True), (counts + 0.25, True)],
             {"log_input": False, "full": True, "reduction": red}),
            ("poisson_nll_loss", [(n((3, 4)), True), (counts, False)], {"full": True, "reduction": red}),
            ("gaussian_nll_loss", [(n((3, 4)), True), (n((3, 4)), True), (rng.random((3, 4)) + 0.1, True)],
             {"reduction": red}),
            ("gaussian_nll_loss", [(n((3, 4)), True), (n((4,)), True), (np.array([0.5, 1e-8, 2.0]), True)],
             {"full": True, "eps": 1e-4, "reduction": red}),
            ("gaussian_nll_loss", [(n((3, 4)), True), (n((3, 4)), True), (rng.random((1, 4)) + 0.1, True)],
             {"reduction": red}),
            ("gaussian_nll_loss", [(n((3, 4)), True), (n((3, 4)), False), 0.7], {"reduction": red}),
        ]
        for p, margin, weight in [(1, 1.0, None), (2, 0.7, rng.random(4))]:
            cases.append(("multi_margin_loss", [(n((5, 4)), True), (rng.integers(0, 4, 5), False)],
                          {"p": p, "margin": margin, "weight": weight, "reduction": red}))
        cases.append(("multi_margin_loss", [(n(4), True), (np.array(2), False)], {"reduction": red}))
        for p, swap in [(2, False), (1, True), (3, True)]:
            cases.append(("triplet_margin_loss", [(n((4, 5)), True), (n((4, 5)), True), (n((4, 5)), True)],
                          {"margin": 0.5, "p": p, "swap": swap, "reduction": red}))
    a = np.array  # at the kinks: clamp(min=0) passes the gradient at 0, multi_margin_loss's kernel does not
    cases += [
        ("margin_ranking_loss", [(a([1.0, 2.0]), True), (a([0.0, 2.0]), True), (a([1.0, 1.0]), True)],
         {"margin": 1.0, "reduction": "sum"}),
        ("hinge_embedding_loss", [(a([1.0, 0.5, 2.0]), True), (a([-1.0, -1.0, 0.0]), False)], {"reduction": "sum"}),
        ("triplet_margin_loss", [(a([[1.0, 0.0]]), True), (a([[2.0, 0.0]]), True), (a([[3.0, 0.0]]), True)],
         {"eps": 0.0, "reduction": "sum"}),
        ("multi_margin_loss", [(a([[1.0, 2.0, 0.0]]), True), (a([1]), False)], {"p": 2, "reduction": "sum"}),
        ("multi_margin_loss", [(a([[1.0, 2.0, 0.0]]), True), (a([1]), False)], {"reduction": "sum"}),
    ]
    cases.append(("cosine_similarity", [(n((3, 1, 5)), True), (n((4, 5)), True)], {"dim": -1}))
    small = n((4, 3))
    small[1] = 1e-10  # a norm under eps: the floor's value without its gradient
    cases.append(("cosine_similarity", [(small, True), (n((4, 3)), True)], {}))
    for p, keepdim in [(2, False), (1, True), (3.5, False), (INF, False), (-INF, True), (-1, False)]:
        cases.append(("pairwise_distance", [(n((3, 5)), True), (n(5), True)], {"p": p, "keepdim": keepdim}))
    rows = np.array([[1.0, 2, 0], [1, 2, 0], [0, 1, 1], [2, 3, 1], [0.5, -1, 2]])  # a zero distance, tied maxima
    for p in [0, 0.5, 1, 1.5, 2, 3, INF]:
        cases.append(("pdist", [(rows, True)], {"p": p}))
    return cases


CASES = _cases()


def _run(lib, fn, args, kwargs, out_grad_seed=1):
    tensors = []
    for a in args:
        if isinstance(a, tuple):
            array, grad = a
            tensors.append(lib.tensor(array, requires_grad=grad and array.dtype.kind == "f"))
        else:
            tensors.append(a)
    kwargs = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kl_div's 'mean' warning (checked elsewhere)
        out = fn(*tensors, **kwargs)
    w = np.random.default_rng(out_grad_seed).standard_normal(tuple(out.shape))
    (out * lib.tensor(w)).sum().backward()
    grads = [t.grad.numpy() if hasattr(t, "grad") and t.grad is not None else None for t in tensors]
    return out.detach().numpy(), grads


@pytest.mark.parametrize("case", range(len(CASES)), ids=lambda i: f"{CASES[i][0]}-{i}")
def test_values_and_gradients_match_pytorch(case):
    torch = pytest.importorskip("torch")
    name, args, kwargs = CASES[case]
    want, want_grads = _run(torch, getattr(torch.nn.functional, name), args, kwargs)
    got, got_grads = _run(mt, getattr(MF, name), args, kwargs)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    for g, w in zip(got_grads, want_grads):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12)  # nan where PyTorch's is nan


@pytest.mark.parametrize("name, args, kwargs", [
    ("pairwise_distance", [np.array([[1.0, 2], [3, 4]]), np.array([[2.0, 1], [3, 4]])], {"p": 0}),
    ("soft_margin_loss", [np.array([-30.0, 0.5]), np.array([1.0, -1.0])], {"reduction": "none"}),
    ("kl_div", [np.array([-1.0, -2.0]), np.array([0.0, -0.5])], {"reduction": "none"}),
])
def test_values_without_gradients_match_pytorch(name, args, kwargs):
    torch = pytest.importorskip("torch")
    want = getattr(torch.nn.functional, name)(*map(torch.tensor, args), **kwargs).numpy()
    got = getattr(MF, name)(*map(mt.tensor, args), **kwargs).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("module, args, call", [
    ("KLDivLoss", {"reduction": "batchmean", "log_target": True}, ((3, 4), (3, 4))),
    ("PoissonNLLLoss", {"log_input": True, "full": True, "reduction": "sum"}, ((3, 4), (3, 4))),
    ("MarginRankingLoss", {"margin": 0.2}, ((5,), (5,), "sign5")),
    ("HingeEmbeddingLoss", {"margin": 2.0, "reduction": "none"}, ((5,), "sign5")),
    ("CosineEmbeddingLoss", {"margin": 0.1}, ((5, 3), (5, 3), "sign5")),
    ("SoftMarginLoss", {}, ((5,), "sign5")),
    ("MultiLabelSoftMarginLoss", {"reduction": "sum"}, ((5, 3), (5, 3))),
    ("MultiMarginLoss", {"p": 2, "margin": 0.5}, ((5, 3), "class5")),
    ("TripletMarginLoss", {"margin": 0.3, "p": 1.0, "swap": True}, ((5, 3), (5, 3), (5, 3))),
    ("CosineSimilarity", {"dim": 0}, ((5, 3), (5, 3))),
    ("PairwiseDistance", {"p": 1.0, "keepdim": True}, ((5, 3), (5, 3))),
])
def test_modules_match_pytorch(module, args, call):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    arrays = [rng.choice([-1.0, 1.0], 5) if a == "sign5" else rng.integers(0, 3, 5) if a == "class5"
              else np.abs(rng.standard_normal(a)) for a in call]
    want = getattr(torch.nn, module)(**args)(*map(torch.tensor, arrays))
    got = getattr(mt.nn, module)(**args)(*map(mt.tensor, arrays))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10)
    assert repr(got.shape) and tuple(got.shape) == tuple(want.shape)
