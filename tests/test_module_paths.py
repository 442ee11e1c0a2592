"""PyTorch's import paths that layers and training scripts use, where minitensor's files are laid out
otherwise: each imports, and gives minitensor's object."""
from __future__ import annotations

import collections
import importlib
import typing

import pytest

import minitensor as mt
from minitensor.nn.modules.utils import (_list_with_default, _ntuple, _pair, _quadruple, _reverse_repeat_tuple,
                                         _single, _triple, consume_prefix_in_state_dict_if_present)

PATHS = [  # (module path, name, the object it must be)
    ("minitensor.distributions.normal", "Normal", mt.distributions.Normal),
    ("minitensor.distributions.categorical", "Categorical", mt.distributions.Categorical),
    ("minitensor.distributions.studentT", "StudentT", mt.distributions.StudentT),
    ("minitensor.distributions.relaxed_categorical", "RelaxedOneHotCategorical",
     mt.distributions.RelaxedOneHotCategorical),
    ("minitensor.distributions.gamma", "Gamma", mt.distributions.Gamma),
    ("minitensor.cuda.amp", "GradScaler", mt.cuda.amp.GradScaler),
    ("minitensor.cuda.amp", "autocast", mt.cuda.amp.autocast),
    ("minitensor.utils.data._utils.collate", "default_collate", mt.utils.data.default_collate),
    ("minitensor.utils.model_zoo", "load_url", mt.hub.load_state_dict_from_url),
]


@pytest.mark.parametrize("path, name, expected", PATHS)
def test_pytorch_paths_import(path, name, expected):
    assert getattr(importlib.import_module(path), name) is expected


def test_from_import_statements():
    scope: dict = {}
    exec("from minitensor.distributions.normal import Normal\n"
         "from minitensor.cuda.amp import GradScaler\n"
         "from minitensor.nn.common_types import _size_2_t", scope)
    assert scope["Normal"] is mt.distributions.Normal and scope["GradScaler"] is mt.cuda.amp.GradScaler
    assert scope["_size_2_t"] == typing.Union[int, tuple[int, int]]


def test_ntuple_helpers():
    assert _single(3) == (3,) and _pair(3) == (3, 3) and _triple(2) == (2, 2, 2) and _quadruple(0) == (0,) * 4
    assert _pair([1, 2]) == (1, 2) and _pair((4, 5, 6)) == (4, 5, 6)  # an iterable is kept as it is
    assert _ntuple(2, "p").__name__ == "p" and _pair.__name__ == "_pair"
    assert _reverse_repeat_tuple((1, 2), 2) == (2, 2, 1, 1)
    assert _list_with_default(5, [1, 2, 3]) == 5 and _list_with_default([None, 4], [8, 6, 7]) == [6, 4]
    with pytest.raises(ValueError, match="at least 3"):
        _list_with_default([None, 4], [8, 6])


def test_consume_prefix_strips_ddp_keys_and_metadata():
    state = collections.OrderedDict([("module.fc.weight", 1), ("module.fc.bias", 2), ("head", 3)])
    state._metadata = collections.OrderedDict([("", {}), ("module", {"v": 1}), ("module.fc", {"v": 2})])
    consume_prefix_in_state_dict_if_present(state, "module.")
    assert list(state) == ["head", "fc.weight", "fc.bias"]
    # "module" (the wrapped model's own entry) becomes "", the wrapper's, as PyTorch's does
    assert list(state._metadata.items()) == [("", {"v": 1}), ("fc", {"v": 2})]


@pytest.mark.torch
def test_consume_prefix_as_pytorch():
    pytest.importorskip("torch")
    from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present as reference
    made = []
    for fn in (consume_prefix_in_state_dict_if_present, reference):
        state = collections.OrderedDict([("module.a", 1), ("b", 2), ("module.c.d", 3)])
        state._metadata = collections.OrderedDict([("", {"x": 0}), ("module", {"x": 1}), ("module.c", {"x": 2})])
        fn(state, "module.")
        made.append((list(state.items()), list(state._metadata.items())))
    assert made[0] == made[1]


@pytest.mark.torch
def test_every_pytorch_distribution_module_exists():
    pytest.importorskip("torch")
    import torch.distributions as D
    for name in dir(D):
        module = getattr(D, name)
        if isinstance(module, type(D)) and module.__name__.startswith("torch.distributions."):
            ours = importlib.import_module(module.__name__.replace("torch", "minitensor", 1))
            for member in getattr(module, "__all__", []):
                assert hasattr(ours, member), f"{module.__name__}.{member}"


@pytest.mark.torch
def test_common_types_and_collate_names_are_pytorchs():
    pytest.importorskip("torch")
    import torch.nn.common_types as theirs
    import torch.utils.data._utils.collate as their_collate
    import minitensor.nn.common_types as ours
    import minitensor.utils.data._utils.collate as our_collate
    for name in dir(theirs):
        if name.startswith("_") and name.endswith("_t"):
            assert hasattr(ours, name), name
    assert our_collate.np_str_obj_array_pattern.pattern == their_collate.np_str_obj_array_pattern.pattern


def test_tril_matrix_vec_round_trip():
    from minitensor.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix
    m = mt.arange(18.0).reshape(2, 3, 3)
    v = tril_matrix_to_vec(m)
    assert v.tolist() == [[0, 3, 4, 6, 7, 8], [9, 12, 13, 15, 16, 17]]
    assert vec_to_tril_matrix(v).tolist() == mt.tril(m).tolist()
    assert tril_matrix_to_vec(m[0], diag=-1).tolist() == [3, 6, 7]
    v.requires_grad_()
    vec_to_tril_matrix(v).sum().backward()
    assert v.grad.tolist() == [[1.0] * 6] * 2
    with pytest.raises(ValueError, match="cannot be expressed"):
        vec_to_tril_matrix(mt.ones(5))
    with pytest.raises(ValueError, match="outside"):
        tril_matrix_to_vec(m, diag=3)


@pytest.mark.torch
def test_tril_matrix_vec_as_pytorch():
    torch = pytest.importorskip("torch")
    from torch.distributions.utils import tril_matrix_to_vec as t2v, vec_to_tril_matrix as v2t
    from minitensor.distributions.utils import tril_matrix_to_vec, vec_to_tril_matrix
    m = mt.arange(32.0).reshape(2, 4, 4)
    for diag in (-2, -1, 0, 1):
        ours, theirs = tril_matrix_to_vec(m, diag), t2v(torch.tensor(m.tolist()), diag)
        assert ours.tolist() == theirs.tolist()
        assert vec_to_tril_matrix(ours, diag).tolist() == v2t(theirs, diag).tolist()
