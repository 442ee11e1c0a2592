"""``minitensor.Size`` (PyTorch's ``torch.Size``): what ``shape`` and ``size()`` return, a tuple subclass."""
import copy
import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minitensor as mt

shapes = st.lists(st.integers(0, 5), max_size=4).map(tuple)


@given(shapes)
def test_shape_and_size_are_sizes_equal_to_the_tuple(shape):
    x = mt.zeros(shape)
    for s in (x.shape, x.size()):
        assert type(s) is mt.Size
        assert s == shape and hash(s) == hash(shape)
        assert s.numel() == int(np.prod(shape, dtype=np.int64)) == x.numel()
    for d in range(len(shape)):
        assert type(x.size(d)) is int and x.size(d) == shape[d]


def test_slicing_adding_and_repeating_keep_the_type():
    s = mt.Size([2, 3])
    assert (s[1:], type(s[1:]), s[0], type(s[0])) == ((3,), mt.Size, 2, int)
    for got, want in ((s + (4,), (2, 3, 4)), ((1,) + s, (1, 2, 3)), (s * 2, (2, 3, 2, 3)), (2 * s, (2, 3, 2, 3))):
        assert type(got) is mt.Size and got == want
    assert repr(s) == str(s) == "minitensor.Size([2, 3])"
    assert (mt.Size(), mt.Size().numel()) == ((), 1)  # a 0-d tensor holds one element
    assert mt.Size([0, 4]).numel() == 0


def test_items_are_ints_from_anything_with_index():
    assert mt.Size(np.array([2, 3])) == (2, 3)
    assert mt.Size([mt.tensor(3)]) == (3,)
    assert all(type(n) is int for n in mt.Size((np.int64(2), mt.tensor(5))))
    with pytest.raises(TypeError, match=r"item 1 is 'float'"):
        mt.Size([2, 2.5])


def test_takes_the_place_of_a_shape_and_survives_pickle_and_copy():
    x = mt.arange(6.0)
    assert x.view(mt.Size([2, 3])).shape == (2, 3)
    assert mt.zeros(mt.Size([3, 1])).shape == (3, 1)
    s = x.shape
    for back in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s)):
        assert type(back) is mt.Size and back == s


@pytest.mark.torch
def test_matches_torch_size():
    torch = pytest.importorskip("torch")
    for sizes in ([], [2, 3], [0, 4, 1]):
        ours, theirs = mt.Size(sizes), torch.Size(sizes)
        assert ours.numel() == theirs.numel()
        assert repr(ours).replace("minitensor", "torch") == repr(theirs)
        assert tuple(ours[1:]) == tuple(theirs[1:]) and tuple(ours + (7,)) == tuple(theirs + (7,))


@pytest.mark.parametrize("fmt", [None, "torch"])
def test_save_and_load_keep_the_type(tmp_path, fmt):
    x = mt.ones(2, 3)
    path = tmp_path / "ckpt"
    mt.save({"shape": x.shape, "plain": (2, 3)}, path, **({} if fmt is None else {"format": fmt}))
    back = mt.load(path)
    assert type(back["shape"]) is mt.Size and back["shape"] == (2, 3)
    assert type(back["plain"]) is tuple


@pytest.mark.torch
def test_torch_reads_our_size_and_we_read_its(tmp_path):
    torch = pytest.importorskip("torch")
    mt.save({"shape": mt.Size([4, 5])}, tmp_path / "ours.pt", format="torch")
    assert torch.load(tmp_path / "ours.pt")["shape"] == torch.Size([4, 5])
    torch.save({"shape": torch.Size([6])}, tmp_path / "theirs.pt")
    back = mt.load(tmp_path / "theirs.pt")["shape"]
    assert type(back) is mt.Size and back == (6,)
