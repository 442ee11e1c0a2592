"""PyTorch's legacy constructors (``FloatTensor``, ``Tensor(2, 3)``), ``Tensor.type()`` and the ``size=``,
``out=`` and ``requires_grad=`` keywords of the creation functions."""
from __future__ import annotations

import numpy as np
import pytest

import minitensor as mt

LEGACY = {"FloatTensor": mt.float32, "DoubleTensor": mt.float64, "HalfTensor": mt.float16, "LongTensor": mt.int64,
          "IntTensor": mt.int32, "ShortTensor": mt.int16, "CharTensor": mt.int8, "ByteTensor": mt.uint8,
          "BoolTensor": mt.bool}


@pytest.mark.parametrize("name", sorted(LEGACY))
def test_legacy_types_make_tensors_of_their_dtype(name):
    kind, dt = getattr(mt, name), LEGACY[name]
    sized = kind(2, 3)
    assert sized.shape == (2, 3) and sized.dtype is dt and not sized.requires_grad
    assert kind((4,)).tolist() == np.array([4], dtype=dt.np).tolist()  # a tuple is data, as PyTorch
    data = kind([[1, 0], [3, 4]])
    assert data.dtype is dt and data.tolist() == np.array([[1, 0], [3, 4]], dtype=dt.np).tolist()
    assert kind().shape == (0,)
    assert isinstance(data, kind) and isinstance(data, mt.Tensor)
    other = mt.FloatTensor if dt is not mt.float32 else mt.LongTensor
    assert not isinstance(data, other)
    assert data.type() == f"torch.{name}" and name in repr(kind)


def test_legacy_values_and_errors():
    assert mt.LongTensor([1.7, -2.2]).tolist() == [1, -2]  # truncated, as PyTorch
    assert mt.FloatTensor(np.arange(3)).tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(TypeError, match="data must be a sequence"):
        mt.FloatTensor(2.5)
    with pytest.raises(TypeError, match="sizes or one sequence"):
        mt.FloatTensor(2, [1])
    with pytest.raises(RuntimeError, match="negative dimension"):
        mt.Tensor(-1)


def test_tensor_constructor_forms():
    assert mt.Tensor(2, 3).shape == (2, 3) and mt.Tensor(2, 3).dtype is mt.float32
    assert mt.Tensor().shape == (0,) and mt.Tensor().dtype is mt.float32
    assert mt.Tensor([1, 2]).tolist() == [1.0, 2.0] and mt.Tensor([1, 2]).dtype is mt.float32
    assert mt.Tensor((2, 3)).tolist() == [2.0, 3.0]
    x = mt.Tensor([1.0, 2.0], requires_grad=True)
    assert x.requires_grad and x.is_leaf and type(x) is mt.Tensor
    mt.set_default_dtype(mt.float64)
    try:
        assert mt.Tensor(2).dtype is mt.float64
    finally:
        mt.set_default_dtype(mt.float32)


def test_type_casts_by_dtype_legacy_type_or_name():
    x = mt.tensor([1.5, -2.5])
    assert x.type() == "torch.FloatTensor" and mt.tensor([1]).type() == "torch.LongTensor"
    assert x.type(mt.float64).dtype is mt.float64
    assert x.type(mt.IntTensor).tolist() == [1, -2]
    assert x.type("torch.DoubleTensor").dtype is mt.float64
    assert x.type(mt.float32) is x  # no change: the same tensor, as PyTorch
    for bad in ("torch.ComplexTensor", "numpy.FloatTensor"):
        with pytest.raises(ValueError, match="invalid type"):
            x.type(bad)


@pytest.mark.gpu
def test_type_by_name_moves_between_devices():
    if not mt.cuda.is_available():
        pytest.skip("no CUDA device")
    x = mt.tensor([1.5, -2.5])
    on_gpu = x.type("torch.cuda.DoubleTensor")
    assert on_gpu.is_cuda and on_gpu.dtype is mt.float64 and on_gpu.type() == "torch.cuda.DoubleTensor"
    back = on_gpu.type("torch.FloatTensor")
    assert back.is_cpu and back.dtype is mt.float32 and not isinstance(on_gpu, mt.DoubleTensor)
    assert on_gpu.type(mt.float32).is_cuda  # a dtype keeps the device


def test_size_keyword():
    for fn in (mt.zeros, mt.ones, mt.empty, mt.rand, mt.randn):
        assert fn(size=(2, 3)).shape == (2, 3) and fn(size=[4]).shape == (4,)
        with pytest.raises(TypeError, match="multiple values for argument 'size'"):
            fn(2, size=(2,))
    assert mt.zeros(size=(2,)).tolist() == [0.0, 0.0] and mt.ones(size=(1,)).tolist() == [1.0]
    assert mt.randint(0, 3, size=(5,)).shape == (5,) and mt.full(size=(2,), fill_value=7).tolist() == [7, 7]


def test_out_keyword_writes_into_out():
    out = mt.empty(2, 2)
    assert mt.zeros(2, 2, out=out) is out and out.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    version = out._version
    assert mt.ones(2, 2, out=out) is out and out.tolist() == [[1.0, 1.0], [1.0, 1.0]] and out._version > version
    ints = mt.empty(3, dtype=mt.int64)
    assert mt.arange(5, out=ints) is ints and ints.tolist() == [0, 1, 2, 3, 4]  # resized, as PyTorch
    floats = mt.empty(0, dtype=mt.float64)
    mt.arange(3, out=floats)
    assert floats.dtype is mt.float64 and floats.tolist() == [0.0, 1.0, 2.0]  # out's dtype
    assert mt.linspace(0, 1, 3, out=mt.empty(3)).tolist() == [0.0, 0.5, 1.0]
    assert mt.eye(2, out=mt.empty(2, 2)).tolist() == [[1.0, 0.0], [0.0, 1.0]]
    assert mt.full((2,), 3.0, out=mt.empty(2)).tolist() == [3.0, 3.0]
    assert sorted(mt.randperm(4, out=mt.empty(4, dtype=mt.int64)).tolist()) == [0, 1, 2, 3]
    drawn = mt.rand(100, out=mt.empty(100, dtype=mt.float64))
    assert drawn.dtype is mt.float64 and 0 <= drawn.min().item() and drawn.max().item() < 1
    with pytest.raises(RuntimeError, match="does not match dtype of out"):
        mt.zeros(2, out=mt.empty(2, dtype=mt.int64), dtype=mt.float32)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        mt.zeros(2, out=mt.empty(2, requires_grad=True))
    with pytest.raises(TypeError, match="'out' must be Tensor"):
        mt.zeros(2, out=np.empty(2))


def test_requires_grad_keyword_on_creation_functions():
    for t in (mt.zeros(2, requires_grad=True), mt.rand(2, requires_grad=True), mt.arange(3.0, requires_grad=True),
              mt.linspace(0, 1, 3, requires_grad=True), mt.eye(2, requires_grad=True),
              mt.randint(0, 5, (3,), dtype=mt.float32, requires_grad=True)):
        assert t.requires_grad and t.is_leaf
    for make in (lambda: mt.randint(0, 5, (2,), requires_grad=True),
                 lambda: mt.zeros(2, dtype=mt.int64, requires_grad=True),
                 lambda: mt.arange(5, requires_grad=True)):
        with pytest.raises(RuntimeError, match="Tensors of floating point dtype can require gradients"):
            make()


@pytest.mark.torch
def test_legacy_forms_match_pytorch():
    torch = pytest.importorskip("torch")
    for name in sorted(LEGACY):
        for args in ((2, 3), ([[1, 0], [3, 4]],), ((4,),), ()):
            ours, theirs = getattr(mt, name)(*args), getattr(torch, name)(*args)
            assert ours.shape == tuple(theirs.shape) and str(ours.dtype).split(".")[1] == str(theirs.dtype)[6:]
            assert ours.type() == theirs.type()
            if args and not isinstance(args[0], int):
                assert ours.tolist() == theirs.tolist()
    assert mt.Tensor((2, 3)).tolist() == torch.Tensor((2, 3)).tolist()
    with pytest.raises(RuntimeError):
        torch.randint(0, 5, (2,), requires_grad=True)
