"""CUDA availability without a GPU: import hygiene, and an error that says which of CuPy, the NVIDIA driver
and a GPU is missing (issue #5). Each case runs in a fresh interpreter, so that what it hides or fakes
(cupy, numba) cannot leak into other tests.
"""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import minitensor as mt

ROOT = Path(__file__).resolve().parents[2]
CUDA_STACK = ("cupy", "cupyx", "cupy_backends", "numba", "numba_cuda")

TRAINING_STEP = """
import numpy as np
import minitensor as mt
mt.manual_seed(0)
rng = np.random.default_rng(0)
features = rng.standard_normal((64, 4))
X = mt.tensor(features, dtype=mt.float32)
y = mt.tensor((features @ rng.standard_normal((4, 3))).argmax(1))  # labels a linear model can learn
model = mt.nn.Sequential(mt.nn.Linear(4, 16), mt.nn.ReLU(), mt.nn.Linear(16, 3))
opt = mt.optim.Adam(model.parameters(), lr=0.05)
losses = []
for _ in range(30):
    opt.zero_grad()
    loss = mt.nn.functional.cross_entropy(model(X), y)
    loss.backward()
    opt.step()
    losses.append(loss.item())
assert losses[-1] < 0.3 * losses[0], losses
assert all(p.grad is not None and p.device == mt.device("cpu") for p in model.parameters())
"""

CUDA_REFUSED = """
def refused(make):
    try:
        make()
    except RuntimeError as e:
        return str(e)
    raise AssertionError("a cuda tensor was made without a usable GPU")

assert mt.cuda.is_available() is False and mt.cuda.device_count() == 0
message = refused(lambda: mt.zeros(2, device="cuda"))
assert "cuda" in message, message
assert refused(lambda: mt.ones(2).to("cuda")) == message
api_message = refused(mt.cuda.synchronize)  # the torch.cuda-like API gives the same reason, once prefixed
assert api_message.startswith("CUDA is not available: ") and api_message.count("not available") == 1, api_message
assert api_message.split(": ", 1)[1] in message, (api_message, message)
for part in {expected!r}:
    assert part in message, (part, message)
"""


def run_python(code: str, **env: str) -> None:
    """Run ``code`` in a fresh interpreter that imports this checkout of minitensor (over the strict CuPy double
when the tests run on it, MINITENSOR_STRICT_CUPY=1, as tests/conftest.py installs it here)."""
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    if {**os.environ, **env}.get("MINITENSOR_STRICT_CUPY") == "1":
        code = "from tests.cuda_strict import install\ninstall()\n" + code
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": path, **env})
    assert done.returncode == 0, done.stderr[-3000:]


# ------------------------------------------------------------------------------------------ hygiene
def test_import_loads_neither_cupy_nor_numba_and_cpu_training_no_cupy():
    """``import minitensor`` loads no part of the CUDA stack; a CPU training step loads no CuPy (it may
    load numba when installed: the CPU backend's optional compiled loops)."""
    run_python(f"""
import sys
import minitensor
loaded = [m for m in sys.modules if m.split(".")[0] in {CUDA_STACK!r}]
assert not loaded, loaded
""" + TRAINING_STEP + f"""
loaded = [m for m in sys.modules if m.split(".")[0] in {CUDA_STACK!r} and not m.startswith("numba")]
assert not loaded, loaded
""")


def test_without_cupy_and_numba_cpu_training_works_and_cuda_says_to_install_cupy():
    hidden = f"import sys\nfor m in {CUDA_STACK!r}:\n    sys.modules[m] = None  # as if not installed\n"
    expected = ["CuPy", "not installed", 'pip install "minitensor[cuda12]"', '"minitensor[cuda13]"',
                "nvidia-smi"]
    run_python(hidden + TRAINING_STEP + CUDA_REFUSED.format(expected=expected))


BROKEN_CUPY = """
import importlib.abc, importlib.util, sys

class BrokenCupy(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        return importlib.util.spec_from_loader(name, self) if name == "cupy" else None
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        raise ImportError("libcudart.so.13: cannot open shared object file")

sys.meta_path.insert(0, BrokenCupy())
import minitensor as mt
"""


def test_a_cupy_that_fails_to_import_is_reported_as_such():
    expected = ["CuPy is installed but cannot be imported", "libcudart.so.13", "minitensor[cuda12]"]
    run_python(BROKEN_CUPY + CUDA_REFUSED.format(expected=expected))


# ------------------------------------------------------------------------------ a fake CUDA runtime
# cupy, cupyx, cupy_backends, numba and numba_cuda become empty packages whose attributes are NumPy's (so
# that dtypes such as cupy.float32 work at import time) or mocks; cupy.cuda.runtime answers as FAKE says.
FAKE_CUDA = """
import importlib.abc, importlib.util, json, os, sys, types
from unittest import mock
import numpy

class FakeModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(numpy, name, None)
        return value if value is not None else mock.MagicMock(name=f"{self.__name__}.{name}")

class FakeCudaStack(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in %(roots)r:
            return importlib.util.spec_from_loader(name, self, is_package=True)
        return None
    def create_module(self, spec):
        return FakeModule(spec.name)
    def exec_module(self, module):
        pass

sys.meta_path.insert(0, FakeCudaStack())
import cupy.cuda.runtime as runtime

class CUDARuntimeError(RuntimeError):
    def __init__(self, status):
        super().__init__(f"cudaError {status}")
        self.status = status

FAKE = json.loads(os.environ["FAKE_CUDA"])

def answer(what):
    def call():
        value = FAKE[what]
        if isinstance(value, dict):
            raise CUDARuntimeError(value["error"])
        if value == "crash":
            raise OSError("the runtime library went away")
        return value
    return call

runtime.CUDARuntimeError = CUDARuntimeError
runtime.driverGetVersion = answer("driver")
runtime.runtimeGetVersion = answer("runtime")
runtime.getDeviceCount = answer("devices")
import minitensor as mt
""" % {"roots": CUDA_STACK}


@pytest.mark.parametrize("fake, expected", [
    ({"driver": 0, "runtime": 13000, "devices": {"error": 35}},
     ["CuPy is installed but no NVIDIA driver was found", "nvidia-smi"]),
    ({"driver": 12040, "runtime": 13000, "devices": {"error": 100}},
     ["driver (CUDA 12.4) are present but no GPU is visible"]),
    ({"driver": 12040, "runtime": 12080, "devices": 0}, ["no GPU is visible"]),
    ({"driver": 12020, "runtime": 13000, "devices": {"error": 35}},
     ["driver supports CUDA 12.2 but this CuPy needs CUDA 13.0", "minitensor[cuda12]"]),
    ({"driver": 12040, "runtime": 12080, "devices": {"error": 999}},
     ["the CUDA runtime reports cudaError 999"]),
    ({"driver": "crash", "runtime": 12080, "devices": 1}, ["probing the CUDA runtime failed", "went away"]),
], ids=["no-driver", "no-device-error", "zero-devices", "driver-too-old", "other-error", "runtime-crash"])
def test_a_runtime_without_a_usable_gpu_says_what_is_missing(fake, expected):
    run_python(FAKE_CUDA + CUDA_REFUSED.format(expected=expected), FAKE_CUDA=json.dumps(fake))


def test_cupy_without_numba_says_to_install_numba_cuda():
    fake = {"driver": 12040, "runtime": 12080, "devices": 1}
    no_numba = "import sys\nsys.modules['numba'] = None  # as if not installed\n"
    run_python(no_numba + FAKE_CUDA + CUDA_REFUSED.format(expected=["numba-cuda", "minitensor[cuda12]"]),
               FAKE_CUDA=json.dumps(fake))


def test_hidden_gpus_name_cuda_visible_devices():
    fake = {"driver": 12040, "runtime": 12080, "devices": {"error": 100}}
    run_python(FAKE_CUDA + CUDA_REFUSED.format(expected=["no GPU is visible", "CUDA_VISIBLE_DEVICES=''"]),
               FAKE_CUDA=json.dumps(fake), CUDA_VISIBLE_DEVICES="")


def test_a_fake_runtime_with_a_gpu_counts_it():
    """The probe is not stuck on "unavailable": a runtime that reports two GPUs makes CUDA available."""
    fake = {"driver": 12040, "runtime": 12080, "devices": 2}
    run_python(FAKE_CUDA + """
from minitensor.backends import backend_class
cls = backend_class("cuda")
assert cls.is_available() is True and cls.device_count() == 2 and cls.unavailable_reason() == ""
assert mt.cuda.is_available() is True and mt.cuda.device_count() == 2
""", FAKE_CUDA=json.dumps(fake))


# ------------------------------------------------------------------------- this machine's real CuPy
@pytest.mark.skipif(importlib.util.find_spec("cupy") is None, reason="CuPy is not installed")
def test_installed_cupy_without_a_gpu_names_the_driver_or_the_gpu():
    if mt.cuda.is_available():
        pytest.skip("this machine has a usable GPU")
    with pytest.raises(RuntimeError, match=r"device type 'cuda' is not available: .*(driver|GPU|numba-cuda)"):
        mt.zeros(2, device="cuda")
    assert mt.cuda.device_count() == 0
