"""Seeded runs repeat bit for bit in new processes (same machine, BLAS kernels and thread count), and
PyTorch's determinism switch and its queries (docs/reproducibility.md)."""
from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import pytest

import minitensor as mt
from minitensor.deterministic import alert_not_deterministic

TRAIN = textwrap.dedent("""
    import sys
    import numpy as np
    import minitensor as mt
    import minitensor.nn as nn
    import minitensor.nn.functional as F
    from minitensor.utils.data import DataLoader, TensorDataset

    mt.manual_seed(int(sys.argv[1]))
    model = nn.Sequential(nn.Conv2d(1, 6, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.2),
                          nn.Flatten(), nn.Linear(6 * 6 * 6, 10))
    opt = mt.optim.Adam(model.parameters(), 1e-2)
    data = np.random.default_rng(0).standard_normal((96, 1, 12, 12)).astype(np.float32)
    labels = np.random.default_rng(1).integers(0, 10, 96)
    loader = DataLoader(TensorDataset(mt.tensor(data), mt.tensor(labels)), batch_size=32, shuffle=True,
                        num_workers=2)
    for epoch in range(2):
        for x, y in loader:
            opt.zero_grad()
            F.cross_entropy(model(x), y).backward()
            opt.step()
    print(" ".join(float(p.detach().double().sum()).hex() for p in model.parameters()))
""")


def _train(seed: int) -> str:
    done = subprocess.run([sys.executable, "-c", TRAIN, str(seed)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_seeded_conv_training_repeats_bit_for_bit_in_new_processes():
    """Weights, dropout masks, shuffling, worker threads, BLAS and the Numba kernels: all repeat."""
    first, second = _train(3), _train(3)
    assert first == second
    assert _train(4) != first  # the seed does reach the weights (the comparison above can fail)


def test_the_switch_and_its_queries_as_pytorchs():
    try:
        assert not mt.are_deterministic_algorithms_enabled() and mt.get_deterministic_debug_mode() == 0
        mt.use_deterministic_algorithms(True)
        assert mt.are_deterministic_algorithms_enabled()
        assert not mt.is_deterministic_algorithms_warn_only_enabled()
        assert mt.get_deterministic_debug_mode() == 2
        mt.use_deterministic_algorithms(True, warn_only=True)
        assert mt.is_deterministic_algorithms_warn_only_enabled() and mt.get_deterministic_debug_mode() == 1
        mt.set_deterministic_debug_mode("default")
        assert not mt.are_deterministic_algorithms_enabled()
        mt.set_deterministic_debug_mode("error")
        assert mt.get_deterministic_debug_mode() == 2 and not mt.is_deterministic_algorithms_warn_only_enabled()
        mt.set_deterministic_debug_mode(1)
        assert mt.is_deterministic_algorithms_warn_only_enabled()
    finally:
        mt.use_deterministic_algorithms(False)


def test_bad_arguments_get_pytorchs_errors():
    with pytest.raises(TypeError, match="expects a bool"):
        mt.use_deterministic_algorithms(1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="warn_only"):
        mt.use_deterministic_algorithms(True, warn_only="yes")  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="expected one of `default`, `warn`, `error`"):
        mt.set_deterministic_debug_mode("loud")
    with pytest.raises(RuntimeError, match="expected 0, 1, or 2"):
        mt.set_deterministic_debug_mode(3)
    with pytest.raises(TypeError, match="str or int"):
        mt.set_deterministic_debug_mode(1.0)  # type: ignore[arg-type]
    assert not mt.are_deterministic_algorithms_enabled()  # nothing changed by the refused calls


def test_the_alert_is_silent_when_off_warns_or_raises_when_on():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        alert_not_deterministic("op_cuda")  # off: nothing
    try:
        mt.use_deterministic_algorithms(True, warn_only=True)
        with pytest.warns(UserWarning, match="^op_cuda does not have a deterministic implementation"):
            alert_not_deterministic("op_cuda")
        mt.use_deterministic_algorithms(True)
        with pytest.raises(RuntimeError, match="warn_only=True"):
            alert_not_deterministic("op_cuda")
    finally:
        mt.use_deterministic_algorithms(False)
