"""PyTorch's indexing rules (not NumPy's) for getitem, setitem and their gradients: hypothesis against the
model in ``indexing_reference.py``, PyTorch's answers to the reported reproducers, and PyTorch itself where
it is installed."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minitensor as mt

from helpers import SETTINGS, assert_close, randn, shapes
from indexing_reference import positions, sum_to_shape

_DIM_ITEMS = ("int", "int_tensor", "slice", "array", "list")


@st.composite
def index_specs(draw: Any, shape: tuple[int, ...], one_dim_masks: bool = False) -> list:
    """A PyTorch index for ``shape`` as (kind, value) pairs: ints (also as 0-d tensors), slices, None,
    Ellipsis, Python bools, integer arrays and lists (broadcasting together) and at most one bool mask."""
    nd, left = len(shape), len(shape)
    kinds: list = []
    for _ in range(draw(st.integers(0, nd + 2))):
        options = ["none", "true", "false"] + (["ellipsis"] if all(k != "ellipsis" for k, _ in kinds) else [])
        if left:
            options += list(_DIM_ITEMS) + (["mask"] if not any(k == "mask" for k, _ in kinds) else [])
        kind = draw(st.sampled_from(options))
        k = (1 if one_dim_masks else draw(st.integers(1, left))) if kind == "mask" else int(kind in _DIM_ITEMS)
        kinds.append((kind, k))
        left -= k
    narrow = any(kind in ("mask", "false") for kind, _ in kinds)  # their lengths must broadcast with B
    if narrow and any(kind == "false" for kind, _ in kinds):
        left += sum(k for kind, k in kinds if kind == "mask")  # the dims a dropped mask took are free again
        kinds = [(kind, k) for kind, k in kinds if kind != "mask"]
    common = (1,) if narrow else draw(hnp.array_shapes(min_dims=1, max_dims=2, max_side=3))
    spec, d = [], 0
    for kind, k in kinds:
        n = shape[d] if d < nd else 0
        if kind == "ellipsis":
            value, k = Ellipsis, left
        elif kind in ("none", "true", "false"):
            value = {"none": None, "true": True, "false": False}[kind]
        elif kind in ("int", "int_tensor"):
            value = draw(st.integers(-n, n - 1))
        elif kind == "slice":
            value = draw(st.slices(n).filter(lambda s: s.step is None or s.step > 0))
        elif kind == "array":
            value = draw(hnp.arrays(np.int64, common, elements=st.integers(-n, n - 1)))
        elif kind == "list":
            value = draw(st.lists(st.integers(-n, n - 1), min_size=common[-1], max_size=common[-1]))
        else:
            value = draw(hnp.arrays(np.bool_, shape[d:d + k]))
        spec.append((kind, value))
        d += k
    return spec


@st.composite
def value_shapes(draw: Any, target: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts to ``target``: some leading dims dropped, some others set to 1."""
    shape = tuple(draw(st.sampled_from((1, n))) for n in target)
    return shape[draw(st.integers(0, len(shape))):]


def reference_index(spec: list) -> tuple:
    return tuple(v for _, v in spec)


def mt_index(spec: list) -> tuple:
    return tuple(mt.tensor(v) if kind in ("array", "mask", "int_tensor") else v for kind, v in spec)


def expected_setitem(x: np.ndarray, pos: np.ndarray, v: np.ndarray) -> np.ndarray:
    out = x.copy().reshape(-1)
    out[pos.reshape(-1)] = np.broadcast_to(v, pos.shape).reshape(-1)
    return out.reshape(x.shape)


def run(index: Any, x: np.ndarray, v: np.ndarray, w: np.ndarray, w2: np.ndarray, lib: Any = mt,
        device: Any = None) -> tuple:
    """x[index], d(sum(x[index] * w))/dx, then y = x * 1; y[index] = v with y and
    d(sum(y * w2))/dx, d/dv, all as NumPy arrays, in minitensor or PyTorch (``lib``)."""
    def tensor(a: np.ndarray, grad: bool = False) -> Any:
        return lib.tensor(a, requires_grad=grad, device=device)

    def host(t: Any) -> np.ndarray:
        return t.detach().cpu().numpy()

    t = tensor(x, True)
    y = t[index]
    (y * tensor(w)).sum().backward()
    got = host(y), host(t.grad)
    t, tv = tensor(x, True), tensor(v, True)
    z = t * 1.0
    z[index] = tv
    (z * tensor(w2)).sum().backward()
    return got + (host(z), host(t.grad), host(tv.grad))


def test_getitem_setitem_and_gradients_follow_pytorch_rules(device):
    """On each device (CPU index tensors index a CUDA tensor, as in PyTorch)."""
    @SETTINGS
    @given(shape=shapes, data=st.data())
    def check(shape, data):
        spec = data.draw(index_specs(shape))
        pos = positions(shape, reference_index(spec))
        vshape = data.draw(value_shapes(pos.shape)) if np.unique(pos).size == pos.size else ()
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
        x, v, w, w2 = randn(1, shape), rng.standard_normal(vshape), rng.standard_normal(pos.shape), randn(2, shape)
        y, gx, z, gzx, gv = run(mt_index(spec), x, v, w, w2, device=device)
        assert_close(y, x.reshape(-1)[pos])
        assert_close(gx, np.bincount(pos.reshape(-1), weights=w.reshape(-1), minlength=x.size).reshape(shape))
        assert_close(z, expected_setitem(x, pos, v))
        g = w2.copy().reshape(-1)
        g[pos.reshape(-1)] = 0
        assert_close(gzx, g.reshape(shape))  # written places get no gradient
        assert_close(gv, sum_to_shape(w2.reshape(-1)[pos], vshape))  # a repeated place sends its gradient twice

    check()


def test_reported_reproducers_give_pytorch_answers():
    x = mt.arange(24.0).reshape(2, 3, 4)
    assert x[0, :, [0, 1]].shape == (3, 2)  # NumPy: (2, 3)
    assert x[0, :, [0, 1]].tolist() == [[0, 1], [4, 5], [8, 9]]
    assert x[0, None, [0, 1]].shape == (1, 2, 4)
    assert x[1, ..., [0, 2]].shape == (3, 2) and x[1, ..., [0, 2]].tolist() == [[12, 14], [16, 18], [20, 22]]
    y = mt.arange(720.0).reshape(2, 3, 4, 5, 2, 3)
    assert y[1, :, mt.tensor([0, 1]), :, 0, :].shape == (3, 2, 5, 3)
    assert y[:, 0, :, mt.tensor([1, 2]), :, 1].shape == (2, 4, 2, 2)  # NumPy: (2, 2, 4, 2)
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        r = mt.randn(3, 4)[[[0, 1], [1, 2]]]  # read as x[[0, 1], [1, 2]]
    assert r.shape == (2,)
    with pytest.warns(UserWarning, match="uint8"):
        assert mt.arange(4.0)[mt.tensor([1, 0, 2, 1], dtype=mt.uint8)].tolist() == [0.0, 2.0, 3.0]  # a mask
    x[0, :, [0, 1]] = mt.tensor([[-1.0, -2.0], [-3.0, -4.0], [-5.0, -6.0]])  # PyTorch's (3, 2) value
    assert x[0].tolist() == [[-1, -2, 2, 3], [-3, -4, 6, 7], [-5, -6, 10, 11]]


def test_gradient_of_a_split_index_lands_where_pytorch_puts_it():
    x = mt.zeros(2, 3, 4, requires_grad=True)
    (x[1, :, [0, 2, 2]] * mt.tensor([[1.0, 2.0, 3.0]])).sum().backward()
    expected = np.zeros((2, 3, 4))
    expected[1, :, 0], expected[1, :, 2] = 1.0, 5.0  # the repeated column accumulates
    assert_close(x.grad, expected)


def test_bool_scalars_zero_dim_tensors_and_leading_ones():
    x = mt.arange(6.0).reshape(2, 3)
    assert x[True].shape == (1, 2, 3) and x[False].shape == (0, 2, 3) and x[0, True].shape == (1, 3)
    assert x[True, [0, 1]].shape == (2, 3)  # the new size-1 dim broadcasts with the index
    i = mt.tensor(1)
    assert x[i].tolist() == [3.0, 4.0, 5.0] and np.shares_memory(x[i].numpy(), x.numpy())  # selects
    assert x[mt.tensor(True)].shape == (1, 2, 3)
    x[[0, 1]] = mt.ones(1, 1, 2, 3)  # leading size-1 dims of the value are dropped, as in PyTorch
    assert x.tolist() == [[1.0] * 3] * 2
    v = mt.ones(1, 1, 3, requires_grad=True)
    z = mt.zeros(2, 3) * 1.0
    z[mt.tensor([1])] = v * 2.0
    z.sum().backward()
    assert v.grad.shape == (1, 1, 3) and v.grad.tolist() == [[[2.0, 2.0, 2.0]]]


def test_index_errors_are_pytorchs(device):
    x = mt.ones(2, 3, device=device)
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]
    with pytest.raises(IndexError, match="too many indices"):
        x[mt.ones(2, 3, 1, dtype=mt.bool)]
    with pytest.raises(IndexError, match="shape of the mask|boolean index did not match"):
        x[mt.tensor([True, False, True], device=device)]
    with pytest.raises(IndexError, match="long, int, byte or bool"):
        x[mt.tensor([0, 1], dtype=mt.int16)]
    with pytest.raises(IndexError, match="only integers, slices"):
        x[1.5]
    for bad in (3, -4):  # CuPy would wrap them silently
        with pytest.raises(IndexError, match="out of bounds"):
            x[:, mt.tensor([0, bad], device=device)]
        with pytest.raises(IndexError, match="out of bounds"):
            x[0, mt.tensor([bad], device=device)]
    with pytest.raises(IndexError, match="single ellipsis"):
        x[..., 0, ...]


@pytest.mark.torch
def test_against_pytorch():
    """The same properties as the model test, with PyTorch as the reference (1-D masks only: PyTorch
    versions differ on a k-dim mask followed by other items, pytorch/pytorch#71673)."""
    torch = pytest.importorskip("torch")

    def torch_index(spec: list) -> tuple:
        return tuple(torch.tensor(v) if kind in ("array", "mask", "int_tensor") else v for kind, v in spec)

    @SETTINGS
    @given(shape=shapes, data=st.data())
    def check(shape, data):
        spec = data.draw(index_specs(shape, one_dim_masks=True))
        pos = positions(shape, reference_index(spec))
        vshape = data.draw(value_shapes(pos.shape)) \
            if np.unique(pos).size == pos.size else ()
        rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
        args = randn(1, shape), rng.standard_normal(vshape), rng.standard_normal(pos.shape), randn(2, shape)
        for ours, theirs in zip(run(mt_index(spec), *args), run(torch_index(spec), *args, lib=torch)):
            assert_close(ours, theirs)

    check()
