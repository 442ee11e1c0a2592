"""Shape ops: forward vs NumPy, gradients by gradcheck, views sharing memory, PyTorch's errors."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitensor as mt
import minitensor.nn.functional as F

from helpers import FEW, SETTINGS, assert_close, check_grad, nonscalar_shapes, randn, seeds, shapes, t64


def check(fn, ref, *arrays):
    """fn on float64 tensors equals ref on the arrays, and its gradient passes gradcheck."""
    assert_close(fn(*[t64(a, False) for a in arrays]), np.asarray(ref(*arrays)), rtol=1e-12)
    check_grad(fn, *arrays)


# ---------------------------------------------------------------------------------------- reshape
@SETTINGS
@given(shape=shapes, seed=seeds, data=st.data())
def test_reshape_view_with_inferred_dim(shape, seed, data):
    x = randn(seed, shape)
    n = x.size
    divisors = [d for d in range(1, n + 1) if n % d == 0]
    d = data.draw(st.sampled_from(divisors))
    target = data.draw(st.sampled_from([(d, -1), (-1, d), (d, n // d), (-1,), (n,), (1, -1, 1)]))
    expected = x.reshape(target)
    check(lambda t: t.reshape(target), lambda a: a.reshape(target), x)
    check(lambda t: t.view(*target), lambda a: a.reshape(target), x)
    assert mt.reshape(t64(x, False), target).shape == expected.shape


def test_reshape_errors_and_views():
    x = mt.arange(6.0)
    with pytest.raises(RuntimeError, match="invalid for input of size 6"):
        x.reshape(4, -1)
    with pytest.raises(RuntimeError, match="only one dimension"):
        x.reshape(-1, -1)
    v = x.view(2, 3)
    v[0, 0] = 10.0
    assert x[0].item() == 10.0, "a reshape of a contiguous tensor is a view"
    assert x.view_as(mt.ones(3, 2)).shape == (3, 2) and x.reshape_as(mt.ones(6, 1)).shape == (6, 1)


@SETTINGS
@given(shape=nonscalar_shapes, seed=seeds, data=st.data())
def test_flatten_unflatten(shape, seed, data):
    x = randn(seed, shape)
    n = len(shape)
    s = data.draw(st.integers(-n, n - 1))
    e = data.draw(st.integers(s % n, n - 1))
    e = e - n if data.draw(st.booleans()) else e
    s_, e_ = s % n, e % n
    expected_shape = shape[:s_] + (int(np.prod(shape[s_:e_ + 1])),) + shape[e_ + 1:]
    check(lambda t: t.flatten(s, e), lambda a: a.reshape(expected_shape), x)
    flat = mt.flatten(t64(x, False), s, e)
    assert_close(flat.unflatten(s_, shape[s_:e_ + 1]), x)
    assert mt.flatten(mt.tensor(1.0)).shape == (1,)


def test_flatten_rejects_reversed_dims():
    with pytest.raises(RuntimeError, match="start_dim"):
        mt.ones(2, 3, 4).flatten(2, 1)


def test_squeeze_unsqueeze():
    a = randn(0, (1, 3, 1, 2))
    check(lambda t: t.squeeze(), lambda x: x.squeeze(), a)
    check(lambda t: t.squeeze(2), lambda x: x.squeeze(2), a)
    check(lambda t: t.squeeze(-4), lambda x: x.squeeze(0), a)
    check(lambda t: t.squeeze(1), lambda x: x, a)  # not size 1: unchanged, as PyTorch
    check(lambda t: t.squeeze((0, 2)), lambda x: x.squeeze((0, 2)), a)
    for d in range(-5, 5):
        check(lambda t: t.unsqueeze(d), lambda x: np.expand_dims(x, d), a)
    with pytest.raises(IndexError):
        mt.ones(2).unsqueeze(3)
    assert mt.tensor(3.0).unsqueeze(0).shape == (1,)


# ------------------------------------------------------------------------------- transpose, permute
@SETTINGS
@given(shape=nonscalar_shapes, seed=seeds, data=st.data())
def test_permute_transpose_movedim(shape, seed, data):
    x = randn(seed, shape)
    n = len(shape)
    perm = data.draw(st.permutations(range(n)))
    perm_neg = [p - n if data.draw(st.booleans()) else p for p in perm]
    check(lambda t: t.permute(*perm_neg), lambda a: a.transpose(perm), x)
    check(lambda t: mt.permute(t, perm), lambda a: a.transpose(perm), x)
    d0, d1 = data.draw(st.integers(-n, n - 1)), data.draw(st.integers(-n, n - 1))
    check(lambda t: t.transpose(d0, d1), lambda a: np.swapaxes(a, d0, d1), x)
    check(lambda t: mt.movedim(t, d0, d1), lambda a: np.moveaxis(a, d0, d1), x)


def test_permute_is_a_view_and_checks_its_dims():
    x = mt.zeros(2, 3)
    x.permute(1, 0)[2, 1] = 5.0
    assert x[1, 2].item() == 5.0
    with pytest.raises(RuntimeError, match="permutation"):
        x.permute(0, 0)
    with pytest.raises(RuntimeError, match="2 dimensions"):
        mt.ones(2, 3, 4).t()
    assert_close(mt.tensor([[1.0, 2.0]]).t(), [[1.0], [2.0]])


# --------------------------------------------------------------------------------- expand, repeat
@SETTINGS
@given(shapes_=st.data(), seed=seeds)
def test_expand_and_broadcast_to(shapes_, seed):
    from hypothesis.extra import numpy as hnp
    shape = shapes_.draw(shapes)
    target = shapes_.draw(hnp.broadcastable_shapes(shape, min_dims=len(shape), max_dims=len(shape) + 2,
                                                   max_side=4))
    target = tuple(np.broadcast_shapes(shape, target))
    x = randn(seed, shape)
    check(lambda t: t.expand(*target), lambda a: np.broadcast_to(a, target), x)
    check(lambda t: t.broadcast_to(target), lambda a: np.broadcast_to(a, target), x)
    check(lambda t: mt.broadcast_to(t, target), lambda a: np.broadcast_to(a, target), x)
    keep = (-1,) * len(shape)
    lead = target[:len(target) - len(shape)]
    check(lambda t: t.expand(*lead, *keep), lambda a: np.broadcast_to(a, lead + shape), x)
    assert_close(t64(x, False).expand_as(mt.zeros(target)), np.broadcast_to(x, target))


def test_expand_errors():
    with pytest.raises(RuntimeError, match=r"expanded size.*\(4\).*existing size \(3\)"):
        mt.ones(2, 3).expand(2, 4)
    with pytest.raises(RuntimeError, match="number of sizes"):
        mt.ones(2, 3).expand(3)


@FEW
@given(shape=shapes, seed=seeds, data=st.data())
def test_repeat(shape, seed, data):
    x = randn(seed, shape)
    extra = data.draw(st.integers(0, 2))
    reps = tuple(data.draw(st.lists(st.integers(1, 3), min_size=len(shape) + extra, max_size=len(shape) + extra)))
    check(lambda t: t.repeat(reps), lambda a: np.tile(a, reps), x)
    if reps:
        check(lambda t: t.repeat(*reps), lambda a: np.tile(a, reps), x)
    with pytest.raises(RuntimeError, match="repeat dims"):
        mt.ones(2, 2).repeat(2)


# ------------------------------------------------------------------------------------ cat, stack
@SETTINGS
@given(shape=nonscalar_shapes, seed=seeds, data=st.data())
def test_cat_and_stack(shape, seed, data):
    n = len(shape)
    dim = data.draw(st.integers(-n, n - 1))
    sizes = data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=3))
    parts = []
    for i, k in enumerate(sizes):
        s = list(shape)
        s[dim % n] = k
        parts.append(randn(seed + i, tuple(s)))
    check(lambda *ts: mt.cat(ts, dim), lambda *a: np.concatenate(a, axis=dim % n), *parts)
    same = [randn(seed + i, shape) for i in range(len(sizes))]
    sdim = data.draw(st.integers(-n - 1, n))
    check(lambda *ts: mt.stack(list(ts), sdim), lambda *a: np.stack(a, axis=sdim), *same)


def test_cat_stack_errors_and_aliases():
    with pytest.raises(RuntimeError, match=r"\(2, 3\).*\(2, 4\)"):
        mt.stack([mt.ones(2, 3), mt.ones(2, 4)])
    with pytest.raises(RuntimeError, match=r"\(2, 3\).*\(3, 4\)"):
        mt.cat([mt.ones(2, 3), mt.ones(3, 4)], dim=0)
    with pytest.raises(ValueError, match="non-empty"):
        mt.cat([])
    with pytest.raises(RuntimeError, match="zero-dimensional"):
        mt.cat([mt.tensor(1.0), mt.tensor(2.0)])
    assert mt.concat([mt.ones(1), mt.zeros(2)]).tolist() == [1.0, 0.0, 0.0]
    assert mt.concatenate([mt.ones(1), mt.zeros(1)]).tolist() == [1.0, 0.0]


def test_cat_gradient_reaches_each_input_with_its_dtype():
    a = mt.ones(2, requires_grad=True)
    b = mt.ones(3, dtype=mt.float64, requires_grad=True)
    (mt.cat([a, b]) * mt.arange(5.0, dtype=mt.float64)).sum().backward()
    assert a.grad.dtype is mt.float32 and a.grad.tolist() == [0.0, 1.0]
    assert b.grad.tolist() == [2.0, 3.0, 4.0]


# ------------------------------------------------------------------------------- split, chunk...
@SETTINGS
@given(shape=nonscalar_shapes, seed=seeds, data=st.data())
def test_split_and_chunk(shape, seed, data):
    n = len(shape)
    dim = data.draw(st.integers(-n, n - 1))
    size = shape[dim % n]
    x = randn(seed, shape)
    step = data.draw(st.integers(1, size + 1))
    bounds = list(range(step, size, step))
    check(lambda t: mt.cat(t.split(step, dim), dim), lambda a: a, x)
    pieces = t64(x, False).split(step, dim)
    for p, r in zip(pieces, np.split(x, bounds, axis=dim % n), strict=True):
        assert_close(p, r)
    first = data.draw(st.integers(0, size))
    second = data.draw(st.integers(0, size - first))
    sections = [first, second, size - first - second]  # sizes that sum to the dim, zeros allowed
    cuts = np.cumsum(sections)[:-1]
    for p, r in zip(mt.split(t64(x, False), sections, dim), np.split(x, cuts, axis=dim % n), strict=True):
        assert_close(p, r)
    chunks = data.draw(st.integers(1, 5))
    per = -(-size // chunks)
    expected = np.split(x, list(range(per, size, per)), axis=dim % n)
    got = t64(x, False).chunk(chunks, dim)
    assert len(got) == len(expected)
    for p, r in zip(got, expected):
        assert_close(p, r)
    # the gradient of one piece lands in its slice
    check(lambda t: t.chunk(chunks, dim)[-1] * 2.0, lambda a: expected[-1] * 2.0, x)


def test_split_errors():
    with pytest.raises(RuntimeError, match="sum exactly to 4"):
        mt.ones(4).split([1, 2])
    with pytest.raises(RuntimeError, match="greater than 0"):
        mt.ones(4).chunk(0)


def test_unbind_narrow_flip():
    a = randn(0, (2, 3, 4))
    for dim in range(3):
        for i, p in enumerate(t64(a, False).unbind(dim)):
            assert_close(p, np.take(a, i, axis=dim))
    check(lambda t: mt.stack(t.unbind(1), 1), lambda x: x, a)
    check(lambda t: mt.narrow(t, 2, 1, 2), lambda x: x[:, :, 1:3], a)
    check(lambda t: t.flip(0), lambda x: x[::-1], a)
    check(lambda t: t.flip((0, -1)), lambda x: x[::-1, :, ::-1], a)
    check(lambda t: t.flip(0, -1), lambda x: x[::-1, :, ::-1], a)  # the method takes dims as varargs too
    with pytest.raises(TypeError, match="dims"):
        t64(a, False).flip()
    check(lambda t: mt.flip(t, [1]), lambda x: x[:, ::-1], a)


# ------------------------------------------------------------------------------------------- pad
def np_pad(x, pad, mode, value=0.0):
    """PyTorch's pad argument (last dim first) in NumPy terms; negative amounts crop."""
    k = len(pad) // 2
    widths = [(0, 0)] * (x.ndim - k) + [(pad[2 * i], pad[2 * i + 1]) for i in reversed(range(k))]
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0)) for (lo, hi), n in zip(widths, x.shape))
    x = x[crop]
    widths = [(max(lo, 0), max(hi, 0)) for lo, hi in widths]
    np_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}[mode]
    if mode == "constant":
        return np.pad(x, widths, mode="constant", constant_values=value)
    return np.pad(x, widths, mode=np_mode)


@SETTINGS
@given(seed=seeds, data=st.data(), mode=st.sampled_from(["constant", "reflect", "replicate", "circular"]))
def test_pad_modes(seed, data, mode):
    shape = data.draw(st.tuples(st.integers(1, 3), st.integers(2, 4), st.integers(2, 5)))
    k = data.draw(st.integers(1, 2))
    limits = [shape[-1 - i // 2] - 1 for i in range(2 * k)]  # reflect needs pad < size
    low = -1 if mode == "constant" else 0
    pad = tuple(data.draw(st.integers(low, lim)) for lim in limits)
    x = randn(seed, shape)
    value = 1.5 if mode == "constant" else None
    fn = lambda t: F.pad(t, pad, mode=mode, value=value) if value is not None else F.pad(t, pad, mode=mode)  # noqa: E731
    check(fn, lambda a: np_pad(a, pad, mode, value or 0.0), x)
    assert F.pad(mt.tensor(x, dtype=mt.float32), pad, mode=mode).dtype is mt.float32


def test_pad_known_values_and_errors():
    x = mt.tensor([[1.0, 2.0, 3.0]])
    assert F.pad(x, (2, 1)).tolist() == [[0, 0, 1, 2, 3, 0]]
    assert F.pad(x, (-1, 1), value=9.0).tolist() == [[2, 3, 9]]
    assert F.pad(x, (2, 2), mode="reflect").tolist() == [[3, 2, 1, 2, 3, 2, 1]]
    assert F.pad(x, (2, 1), mode="replicate").tolist() == [[1, 1, 1, 2, 3, 3]]
    assert F.pad(x, (2, 1), mode="circular").tolist() == [[2, 3, 1, 2, 3, 1]]
    assert F.pad(x, (0, 0, 1, 0)).tolist() == [[0, 0, 0], [1, 2, 3]]
    with pytest.raises(RuntimeError):
        F.pad(x, (3, 0), mode="reflect")
    with pytest.raises(RuntimeError, match="even"):
        F.pad(x, (1,))
    with pytest.raises(NotImplementedError, match="mode"):
        F.pad(x, (1, 1), mode="wrap")


# ------------------------------------------------------------------------------ where, masked_fill
@SETTINGS
@given(seed=seeds, data=st.data())
def test_where_broadcasts_three_ways(seed, data):
    from hypothesis.extra import numpy as hnp
    (sc, sa, sb), _ = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=3, max_side=3))
    cond = np.random.default_rng(seed).random(sc) < 0.5
    a, b = randn(seed, sa), randn(seed + 1, sb)
    check(lambda x, y: mt.where(mt.tensor(cond), x, y), lambda x, y: np.where(cond, x, y), a, b)
    check(lambda x: mt.where(mt.tensor(cond), x, 2.5), lambda x: np.where(cond, x, 2.5), a)
    check(lambda y: mt.where(mt.tensor(cond), -1.0, y), lambda y: np.where(cond, -1.0, y), b)
    check(lambda x, y: x.where(mt.tensor(cond), y), lambda x, y: np.where(cond, x, y), a, b)


def test_where_with_two_scalars_takes_pytorch_dtypes():
    c = mt.tensor([True, False])
    out = mt.where(c, 1.0, 0.0)
    assert out.dtype is mt.float32 and out.tolist() == [1.0, 0.0]
    assert mt.where(c, 1, 0).dtype is mt.int64 and mt.where(c, 1, 0.5).dtype is mt.float32


def test_where_and_masked_fill_want_bool_conditions_as_pytorch():
    """PyTorch 2.x refuses a non-bool condition (a uint8 one is still read as != 0, with a warning) and a
    non-bool masked_fill mask."""
    with pytest.raises(RuntimeError, match="where expected condition to be a boolean tensor, but got a tensor "
                                           "with dtype Long"):
        mt.where(mt.tensor([0, 2]), mt.tensor([1.0, 1.0]), 0.0)
    with pytest.warns(UserWarning, match="uint8 condition"):
        assert mt.where(mt.tensor([0, 2], dtype=mt.uint8), mt.tensor([1.0, 1.0]), 0.0).tolist() == [0.0, 1.0]
    for dtype, name in ((mt.float32, "float"), (mt.uint8, "unsigned char"), (mt.int64, "long int")):
        with pytest.raises(RuntimeError, match=f"masked_fill_ only supports boolean masks, but got mask with "
                                               f"dtype {name}$"):
            mt.ones(2).masked_fill(mt.ones(2, dtype=dtype), 0.0)
    with pytest.raises(ValueError, match="expected a non-empty list of Tensors"):
        mt.cat([])


@SETTINGS
@given(seed=seeds, data=st.data())
def test_masked_fill(seed, data):
    from hypothesis.extra import numpy as hnp
    shape = data.draw(shapes)
    mask_shape = data.draw(hnp.broadcastable_shapes(shape, max_dims=len(shape)))
    mask = np.random.default_rng(seed).random(mask_shape) < 0.5
    x = randn(seed, shape)
    check(lambda t: t.masked_fill(mt.tensor(mask), -3.0), lambda a: np.where(mask, -3.0, a), x)
    assert_close(t64(x, False).masked_fill(mt.tensor(mask), mt.tensor(2.0)), np.where(mask, 2.0, x))
    t = t64(x, False)
    if np.broadcast_shapes(shape, mask_shape) == shape:
        t.masked_fill_(mt.tensor(mask), 7.0)
        assert_close(t, np.where(mask, 7.0, x))
    else:
        with pytest.raises(RuntimeError, match="broadcast shape"):
            t.masked_fill_(mt.tensor(mask), 7.0)


def test_masked_fill_errors_and_dtypes():
    assert mt.tensor([1, 2]).masked_fill(mt.tensor([True, False]), 5).tolist() == [5, 2]
    assert mt.tensor([1, 2]).masked_fill(mt.tensor([True, False]), 5).dtype is mt.int64
    with pytest.raises(RuntimeError, match="0-dimensional"):
        mt.ones(2).masked_fill(mt.tensor([True, False]), mt.ones(2))
    x = mt.tensor([1.0, 2.0], requires_grad=True)
    x.masked_fill(mt.tensor([True, False]), 0.0).sum().backward()
    assert x.grad.tolist() == [0.0, 1.0]


# ---------------------------------------------------------------------------------- gather, select
def np_gather(x, dim, index):
    """out[i][j][k] = x[index[i][j][k]][j][k] for dim 0, and so on (a loop reference)."""
    out = np.empty(index.shape, dtype=x.dtype)
    for pos in np.ndindex(*index.shape):
        src = list(pos)
        src[dim] = index[pos]
        out[pos] = x[tuple(src)]
    return out


@SETTINGS
@given(shape=nonscalar_shapes, seed=seeds, data=st.data())
def test_gather(shape, seed, data):
    n = len(shape)
    dim = data.draw(st.integers(-n, n - 1))
    rng = np.random.default_rng(seed)
    ishape = tuple(data.draw(st.integers(1, s)) if k != dim % n else data.draw(st.integers(1, 4))
                   for k, s in enumerate(shape))
    index = rng.integers(0, shape[dim % n], ishape)
    x = randn(seed, shape)
    check(lambda t: t.gather(dim, mt.tensor(index)), lambda a: np_gather(a, dim % n, index), x)
    check(lambda t: mt.gather(t, dim, mt.tensor(index)), lambda a: np_gather(a, dim % n, index), x)


def test_gather_repeated_indices_accumulate_and_errors():
    x = mt.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    out = x.gather(1, mt.tensor([[0, 0, 1], [1, 1, 1]]))
    assert out.tolist() == [[1, 1, 2], [4, 4, 4]]
    out.sum().backward()
    assert x.grad.tolist() == [[2.0, 1.0], [0.0, 3.0]]
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        x.gather(1, mt.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="integer"):
        x.gather(1, mt.tensor([[0.0]]))


def test_index_select():
    a = randn(0, (3, 4))
    idx = np.array([2, 0, 2])
    check(lambda t: t.index_select(0, mt.tensor(idx)), lambda x: x[idx], a)
    check(lambda t: mt.index_select(t, -1, mt.tensor(idx)), lambda x: x[:, idx], a)
    with pytest.raises(RuntimeError, match="1-D integer"):
        mt.index_select(mt.ones(2), 0, mt.tensor([[0]]))
