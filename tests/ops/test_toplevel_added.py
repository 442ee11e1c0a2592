"""PyTorch's top-level names added for programs written for it: shape and linear algebra (``t``,
``split_with_sizes``, ``diagflat``, ``addr``, ``unravel_index``, ``combinations``, ``vander``,
``index_reduce``, the in-place shape methods, ``resize_``, ``sum_to_size``), statistics (``aminmax``, ``cov``,
``corrcoef``, ``histogram``, ``gradient``), creation (``logspace``, ``range``, ``asarray``, ``frombuffer``,
``empty_strided``, ``scalar_tensor``, the windows) and the ``torch.*`` forms of ``nn.functional`` ops."""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
import scipy.signal
from hypothesis import given, settings, strategies as st

import minitensor as mt
from minitensor.testing import gradcheck

rng = np.random.default_rng(0)


def f64(*shape: int, requires_grad: bool = False) -> mt.Tensor:
    return mt.tensor(rng.standard_normal(shape), dtype=mt.float64, requires_grad=requires_grad)


# ------------------------------------------------------------------------------------------- shape
@settings(max_examples=25, deadline=None)
@given(st.integers(1, 5), st.integers(0, 4), st.booleans())
def test_combinations_match_itertools(n, r, with_replacement):
    x = np.arange(n, dtype=np.float64) * 1.5
    combos = (itertools.combinations_with_replacement if with_replacement else itertools.combinations)(x, r)
    got = mt.combinations(mt.tensor(x), r, with_replacement)
    expected = np.array(list(combos)).reshape(-1, r) if r else np.zeros(0)
    assert got.shape == expected.shape and np.array_equal(got.numpy(), expected)


def test_combinations_gradient_and_errors():
    gradcheck(lambda x: mt.combinations(x, 2), (f64(4, requires_grad=True),))
    with pytest.raises(RuntimeError, match="1D vector"):
        mt.combinations(mt.ones(2, 2))


@pytest.mark.parametrize("increasing", [False, True])
@pytest.mark.parametrize("N", [None, 0, 1, 4])
def test_vander_matches_numpy(N, increasing):
    x = np.array([0.0, 1.5, -2.0, 3.0])
    got = mt.vander(mt.tensor(x, dtype=mt.float64), N, increasing)
    np.testing.assert_allclose(got.numpy(), np.vander(x, N, increasing))
    assert mt.vander(mt.tensor([1, 2, 3])).dtype == mt.int64


def test_vander_gradient_is_finite_at_zero_and_errors():
    x = mt.tensor([0.0, 0.5, -1.2], dtype=mt.float64, requires_grad=True)
    gradcheck(lambda x: mt.vander(x, 4), (x,))
    with pytest.raises(RuntimeError, match="one-dimensional"):
        mt.vander(mt.ones(2, 2))
    with pytest.raises(RuntimeError, match="non-negative"):
        mt.vander(mt.ones(2), -1)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=3), st.data())
def test_unravel_index_matches_numpy(shape, data):
    numel = int(np.prod(shape))
    flat = data.draw(st.lists(st.integers(0, numel - 1), min_size=1, max_size=6))
    got = mt.unravel_index(mt.tensor(flat), tuple(shape))
    for g, e in zip(got, np.unravel_index(flat, shape)):
        assert g.dtype == mt.int64 and g.tolist() == e.tolist()


def test_unravel_index_wraps_and_errors():
    assert [c.tolist() for c in mt.unravel_index(mt.tensor([-1, 6]), (2, 3))] == [[1, 0], [2, 0]]
    with pytest.raises(TypeError, match="integer dtype"):
        mt.unravel_index(mt.tensor([1.0]), (2, 3))
    with pytest.raises(ValueError, match="negative"):
        mt.unravel_index(mt.tensor([1]), (2, -3))


def test_diagflat_addr_split_with_sizes_and_t():
    x = f64(2, 2)
    np.testing.assert_array_equal(mt.diagflat(x, 1).numpy(), np.diagflat(x.numpy(), 1))
    inp, a, b = f64(3, 4), f64(3), f64(4)
    np.testing.assert_allclose(mt.addr(inp, a, b, beta=0.5, alpha=2).numpy(),
                               0.5 * inp.numpy() + 2 * np.outer(a.numpy(), b.numpy()))
    nan = mt.full((3, 4), float("nan"), dtype=mt.float64)
    assert not mt.addr(nan, a, b, beta=0).isnan().any()  # beta == 0 ignores input, nan and all
    y = inp.clone()
    assert y.addr_(a, b) is y and np.allclose(y.numpy(), inp.numpy() + np.outer(a.numpy(), b.numpy()))
    gradcheck(lambda i, a, b: mt.addr(i, a, b, alpha=3), (f64(3, 4, requires_grad=True),
                                                           f64(3, requires_grad=True), f64(4, requires_grad=True)))
    assert [p.shape[1] for p in mt.split_with_sizes(inp, [1, 3], 1)] == [1, 3]
    with pytest.raises(RuntimeError, match="sum exactly"):
        mt.split_with_sizes(inp, [1, 1])
    with pytest.raises(TypeError):
        mt.split_with_sizes(inp, 2)
    assert mt.t(inp).shape == (4, 3) and inp.movedim(0, 1).shape == (4, 3) and inp.swapaxes(0, 1).shape == (4, 3)
    with pytest.raises(RuntimeError, match="<= 2 dimensions"):
        mt.t(mt.ones(1, 2, 3))
    assert a.dot(a).item() == pytest.approx(float(a.numpy() @ a.numpy()))
    np.testing.assert_allclose(inp.mv(b).numpy(), inp.numpy() @ b.numpy())


@pytest.mark.parametrize("reduce", ["prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_index_reduce_matches_a_loop(reduce, include_self):
    x, src, index = f64(5, 3), f64(4, 3), [0, 2, 0, 4]
    expected = x.numpy().copy()
    ops = {"prod": np.prod, "mean": np.mean, "amax": np.max, "amin": np.min}
    for row in set(index):  # the reference: one row at a time
        values = [src.numpy()[i] for i, r in enumerate(index) if r == row]
        values = ([x.numpy()[row]] if include_self else []) + values
        expected[row] = ops[reduce](np.stack(values), axis=0)
    got = x.index_reduce(0, mt.tensor(index), src, reduce, include_self=include_self)
    np.testing.assert_allclose(got.numpy(), expected)
    y = x.clone()
    assert y.index_reduce_(0, mt.tensor(index), src, reduce, include_self=include_self) is y
    np.testing.assert_allclose(y.numpy(), expected)
    with pytest.raises(RuntimeError, match="prod, mean, amax or amin"):
        x.index_reduce(0, mt.tensor(index), src, "sum")


def test_in_place_shape_methods_change_self_and_keep_the_graph():
    a = f64(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        a.t_()
    b = a * 2
    version = b._version
    assert b.t_() is b and b.shape == (3, 2) and b._version == version + 1
    b.unsqueeze_(0)
    assert b.shape == (1, 3, 2)
    (b * mt.arange(2.0, dtype=mt.float64)).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.array([[0, 0, 0], [2, 2, 2]]))
    c = mt.zeros(3, 1, 2)
    assert c.squeeze_(1).shape == (3, 2) and c.transpose_(0, 1).shape == (2, 3)
    assert c.swapaxes_(0, 1).shape == (3, 2) and c.swapdims_(0, 1).shape == (2, 3)
    x = mt.ones(2, 3, requires_grad=True)
    y = x * 1
    z = y * y
    y.t_()  # y was saved by the product: its backward now refuses, as PyTorch's
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.sum().backward()


def test_resize_and_sum_to_size():
    c = mt.arange(6.0).reshape(2, 3)
    view = c.view(-1)
    assert c.resize_(2, 2) is c and c.tolist() == [[0, 1], [2, 3]]
    c[0, 0] = 9.0  # shrinking keeps the memory
    assert view[0].item() == 9.0
    grown = mt.arange(4.0).resize_(2, 4)
    assert grown.shape == (2, 4) and grown.view(-1)[:4].tolist() == [0, 1, 2, 3]
    assert mt.ones(5).resize_as_(mt.ones(2, 2)).shape == (2, 2)
    with pytest.raises(RuntimeError, match="require grad"):
        mt.ones(3, requires_grad=True).resize_(2)
    x = f64(2, 3, 4)
    np.testing.assert_allclose(x.sum_to_size(3, 1).numpy(), x.numpy().sum(0).sum(1, keepdims=True))
    assert x.sum_to_size((2, 3, 4)) is x
    with pytest.raises(RuntimeError, match="not expandable"):
        mt.ones(3).sum_to_size(4)
    gradcheck(lambda x: x.sum_to_size(1, 4), (f64(2, 3, 4, requires_grad=True),))


# ------------------------------------------------------------------------------------------- statistics
@settings(max_examples=25, deadline=None)
@given(st.integers(1, 4), st.integers(2, 6), st.integers(0, 2), st.booleans(), st.booleans())
def test_cov_and_corrcoef_match_numpy(variables, observations, correction, with_f, with_a):
    x = rng.standard_normal((variables, observations))
    fw = rng.integers(1, 4, observations) if with_f else None
    aw = rng.random(observations) + 0.1 if with_a else None
    with warnings.catch_warnings():  # both warn when the degrees of freedom are <= 0 (and divide by 0)
        warnings.simplefilter("ignore", (RuntimeWarning, UserWarning))
        got = mt.cov(mt.tensor(x), correction=correction, fweights=None if fw is None else mt.tensor(fw),
                     aweights=None if aw is None else mt.tensor(aw))
        expected = np.cov(x, ddof=correction, fweights=fw, aweights=aw)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(mt.corrcoef(mt.tensor(x)).numpy(), np.corrcoef(x), rtol=1e-10, atol=1e-12)


def test_cov_gradient_dtype_and_errors():
    gradcheck(lambda x: mt.cov(x), (f64(3, 5, requires_grad=True),))
    gradcheck(lambda x, w: mt.cov(x, aweights=w), (f64(2, 5, requires_grad=True),
                                                   mt.tensor(rng.random(5) + 0.5, requires_grad=True)))
    gradcheck(mt.corrcoef, (f64(3, 6, requires_grad=True),))
    assert mt.cov(mt.tensor([1, 2, 4])).dtype == mt.float32 and mt.cov(mt.tensor([1.0, 2.0])).shape == ()
    with pytest.raises(RuntimeError, match="two or fewer"):
        mt.cov(mt.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="integral"):
        mt.cov(mt.ones(2, 3), fweights=mt.ones(3))
    with pytest.raises(RuntimeError, match="cannot be negative"):
        mt.cov(mt.ones(2, 3), fweights=mt.tensor([1, -1, 1]))


@pytest.mark.parametrize("dim, keepdim", [(None, False), (None, True), (0, False), (1, True), (-1, False)])
def test_aminmax(dim, keepdim):
    x = f64(3, 4)
    got = mt.aminmax(x, dim=dim, keepdim=keepdim)
    axis = None if dim is None else dim
    np.testing.assert_array_equal(got.min.numpy(), x.numpy().min(axis, keepdims=keepdim))
    np.testing.assert_array_equal(got.max.numpy(), x.max(dim, keepdim=keepdim)[0].numpy() if dim is not None else
                                  x.numpy().max(keepdims=keepdim))
    assert x.aminmax(dim=dim, keepdim=keepdim).min.shape == got.min.shape
    with pytest.raises(RuntimeError, match="empty"):
        mt.aminmax(mt.ones(0, 3))


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 30), st.integers(1, 8), st.booleans(), st.booleans(), st.booleans())
def test_histogram_matches_numpy(n, bins, given_range, weighted, density):
    x = rng.standard_normal(n)
    lo_hi = (-1.0, 1.5) if given_range else None
    w = rng.random(n) if weighted else None
    hist, edges = mt.histogram(mt.tensor(x), bins, range=lo_hi, weight=None if w is None else mt.tensor(w),
                               density=density)
    e_edges = np.histogram_bin_edges(x, bins, range=lo_hi)
    np.testing.assert_allclose(edges.numpy(), e_edges, rtol=1e-12)
    # counted against minitensor's own edges (PyTorch's linspace): NumPy's may differ from them by an ulp, which
    # moves a value lying on an edge to the other bin (PyTorch agrees with minitensor there)
    e_hist, _ = np.histogram(x, edges.numpy(), weights=w, density=density)
    np.testing.assert_allclose(hist.numpy(), e_hist, rtol=1e-10, atol=1e-12)


def test_histogram_edges_tensor_and_errors():
    x = mt.tensor([-2.0, 0.0, 0.25, 0.5, 1.0, 3.0])
    hist, edges = mt.histogram(x, mt.tensor([0.0, 0.5, 1.0]))
    assert hist.tolist() == [2, 2] and edges.tolist() == [0.0, 0.5, 1.0]
    assert x.histogram(2).hist.tolist() == [3, 3]
    with pytest.raises(RuntimeError, match="same dtype"):
        mt.histogram(x, mt.tensor([0.0, 1.0], dtype=mt.float64))
    with pytest.raises(RuntimeError, match="bins must be > 0"):
        mt.histogram(x, 0)
    with pytest.raises(RuntimeError, match="floating point"):
        mt.histogram(mt.tensor([1, 2]), 2)


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("case", ["default", "scalar", "per-dim", "coordinates", "one-dim"])
def test_gradient_matches_numpy(case, edge_order):
    y = rng.standard_normal((5, 6))
    coords = [np.cumsum(rng.random(5) + 0.1), np.cumsum(rng.random(6) + 0.1)]
    kwargs, args, axis = {
        "default": ({}, (), None), "scalar": ({"spacing": 2.0}, (2.0,), None),
        "per-dim": ({"spacing": [0.5, 3.0]}, (0.5, 3.0), None),
        "coordinates": ({"spacing": [mt.tensor(c) for c in coords]}, tuple(coords), None),
        "one-dim": ({"dim": 1, "spacing": [mt.tensor(coords[1])]}, (coords[1],), 1)}[case]
    got = mt.gradient(mt.tensor(y), edge_order=edge_order, **kwargs)
    expected = np.gradient(y, *args, axis=axis, edge_order=edge_order)
    expected = expected if isinstance(expected, (list, tuple)) else [expected]
    assert isinstance(got, tuple) and len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g.numpy(), e, rtol=1e-10, atol=1e-12)


def test_gradient_is_differentiable_and_checks():
    gradcheck(lambda x: mt.gradient(x, edge_order=2)[1], (f64(4, 5, requires_grad=True),))
    assert mt.gradient(mt.tensor([1, 2, 4]))[0].dtype == mt.float32
    with pytest.raises(RuntimeError, match="edge_order=1 and edge_order=2"):
        mt.gradient(mt.ones(4), edge_order=3)
    with pytest.raises(RuntimeError, match="at least edge_order"):
        mt.gradient(mt.ones(2), edge_order=2)


# ------------------------------------------------------------------------------------------- creation
@pytest.mark.parametrize("name, scipy_name", [("hann_window", "hann"), ("hamming_window", "hamming"),
                                              ("bartlett_window", "bartlett"), ("blackman_window", "blackman"),
                                              ("kaiser_window", ("kaiser", 12.0))])
@pytest.mark.parametrize("length", [0, 1, 2, 7, 16])
@pytest.mark.parametrize("periodic", [True, False])
def test_windows_match_scipy(name, scipy_name, length, periodic):
    got = getattr(mt, name)(length, periodic, dtype=mt.float64)
    expected = scipy.signal.get_window(scipy_name, length, fftbins=periodic) if length else np.zeros(0)
    assert got.shape == (length,) and getattr(mt, name)(length).dtype == mt.float32
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-14)


def test_window_arguments_and_errors():
    np.testing.assert_allclose(mt.hamming_window(8, False, 0.6, 0.4, dtype=mt.float64).numpy(),
                               0.6 - 0.4 * np.cos(2 * np.pi * np.arange(8) / 7))
    np.testing.assert_allclose(mt.kaiser_window(9, False, 5.0, dtype=mt.float64).numpy(), np.kaiser(9, 5.0))
    with pytest.raises(RuntimeError, match="floating point"):
        mt.hann_window(4, dtype=mt.int64)
    with pytest.raises(RuntimeError, match="non-negative"):
        mt.hann_window(-1)


def test_logspace_range_scalar_tensor():
    np.testing.assert_allclose(mt.logspace(-1, 2, 7, dtype=mt.float64).numpy(), np.logspace(-1, 2, 7))
    np.testing.assert_allclose(mt.logspace(0, 3, 4, base=2, dtype=mt.float64).numpy(), [1, 2, 4, 8])
    assert mt.logspace(0, 2, 3, dtype=mt.int64).tolist() == [1, 10, 100]
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        r = mt.range(0, 1, 0.25)
    assert r.dtype == mt.float32 and r.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    with pytest.warns(UserWarning):
        assert mt.range(1, 4, dtype=mt.int64).tolist() == [1, 2, 3, 4]
        assert mt.range(3, 0, -1).tolist() == [3, 2, 1, 0]
        with pytest.raises(RuntimeError, match="nonzero"):
            mt.range(0, 1, 0)
        with pytest.raises(RuntimeError, match="inconsistent"):
            mt.range(0, 1, -1)
    s = mt.scalar_tensor(3)
    assert s.shape == () and s.dtype == mt.float32 and s.item() == 3.0
    assert mt.scalar_tensor(True, dtype=mt.int64).item() == 1


def test_asarray_shares_memory_where_possible():
    host = np.ones(3)
    shared = mt.asarray(host)
    shared[0] = 5.0
    assert host[0] == 5.0 and shared.dtype == mt.float64
    copied = mt.asarray(host, copy=True)
    copied[1] = 7.0
    assert host[1] == 1.0
    assert mt.asarray(host, dtype=mt.float32).dtype == mt.float32
    with pytest.raises(ValueError):
        mt.asarray(host, dtype=mt.float32, copy=False)
    t = mt.ones(2)
    assert mt.asarray(t) is t and mt.asarray(t, copy=True) is not t
    with pytest.raises(ValueError, match="can't alias"):
        mt.asarray(t, dtype=mt.float64, copy=False)
    assert mt.asarray([1, 2]).dtype == mt.int64 and mt.asarray([1.0]).dtype == mt.float32
    assert mt.asarray([1.0], requires_grad=True).requires_grad


def test_frombuffer_and_empty_strided():
    buffer = bytearray(np.arange(4, dtype=np.float32).tobytes())
    t = mt.frombuffer(buffer, dtype=mt.float32)
    t[0] = 9.0  # the tensor is the buffer's memory
    assert np.frombuffer(buffer, dtype=np.float32)[0] == 9.0
    assert mt.frombuffer(buffer, dtype=mt.float32, count=2, offset=4).tolist() == [1.0, 2.0]
    with pytest.raises(ValueError, match="must not be 0"):
        mt.frombuffer(b"", dtype=mt.float32)
    with pytest.raises(ValueError, match="multiple of element size"):
        mt.frombuffer(b"abcde", dtype=mt.float32)
    with pytest.raises(ValueError, match="must not be greater"):
        mt.frombuffer(bytearray(8), dtype=mt.float32, count=3)
    with pytest.warns(UserWarning, match="not writable"):
        mt.frombuffer(b"abcd", dtype=mt.float32)
    s = mt.empty_strided((2, 3), (1, 2))
    assert s.shape == (2, 3) and s.stride() == (1, 2) and s.dtype == mt.float32
    with pytest.raises(RuntimeError, match="mismatch"):
        mt.empty_strided((2, 3), (1,))


# ------------------------------------------------------------------------------------------- nn at the top level
def test_nn_aliases_use_atens_signatures():
    x = f64(2, 3, 5)
    assert np.array_equal(mt.dropout(x, 0.5, False).numpy(), x.numpy())
    w = f64(4, 3)
    idx = mt.tensor([[0, 3], [1, 1]])
    np.testing.assert_array_equal(mt.embedding(w, idx).numpy(), w.numpy()[idx.numpy()])
    inp, tgt = f64(4), mt.tensor(rng.random(4))
    loss = mt.nn.functional.binary_cross_entropy_with_logits
    for code, name in enumerate(["none", "mean", "sum"]):
        np.testing.assert_allclose(mt.binary_cross_entropy_with_logits(inp, tgt, None, None, code).numpy(),
                                   loss(inp, tgt, reduction=name).numpy())
    with pytest.raises(TypeError, match="reduction"):
        mt.kl_div(inp, tgt, "mean")
    values, indices = mt.adaptive_max_pool1d(x, 2)
    assert values.shape == indices.shape == (2, 3, 2)
    assert mt.max_pool1d(x, 2).shape == (2, 3, 2)
    mean, var = mt.zeros(3, dtype=mt.float64), mt.ones(3, dtype=mt.float64)
    np.testing.assert_allclose(mt.batch_norm(x, None, None, mean, var, False, 0.1, 1e-5, False).numpy(),
                               x.numpy() / np.sqrt(1 + 1e-5))
    np.testing.assert_allclose(mt.channel_shuffle(mt.arange(6.0).reshape(1, 6, 1), 2).reshape(-1).numpy(),
                               [0, 3, 1, 4, 2, 5])
    gradcheck(lambda a, b, w: mt.bilinear(a, b, w), (f64(2, 3, requires_grad=True), f64(2, 4, requires_grad=True),
                                                     f64(5, 3, 4, requires_grad=True)))
    gradcheck(lambda x, w: mt.rms_norm(x, (5,), w, 1e-6), (f64(2, 3, 5, requires_grad=True),
                                                           f64(5, requires_grad=True)))
    assert mt.nn.Bilinear(3, 4, 5)(mt.ones(2, 3), mt.ones(2, 4)).shape == (2, 5)
    assert mt.nn.RMSNorm(5)(mt.ones(2, 5)).shape == (2, 5)
    assert repr(mt.nn.ChannelShuffle(2)) == "ChannelShuffle(groups=2)"


# ------------------------------------------------------------------------------------------- PyTorch
TOP_LEVEL = ["movedim", "swapaxes", "t", "split_with_sizes", "diagflat", "addr", "unravel_index", "combinations",
             "vander", "index_reduce", "aminmax", "cov", "corrcoef", "histogram", "gradient", "logspace", "range",
             "empty_strided", "asarray", "frombuffer", "scalar_tensor", "hann_window", "hamming_window",
             "bartlett_window", "blackman_window", "kaiser_window", "get_rng_state", "set_rng_state", "conv1d",
             "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "layer_norm",
             "group_norm", "batch_norm", "instance_norm", "dropout", "embedding", "max_pool1d", "max_pool2d",
             "max_pool3d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d", "pixel_shuffle",
             "pixel_unshuffle", "channel_shuffle", "bilinear", "binary_cross_entropy_with_logits", "kl_div",
             "cosine_embedding_loss", "hinge_embedding_loss", "margin_ranking_loss", "poisson_nll_loss",
             "triplet_margin_loss", "rms_norm"]
METHODS = ["movedim", "swapaxes", "swapaxes_", "swapdims_", "squeeze_", "unsqueeze_", "t_", "transpose_",
           "split_with_sizes", "sum_to_size", "resize_", "resize_as_", "diagflat", "addr", "addr_", "dot", "mv",
           "index_reduce", "index_reduce_", "aminmax", "cov", "corrcoef", "histogram"]


@pytest.mark.torch
def test_every_added_name_is_where_pytorch_has_it():
    torch = pytest.importorskip("torch")
    for name in TOP_LEVEL:
        assert hasattr(torch, name) and hasattr(mt, name), name
    for name in METHODS:
        assert hasattr(torch.Tensor, name) and hasattr(mt.Tensor, name), name
    for name in ["ChannelShuffle", "Bilinear", "RMSNorm"]:
        assert hasattr(torch.nn, name) and hasattr(mt.nn, name), name
    for name in ["get_rng_state", "set_rng_state", "fork_rng"]:
        assert hasattr(torch.random, name) and hasattr(mt.random, name), name


def _both(torch, x: np.ndarray):
    return torch.tensor(x), mt.tensor(x)


@pytest.mark.torch
def test_values_match_pytorch():
    torch = pytest.importorskip("torch")
    x = rng.standard_normal((3, 7))
    tx, mx = _both(torch, x)
    fw, aw = rng.integers(0, 4, 7), rng.random(7)
    pairs = [
        (torch.cov(tx, correction=0, fweights=torch.tensor(fw), aweights=torch.tensor(aw)),
         mt.cov(mx, correction=0, fweights=mt.tensor(fw), aweights=mt.tensor(aw))),
        (torch.corrcoef(tx), mt.corrcoef(mx)),
        (torch.histogram(tx, 5, density=True).hist, mt.histogram(mx, 5, density=True).hist),
        (torch.aminmax(tx, dim=1).max, mt.aminmax(mx, dim=1).max),
        (torch.vander(tx[0], 4), mt.vander(mx[0], 4)),
        (torch.combinations(tx[0], 3, True), mt.combinations(mx[0], 3, True)),
        (torch.diagflat(tx[:2, :2], -1), mt.diagflat(mx[:2, :2], -1)),
        (torch.addr(tx[:, :2], tx[:, 2], tx[0, :2], beta=2, alpha=0.5),
         mt.addr(mx[:, :2], mx[:, 2], mx[0, :2], beta=2, alpha=0.5)),
        (torch.stack(torch.unravel_index(torch.tensor([5, -2, 40]), (3, 4))),
         mt.stack(mt.unravel_index(mt.tensor([5, -2, 40]), (3, 4)))),
        (torch.ones(2, 3, 4).sum_to_size(3, 1), mt.ones(2, 3, 4).sum_to_size(3, 1)),
        (torch.logspace(-2, 2, 9, base=3), mt.logspace(-2, 2, 9, base=3)),
        (torch.scalar_tensor(2), mt.scalar_tensor(2)),
        (torch.channel_shuffle(torch.arange(12.0).reshape(1, 6, 2), 3),
         mt.channel_shuffle(mt.arange(12.0).reshape(1, 6, 2), 3)),
        (torch.rms_norm(tx, (7,)), mt.rms_norm(mx, (7,))),
        (torch.kl_div(tx, tx.exp(), 2, log_target=False), mt.kl_div(mx, mx.exp(), 2, log_target=False)),
        (torch.margin_ranking_loss(tx[0], tx[1], torch.sign(tx[2]), 0.1, 0),
         mt.margin_ranking_loss(mx[0], mx[1], mt.sign(mx[2]), 0.1, 0)),
        (torch.poisson_nll_loss(tx, tx.abs(), True, True, 1e-8, 2),
         mt.poisson_nll_loss(mx, mx.abs(), True, True, 1e-8, 2)),
        (torch.embedding(tx, torch.tensor([2, 0]), 0), mt.embedding(mx, mt.tensor([2, 0]), 0)),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch.range's and index_reduce's warnings
        pairs += [(torch.range(0, 2, 0.5), mt.range(0, 2, 0.5)),
                  (tx.index_reduce(0, torch.tensor([2, 0]), tx[:2] * 2, "mean", include_self=False),
                   mx.index_reduce(0, mt.tensor([2, 0]), mx[:2] * 2, "mean", include_self=False))]
    for name in ["hann_window", "hamming_window", "bartlett_window", "blackman_window", "kaiser_window"]:
        pairs.append((getattr(torch, name)(10), getattr(mt, name)(10)))
        pairs.append((getattr(torch, name)(9, False, dtype=torch.float64),
                      getattr(mt, name)(9, False, dtype=mt.float64)))
    for i, (t, m) in enumerate(pairs):
        assert tuple(t.shape) == tuple(m.shape) and str(t.dtype)[6:] == m.dtype.name, i
        np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-6, atol=1e-6, err_msg=str(i))
    coords = [np.cumsum(rng.random(3)) + 0.1, np.cumsum(rng.random(7)) + 0.1]
    for edge_order in (1, 2):
        for t, m in zip(torch.gradient(tx, spacing=[torch.tensor(c) for c in coords], edge_order=edge_order),
                        mt.gradient(mx, spacing=[mt.tensor(c) for c in coords], edge_order=edge_order)):
            np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)
