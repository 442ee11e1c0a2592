"""nanoGPT's ``'fused' in inspect.signature(torch.optim.AdamW).parameters`` and the other implementation
keywords (``foreach``, ``capturable``, ``differentiable``) in the signatures of Adam, AdamW, SGD, RMSprop and
Adagrad: accepted, and the update is the same whichever is asked for."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import minitensor as mt

NAMES = ("Adam", "AdamW", "SGD", "RMSprop", "Adagrad")


def signature_flags(lib):
    return {n: sorted({"fused", "foreach", "capturable", "differentiable"} & set(inspect.signature(
        getattr(lib.optim, n)).parameters)) for n in NAMES}


def nanogpt_step(lib, **flags):
    lib.manual_seed(0)
    w = lib.nn.Parameter(lib.tensor(np.arange(6.0).reshape(2, 3), dtype=lib.float32))
    use_fused = "fused" in inspect.signature(lib.optim.AdamW).parameters
    opt = lib.optim.AdamW([w], lr=0.1, betas=(0.9, 0.95), **({"fused": True} if use_fused else {}), **flags)
    for _ in range(3):
        opt.zero_grad(set_to_none=True)
        (w * w).sum().backward()
        opt.step()
    return use_fused, w.detach().numpy().round(5).tolist()


def test_implementation_keywords_are_in_the_signatures_and_change_nothing():
    flags = signature_flags(mt)
    assert flags["AdamW"] == flags["Adam"] == ["capturable", "differentiable", "foreach", "fused"]
    assert flags["SGD"] == flags["Adagrad"] == ["differentiable", "foreach", "fused"]
    assert flags["RMSprop"] == ["capturable", "differentiable", "foreach"]
    assert nanogpt_step(mt) == nanogpt_step(mt, foreach=False, capturable=False, differentiable=False)
    assert nanogpt_step(mt)[0] is True
    with pytest.raises(TypeError, match="unexpected keyword"):
        mt.optim.SGD([mt.nn.Parameter(mt.ones(1))], lr=0.1, fusedd=True)


@pytest.mark.torch
def test_signatures_and_fused_step_match_torch():
    torch = pytest.importorskip("torch")
    assert signature_flags(mt) == signature_flags(torch)
    ours, theirs = nanogpt_step(mt), nanogpt_step(torch)
    assert ours[0] == theirs[0] and np.allclose(ours[1], theirs[1], atol=1e-5)


ALL = ("SGD", "Adam", "AdamW", "Adagrad", "RMSprop", "Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop")
GROUP_FLAGS = {"SGD": ("differentiable", "foreach", "fused"), "Adagrad": ("differentiable", "foreach", "fused"),
               "Adam": ("capturable", "differentiable", "foreach", "fused"),
               "AdamW": ("capturable", "differentiable", "foreach", "fused")}


@pytest.mark.parametrize("name", ALL)
def test_implementation_flags_are_kept_in_the_param_groups(name):
    """As PyTorch's: the flags are hyper-parameters of each group (state_dict, repr), with their defaults."""
    opt = getattr(mt.optim, name)([mt.nn.Parameter(mt.ones(1))], foreach=False)
    group = opt.param_groups[0]
    flags = GROUP_FLAGS.get(name, ("capturable", "differentiable", "foreach"))
    assert {k: group[k] for k in flags} == {k: {"foreach": False, "fused": None}.get(k, False) for k in flags}
    assert all(k in opt.state_dict()["param_groups"][0] for k in flags)
    assert "    foreach: False\n" in repr(opt)


@pytest.mark.parametrize("name", ALL)
def test_a_differentiable_step_is_refused(name):
    """differentiable=True asks for an update recorded by autograd (meta-learning): minitensor's steps are in
    place outside the graph, so a silently detached update is refused."""
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        getattr(mt.optim, name)([mt.nn.Parameter(mt.ones(1))], differentiable=True)


@pytest.mark.torch
@pytest.mark.parametrize("name", ALL)
def test_param_groups_and_repr_match_pytorch(name):
    torch = pytest.importorskip("torch")
    ours = getattr(mt.optim, name)([mt.nn.Parameter(mt.ones(1))], lr=0.5)
    theirs = getattr(torch.optim, name)([torch.nn.Parameter(torch.ones(1))], lr=0.5)
    assert {k: v for k, v in ours.param_groups[0].items() if k != "params"} == \
        {k: v for k, v in theirs.param_groups[0].items() if k != "params"}
    assert repr(ours) == repr(theirs)
    # the keys' order too: a printed ``optimizer.state_dict()`` (what_is_state_dict's recipe) lists them so
    assert list(ours.param_groups[0]) == list(theirs.param_groups[0])
    assert list(ours.state_dict()["param_groups"][0]) == list(theirs.state_dict()["param_groups"][0])


def test_a_printed_state_dict_lists_the_hyper_parameters_in_pytorchs_order():
    """PyTorch 2.13's SGD(lr=0.001, momentum=0.9).state_dict()['param_groups'], as the recipe prints it."""
    w = mt.nn.Parameter(mt.ones(1))
    assert str(mt.optim.SGD([w], lr=0.001, momentum=0.9).state_dict()["param_groups"]) == (
        "[{'lr': 0.001, 'momentum': 0.9, 'dampening': 0, 'weight_decay': 0, 'nesterov': False, 'maximize': False, "
        "'foreach': None, 'differentiable': False, 'fused': None, 'params': [0]}]")
    assert list(mt.optim.Adam([w]).param_groups[0]) == [
        "params", "lr", "betas", "eps", "weight_decay", "amsgrad", "maximize", "foreach", "capturable",
        "differentiable", "fused", "decoupled_weight_decay"]
