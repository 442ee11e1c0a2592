"""``untyped_storage()`` / ``storage()``: the memory a tensor lies in, shared by its views."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import minitensor as mt


def test_views_share_a_storage_and_copies_do_not():
    x = mt.arange(12.0).reshape(3, 4)
    base = x.untyped_storage()
    for view in (x[1:], x.t(), x.view(-1), x[:, 2], x.reshape(4, 3)):
        assert view.untyped_storage().data_ptr() == base.data_ptr()
        assert view.untyped_storage().nbytes() == 48
    for copy in (x.clone(), x.t().contiguous(), x + 0):
        assert copy.untyped_storage().data_ptr() != base.data_ptr()
    assert x[1:].data_ptr() - base.data_ptr() == x[1:].storage_offset() * 4


def test_untyped_storage_is_bytes():
    x = mt.tensor([1.0, -2.0], dtype=mt.float32)
    s = x.untyped_storage()
    assert isinstance(s, mt.UntypedStorage) and len(s) == s.size() == s.nbytes() == 8 and s.element_size() == 1
    assert s.tolist() == list(np.array([1.0, -2.0], np.float32).view(np.uint8))
    assert s.device == mt.device("cpu") and not s.is_cuda and s.get_device() == -1 and s.untyped() is s
    with pytest.raises(NotImplementedError, match="fixed size"):
        s.resize_(0)


def test_typed_storage_warns_and_gives_elements():
    x = mt.arange(6, dtype=mt.int64).reshape(2, 3)[1]
    with pytest.warns(UserWarning, match="TypedStorage is deprecated"):
        s = x.storage()
    assert isinstance(s, mt.TypedStorage) and s.dtype is mt.int64 and s.size() == len(s) == 6
    assert s.tolist() == [0, 1, 2, 3, 4, 5] and s[4] == 4 and list(s) == s.tolist() and s.element_size() == 8
    assert s.untyped().nbytes() == 48 and s._untyped_storage.data_ptr() == s.data_ptr()
    x[0] = 7  # the storage reads the live memory
    assert s[3] == 7


def test_sparse_tensors_have_no_storage():
    sp = mt.eye(2).to_sparse()
    with pytest.raises(RuntimeError, match="storage"):
        sp.untyped_storage()


@pytest.mark.torch
def test_as_pytorch():
    torch = pytest.importorskip("torch")
    for lib in (mt, torch):
        x = lib.arange(12.0).reshape(3, 4)
        y = x[1:, 1:]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            typed = y.storage()
        found = (y.untyped_storage().nbytes(), y.untyped_storage().data_ptr() == x.data_ptr(), typed.size(),
                 typed.tolist(), typed.element_size(), y.untyped_storage().tolist()[4:8])
        if lib is mt:
            ours = found
        else:
            assert ours == found
