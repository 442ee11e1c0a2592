"""PyTorch-style custom autograd Functions (minitensor.autograd.Function): values, gradients against
finite differences, the ctx API, PyTorch's errors, and parity with torch on the same class bodies."""
import numpy as np
import pytest

import minitensor as mt
from minitensor.autograd.function import once_differentiable
from minitensor.testing import gradcheck


def make_functions(lib):
    """The same class bodies on either library (``lib`` is minitensor or torch)."""

    class Spy(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, scale=2.0):
            ctx.save_for_backward(x)
            ctx.scale = scale
            return x * scale

        @staticmethod
        def backward(ctx, gy):
            (x,) = ctx.saved_tensors
            return gy * ctx.scale, None

    class Exp(lib.autograd.Function):  # saves its output
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, gy):
            (y,) = ctx.saved_tensors
            return gy * y

    class MulAdd(lib.autograd.Function):  # two inputs, two outputs and a number
        @staticmethod
        def forward(ctx, a, b, k):
            ctx.save_for_backward(a, b)
            ctx.k = k
            return a * b, a + k * b

        @staticmethod
        def backward(ctx, g1, g2):
            a, b = ctx.saved_tensors
            return g1 * b + g2, g1 * a + ctx.k * g2, None

    class Square(lib.autograd.Function):  # PyTorch 2's style: setup_context
        @staticmethod
        def forward(x, power=2):
            return x ** power

        @staticmethod
        def setup_context(ctx, inputs, output):
            x, power = inputs
            ctx.save_for_backward(x)
            ctx.power = power

        @staticmethod
        @once_differentiable if lib is mt else lib.autograd.function.once_differentiable
        def backward(ctx, gy):
            (x,) = ctx.saved_tensors
            return gy * ctx.power * x ** (ctx.power - 1), None

    class DoubleInPlace(lib.autograd.Function):  # mark_dirty
        @staticmethod
        def forward(ctx, x):
            x.mul_(2)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, gy):
            return gy * 2

    class MaxWithIndex(lib.autograd.Function):  # mark_non_differentiable
        @staticmethod
        def forward(ctx, x):
            values, index = x.max(dim=1)
            ctx.mark_non_differentiable(index)
            ctx.save_for_backward(index)
            ctx.shape = x.shape
            return values, index

        @staticmethod
        def backward(ctx, gv, gi):
            (index,) = ctx.saved_tensors
            assert gi is None or not gi.any()
            g = lib.zeros(ctx.shape, dtype=gv.dtype)
            g.scatter_(1, index.unsqueeze(1), gv.unsqueeze(1))
            return g

    class SeesNone(lib.autograd.Function):  # set_materialize_grads(False)
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 1, x * 3

        @staticmethod
        def backward(ctx, g1, g2):
            SeesNone.got = (g1 is None, g2 is None)
            g = 0 * g1 if g1 is not None else 0
            return g + (g2 * 3 if g2 is not None else 0)

    return Spy, Exp, MulAdd, Square, DoubleInPlace, MaxWithIndex, SeesNone


Spy, Exp, MulAdd, Square, DoubleInPlace, MaxWithIndex, SeesNone = make_functions(mt)


def f64(*shape, seed=0):
    return mt.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=mt.float64, requires_grad=True)


def test_the_brief_example_non_tensor_args_and_grad_fn_name():
    x = mt.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = Spy.apply(x, 3.0)
    np.testing.assert_allclose(y.detach().numpy(), [3.0, 6.0, 9.0])
    assert y.grad_fn.name() == "SpyBackward" and type(y.grad_fn).__name__ == "SpyBackward"
    assert y.grad_fn.scale == 3.0 and y.grad_fn.needs_input_grad == (True, False)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0, 3.0])
    assert Spy.apply(x, scale=0.5).grad_fn.scale == 0.5


@pytest.mark.parametrize("fn, inputs", [
    (Exp.apply, (f64(3, 4),)),
    (lambda a, b: MulAdd.apply(a, b, 0.5), (f64(3, seed=1), f64(3, seed=2))),
    (lambda x: Spy.apply(x, 3.0), (f64(2, 2),)),
    (lambda x: Square.apply(x, 3), (f64(5),)),
    (lambda x: MaxWithIndex.apply(x)[0], (f64(3, 4),)),
    (lambda x: DoubleInPlace.apply(x * 1), (f64(4),)),
])
def test_gradients_match_finite_differences(fn, inputs):
    assert gradcheck(fn, inputs)


def test_forward_runs_without_grad_on_tensors():
    seen = {}

    class Look(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            seen["grad"], seen["type"] = mt.is_grad_enabled(), type(x)
            return x.clone()

        @staticmethod
        def backward(ctx, gy):
            return gy

    Look.apply(mt.ones(2, requires_grad=True))
    assert seen == {"grad": False, "type": mt.Tensor}


def test_multi_output_gradients_go_to_their_outputs():
    a, b = f64(3, seed=1), f64(3, seed=2)
    p, s = MulAdd.apply(a, b, 2.0)
    for out in (p, s):  # each output's grad_fn shows the Function's ctx
        assert out.grad_fn.name() == "MulAddBackward" and out.grad_fn.k == 2.0
        assert [e.variable is t for (e, _), t in zip(out.grad_fn.next_functions, (a, b))] == [True, True]
        assert len(out.grad_fn.saved_tensors) == 2
    g1, g2 = mt.autograd.grad(p.sum() + 5 * s.sum(), (a, b))
    np.testing.assert_allclose(g1.numpy(), b.detach().numpy() + 5)
    np.testing.assert_allclose(g2.numpy(), a.detach().numpy() + 10)


def test_mark_dirty_writes_the_input_and_becomes_its_grad_fn():
    x = f64(3)
    h = x * 1
    out = DoubleInPlace.apply(h)
    assert out is h and h.grad_fn.name() == "DoubleInPlaceBackward" and h._version == 1
    np.testing.assert_allclose(h.detach().numpy(), 2 * x.detach().numpy())
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        DoubleInPlace.apply(f64(3))


def test_mark_non_differentiable_and_set_materialize_grads():
    values, index = MaxWithIndex.apply(f64(3, 4))
    assert values.requires_grad and not index.requires_grad and index.dtype == mt.int64
    x = f64(3)
    a, b = SeesNone.apply(x)
    b.sum().backward()
    assert SeesNone.got == (True, False) and b.grad_fn.name() == "SeesNoneBackward"
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 3.0, 3.0])


def test_saved_tensor_modified_in_place_raises_pytorchs_error():
    x = f64(3) * 1
    y = Spy.apply(x, 2.0)
    x.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*is at version 1; expected version 0"):
        y.sum().backward()
    y = Exp.apply(f64(3))
    y.mul_(2)
    with pytest.raises(RuntimeError, match="which is output 0 of ExpBackward"):
        y.sum().backward()


def test_saved_tensors_are_freed_after_backward():
    y = Exp.apply(f64(3))
    y.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.grad_fn.saved_tensors


def times_k(name, backward):
    """A Function ``x * k`` (k a number) with the given ``backward(ctx, gy)``: the bad-gradient cases."""
    return type(name, (mt.autograd.Function,), {"forward": staticmethod(lambda ctx, x, k: x * k),
                                                "backward": staticmethod(backward)})


def test_wrong_gradient_count_and_shape_raise_pytorchs_errors():
    TooFew = times_k("TooFew", lambda ctx, gy: gy)

    class BadShape(mt.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.sum()

        @staticmethod
        def backward(ctx, gy):
            return gy.reshape(1).expand(3)

    with pytest.raises(RuntimeError, match=r"function TooFewBackward returned an incorrect number of gradients "
                                           r"\(expected 2, got 1\)"):
        TooFew.apply(f64(3), 2.0).sum().backward()
    with pytest.raises(RuntimeError, match=r"Function BadShapeBackward returned an invalid gradient at index 0 - "
                                           r"got \[3\] but expected shape compatible with \[2, 3\]"):
        BadShape.apply(f64(2, 3)).backward()


def test_legacy_use_raises_as_pytorch():
    with pytest.warns(DeprecationWarning, match="should not be instantiated"):
        spy = Spy()
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward method is deprecated"):
        spy(mt.ones(2))
    with pytest.raises(NotImplementedError, match="You must implement the forward function"):
        mt.autograd.Function.forward(None, mt.ones(1))


def test_hooks_profiler_and_checkpoint_see_custom_functions():
    x = f64(3)
    y = Exp.apply(x)
    y.register_hook(lambda g: g * 2)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(x.detach().numpy()))
    with mt.profiler.profile() as prof:
        Spy.apply(f64(3), 2.0).sum().backward()
    spy = [e for e in prof.events() if e.name == "Spy"]
    assert len(spy) == 1 and [c.name for c in spy[0].cpu_children] == ["Mul"]  # its forward's op, inside it
    assert "SpyBackward" in {e.name for e in prof.events()}
    x = f64(4)
    out = mt.utils.checkpoint.checkpoint(lambda t: Exp.apply(t * 2), x, use_reentrant=False)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2 * x.detach().numpy()))


def test_on_each_device(device):
    x = mt.tensor([0.5, -1.0], device=device, requires_grad=True)
    y = Exp.apply(x)
    assert y.device == x.device
    y.sum().backward()
    assert x.grad.device == x.device
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.exp([0.5, -1.0]), rtol=1e-6)


def test_a_gradient_for_a_number_or_a_non_tensor_raises():
    ForNumber = times_k("ForNumber", lambda ctx, gy: (gy, gy))
    NotATensor = times_k("NotATensor", lambda ctx, gy: (1.0, None))
    SavesANumber = times_k("SavesANumber", None)
    SavesANumber.forward = staticmethod(lambda ctx, x, k: ctx.save_for_backward(x, k))
    with pytest.raises(RuntimeError, match="function ForNumberBackward returned a gradient different than None at "
                                           "position 2, but the corresponding forward input was not a Variable"):
        ForNumber.apply(f64(2), 3.0).sum().backward()
    with pytest.raises(RuntimeError, match=r"expected Variable or None \(got float\)"):
        NotATensor.apply(f64(2), 2.0).sum().backward()
    with pytest.raises(TypeError, match="save_for_backward can only save variables, but argument 1 is of type float"):
        SavesANumber.apply(f64(2), 2.0)


def test_custom_fwd_and_bwd_under_autocast():
    seen = {}

    class MM(mt.autograd.Function):
        @staticmethod
        @mt.amp.custom_fwd(device_type="cpu", cast_inputs=mt.float32)
        def forward(ctx, a, b):
            seen["fwd"] = (a.dtype, mt.is_autocast_enabled("cpu"))
            ctx.save_for_backward(a, b)
            return a @ b

        @staticmethod
        @mt.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["bwd"] = mt.is_autocast_enabled("cpu")
            a, b = ctx.saved_tensors
            return g @ b.T, a.T @ g

    class Plain(mt.autograd.Function):
        @staticmethod
        @mt.amp.custom_fwd(device_type="cpu")
        def forward(ctx, a):
            return a @ a

        @staticmethod
        @mt.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen["plain_bwd"] = mt.is_autocast_enabled("cpu")
            return g

    a = mt.randn(2, 2, dtype=mt.bfloat16, requires_grad=True)
    b = mt.randn(2, 2, requires_grad=True)
    with mt.autocast("cpu", dtype=mt.bfloat16):
        out = MM.apply(a, b)
        p = Plain.apply(b)
    assert out.dtype == mt.float32 and seen["fwd"] == (mt.float32, False)
    assert p.dtype == mt.bfloat16  # autocast reaches the ops inside forward
    (out.sum() + p.float().sum()).backward()
    assert seen["bwd"] is False and seen["plain_bwd"] is True
    assert a.grad.dtype == mt.bfloat16 and b.grad.dtype == mt.float32
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        mt.amp.custom_fwd(device_type=None)


def test_no_graph_without_grad():
    with mt.no_grad():
        y = Exp.apply(f64(3))
    assert y.grad_fn is None and not y.requires_grad
    assert Exp.apply(mt.ones(2)).grad_fn is None


def test_array_level_functions_keep_their_path():
    class Twice(mt.autograd.ArrayFunction):
        @staticmethod
        def forward(ctx, B, x):
            return x * 2

        @staticmethod
        def backward(ctx, B, gy):
            return gy * 2

    x = f64(3)
    Twice.apply(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0, 2.0])


@pytest.mark.torch
def test_parity_with_torch():
    torch = pytest.importorskip("torch")
    ours, theirs = make_functions(mt), make_functions(torch)
    rng = np.random.default_rng(3)
    a0, b0 = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))

    def run(lib, fns):
        spy, exp, muladd, square, dip, maxi, seesnone = fns
        a = lib.tensor(a0, requires_grad=True)
        b = lib.tensor(b0, requires_grad=True)
        p, s = muladd.apply(a, b, 0.5)
        out = (spy.apply(a, 3.0).sum() + exp.apply(b).sum() + p.sum() + 2 * s.sum()
               + square.apply(a, 3).sum() + dip.apply(b * 1).sum() + maxi.apply(a)[0].sum()
               + seesnone.apply(b)[1].sum())
        out.backward()
        return out.detach().numpy(), a.grad.numpy(), b.grad.numpy()

    for mine, ref in zip(run(mt, ours), run(torch, theirs)):
        np.testing.assert_allclose(mine, ref, rtol=1e-12, atol=1e-12)


class SinhWithIntermediates(mt.autograd.Function):
    """pytorch/tutorials' double-backward Sinh: exp(x) and exp(-x) are returned as outputs too, so that the
    backward that reads them (saved outputs of a Function with several outputs) is differentiable again."""

    @staticmethod
    def forward(ctx, x):
        expx, expnegx = x.exp(), (-x).exp()
        ctx.save_for_backward(expx, expnegx)
        return (expx - expnegx) / 2, expx, expnegx

    @staticmethod
    def backward(ctx, grad_out, grad_exp, grad_negexp):
        expx, expnegx = ctx.saved_tensors
        grad_input = grad_out * (expx + expnegx) / 2
        grad_input += grad_exp * expx
        grad_input -= grad_negexp * expnegx
        return grad_input


def test_double_backward_through_saved_outputs_of_a_multi_output_function():
    x = mt.tensor([0.3, -1.2, 2.0], dtype=mt.float64, requires_grad=True)
    assert mt.autograd.gradgradcheck(lambda a: SinhWithIntermediates.apply(a)[0], x)
    out, e, _ = SinhWithIntermediates.apply(x)
    g, = mt.autograd.grad(out.sum() + e.sum(), x, create_graph=True)  # cosh(x) + exp(x)
    gg, = mt.autograd.grad(g.sum(), x)  # sinh(x) + exp(x)
    xs = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(g.detach().numpy(), np.cosh(xs) + np.exp(xs), rtol=1e-12)
    np.testing.assert_allclose(gg.numpy(), np.sinh(xs) + np.exp(xs), rtol=1e-12)
