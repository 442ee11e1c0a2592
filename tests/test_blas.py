"""backends/blas.py: the OpenBLAS core type chosen before NumPy loads, the report of what loaded, and
PyTorch's set/get_num_threads. The choice is checked in fresh interpreters (it happens at import)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import minitensor as mt
from minitensor.backends import blas

ZEN5 = """processor	: 0
vendor_id	: AuthenticAMD
cpu family	: 26
model		: 2
model name	: AMD EPYC 9555 64-Core Processor
flags		: fpu sse2 avx avx2 fma avx512f avx512dq avx512cd avx512bw avx512vl avx512_bf16

processor	: 1
vendor_id	: GenuineIntel
"""
ZEN4 = ZEN5.replace("cpu family	: 26", "cpu family	: 25")
XEON = ZEN5.replace("AuthenticAMD", "GenuineIntel").replace("cpu family	: 26", "cpu family	: 6")
ZEN5_NO_AVX512 = ZEN5.replace(" avx512f", "")
HASWELL = "vendor_id	: GenuineIntel\ncpu family	: 6\nflags		: sse2 avx avx2 fma\n"


def test_cpuinfo_is_read_from_the_first_processor():
    cpu = blas.read_cpu_features(ZEN5)
    assert cpu.vendor == "AuthenticAMD" and cpu.family == 26 and cpu.model_name.startswith("AMD EPYC 9555")
    assert {"avx512f", "avx512vl", "fma"} <= cpu.flags
    assert blas.read_cpu_features("").family is None


@pytest.mark.parametrize("cpuinfo, recommended, best", [
    (ZEN5, "SkylakeX", "SkylakeX"),         # missing from OpenBLAS's table before 2026-09: forced
    (ZEN4, None, "SkylakeX"),               # recognised by OpenBLAS: its own choice stands
    (XEON, None, "SkylakeX"),
    (ZEN5_NO_AVX512, None, "Haswell"),      # no AVX-512 (a VM hiding it): nothing faster to force
    (HASWELL, None, "Haswell"),
    ("", None, None),
])
def test_the_core_type_is_forced_only_where_openblas_misdetects(cpuinfo, recommended, best):
    cpu = blas.read_cpu_features(cpuinfo)
    assert blas.recommended_coretype(cpu) == recommended and blas.best_coretype(cpu) == best


def test_choose_sets_the_variable_only_when_every_condition_holds(monkeypatch):
    loaded = dict(sys.modules)
    monkeypatch.setattr(blas.sys, "modules", {k: v for k, v in loaded.items() if k != "numpy"})
    monkeypatch.setattr(blas.sys, "platform", "linux")
    env: dict[str, str] = {}
    assert blas.choose_openblas_coretype(env, ZEN5) == "SkylakeX" and env == {"OPENBLAS_CORETYPE": "SkylakeX"}
    for cpuinfo, environ in [(XEON, {}),                                     # OpenBLAS knows the CPU
                             (ZEN5, {"OPENBLAS_CORETYPE": "Haswell"}),       # the user's setting wins
                             (ZEN5, {"MINITENSOR_BLAS_TUNING": "0"})]:       # the opt-out
        before = dict(environ)
        assert blas.choose_openblas_coretype(environ, cpuinfo) is None and environ == before
    monkeypatch.setattr(blas.sys, "modules", loaded)
    assert blas.choose_openblas_coretype({}, ZEN5) is None  # NumPy loaded already: too late to choose


def test_the_thread_timeout_is_set_unless_the_user_or_numpy_came_first(monkeypatch):
    loaded = dict(sys.modules)
    monkeypatch.setattr(blas.sys, "modules", {k: v for k, v in loaded.items() if k != "numpy"})
    env: dict[str, str] = {}
    assert blas.choose_openblas_thread_timeout(env) == "20" and env == {"OPENBLAS_THREAD_TIMEOUT": "20"}
    for environ in [{"OPENBLAS_THREAD_TIMEOUT": "28"}, {"MINITENSOR_BLAS_TUNING": "0"}]:
        before = dict(environ)
        assert blas.choose_openblas_thread_timeout(environ) is None and environ == before
    monkeypatch.setattr(blas.sys, "modules", loaded)
    assert blas.choose_openblas_thread_timeout({}) is None


def test_a_fresh_process_gets_the_thread_timeout():
    code = "import json, os, minitensor\nprint(json.dumps(os.environ.get('OPENBLAS_THREAD_TIMEOUT')))"
    assert run_python(code, OPENBLAS_THREAD_TIMEOUT=None) == "20"
    assert run_python(code, OPENBLAS_THREAD_TIMEOUT="25") == "25"


def run_python(code: str, **env: str | None) -> dict:
    environ = {k: v for k, v in os.environ.items()
               if k not in ("OPENBLAS_CORETYPE", "MINITENSOR_BLAS_TUNING", "OPENBLAS_THREAD_TIMEOUT")}
    environ.update({k: v for k, v in env.items() if v is not None})
    out = subprocess.run([sys.executable, "-c", code], env=environ, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


REPORT = ("import json, os, minitensor as mt\n"
          "info = mt.backends.cpu_info()\n"
          "print(json.dumps({'env': os.environ.get('OPENBLAS_CORETYPE'), **info.as_dict()}))")
HERE = blas.read_cpu_features()


def test_import_before_numpy_applies_the_choice_and_reports_it():
    got = run_python(REPORT)
    expected = blas.recommended_coretype(HERE)
    assert got["env"] == expected
    assert got["chosen_by"] == ("minitensor" if expected else "openblas")
    if expected:
        assert got["coretype"].lower() == expected.lower()
    assert got["missed"] is None or "OpenBLAS did not recognise this CPU" in got["missed"]
    assert got["numba"] and got["threads"] >= 1 and got["blas"].startswith("openblas")


def test_a_users_setting_wins_and_the_missed_speed_is_reported():
    got = run_python(REPORT, OPENBLAS_CORETYPE="Haswell")
    assert got["env"] == "Haswell" and got["coretype"] == "Haswell" and got["chosen_by"] == "user"
    if HERE.flags >= {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}:
        assert "OPENBLAS_CORETYPE=Haswell is set in the environment" in got["missed"]
        assert got["best_coretype"] == "SkylakeX"
    else:
        assert got["missed"] is None


def test_numpy_first_or_the_opt_out_changes_nothing():
    assert run_python("import numpy\n" + REPORT)["env"] is None
    got = run_python(REPORT, MINITENSOR_BLAS_TUNING="0")
    assert got["env"] is None and got["chosen_by"] == "openblas"


def test_set_num_threads_sizes_the_blas_pool():
    got = run_python("import json, minitensor as mt\nmt.set_num_threads(1)\na = mt.get_num_threads()\n"
                     "print(json.dumps({'after': a, 'info': mt.backends.cpu_info().threads}))")
    assert got == {"after": 1, "info": 1}
    for bad in (0, -1, 1.5, True):
        with pytest.raises(RuntimeError, match="positive integer"):
            mt.set_num_threads(bad)


def test_the_report_reads_as_one_line():
    text = str(mt.backends.cpu_info())
    assert "kernels (chosen by" in text and "threads" in text and "\n" not in text
