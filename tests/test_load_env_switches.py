"""``load``'s environment switches, as PyTorch's: TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD lets an old script
``torch.load`` a pickled NumPy array (pytorch/examples' time_sequence_prediction) unchanged;
TORCH_FORCE_WEIGHTS_ONLY_LOAD refuses pickled globals even where the call asks for weights_only=False."""
from __future__ import annotations

import contextlib
import pickle
import zipfile

import numpy as np
import pytest

from minitensor.serialization import load

DATA = np.sin(np.arange(12.0).reshape(3, 4) / 20.0)


def _pickled_array(path):
    """What ``torch.save(ndarray, f)`` writes: the zip layout whose pickle names NumPy's globals."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pickle.dumps(DATA, protocol=2))
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")
    return path


def test_force_no_weights_only_loads_pickled_array_when_the_call_leaves_it_unset(tmp_path, monkeypatch):
    path = _pickled_array(tmp_path / "a.pt")
    with pytest.raises(pickle.UnpicklingError):
        load(path)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.warns(UserWarning, match="TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"):
        got = load(path)
    np.testing.assert_array_equal(got, DATA)
    with pytest.raises(pickle.UnpicklingError):  # an explicit weights_only=True still wins
        load(path, weights_only=True)


def test_force_weights_only_overrides_an_explicit_false_and_both_is_an_error(tmp_path, monkeypatch):
    path = _pickled_array(tmp_path / "a.pt")
    np.testing.assert_array_equal(load(path, weights_only=False), DATA)
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "true")
    with pytest.raises(pickle.UnpicklingError):
        load(path, weights_only=False)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "yes")
    with pytest.raises(RuntimeError, match="Only one of"):
        load(path)


@pytest.mark.torch
@pytest.mark.parametrize("env", [{}, {"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}, {"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "1"},
                                 {"TORCH_FORCE_WEIGHTS_ONLY_LOAD": "1", "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}])
@pytest.mark.parametrize("weights_only", [None, False])
def test_switches_match_pytorch(tmp_path, monkeypatch, env, weights_only):
    torch = pytest.importorskip("torch")
    path = tmp_path / "a.pt"
    torch.save(DATA, path)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    outcomes = []
    for fn in (torch.load, load):
        try:
            warns = weights_only is None and env == {"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"}
            with pytest.warns(UserWarning) if warns else contextlib.nullcontext():
                outcomes.append(np.asarray(fn(path, weights_only=weights_only)).tolist())
        except pickle.UnpicklingError:
            outcomes.append("refused")
        except RuntimeError as e:
            outcomes.append("refused" if "Weights only load failed" in str(e) else "both")
    assert outcomes[0] == outcomes[1]

