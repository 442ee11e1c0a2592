"""The package layout (docs/architecture.md): an op family F lives in ``functional/F.py`` ->
``backends/generic/F.py`` -> ``backends/cpu/F.py`` -> ``backends/cuda/F.py`` -> ``backends/cuda/kernels/F.cu`` or
``backends/cuda/numba_kernels/F.py`` (the CPU's Numba loops: ``backends/cpu/numba_kernels/F.py``); a missing
file means the generic body serves that device. CuPy and Numba are imported only under ``backends/cuda/`` and
``backends/cpu/numba_kernels/``.

Everything is read from the source files (``ast``), so the checks need neither CuPy nor Numba, and each
check is also run on a tree made to break it.
"""
from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "minitensor"

# Files of a device folder that are not an op family: the backend class, the runtime and launch machinery.
INFRASTRUCTURE = {
    "backends/cpu": {"__init__", "backend",
                     "parallel"},  # how the CPU's convolutions cut a batch into chunks and per-thread parts
    "backends/cuda": {"__init__", "backend", "rawmodule", "runtime", "streams", "prefetch",
                      "nccl",  # the NCCL communicator of minitensor.distributed (CuPy lives here)
                      "flags"},  # torch.backends' TF32 switches applied to CuPy's cuBLAS compute type
    "backends/cuda/kernels": {"common"},
    "backends/cuda/numba_kernels": {"__init__", "launch"},
    "backends/cpu/numba_kernels": {"__init__",
                                   "elementary"},  # the vectorisable exp and tanh the kernels share
}
# Generic families whose front end is not a functional/ module.
FRONT_ENDS = {"array": "creation.py", "random": "creation.py", "optim": "optim/__init__.py"}
# (folder of kernels, the folder of the family modules that launch them)
KERNEL_FOLDERS = {"backends/cuda/kernels": "backends/cuda", "backends/cuda/numba_kernels": "backends/cuda",
                  "backends/cpu/numba_kernels": "backends/cpu"}
HEAVY = ("cupy", "cupyx", "cupy_backends", "numba")
HEAVY_ALLOWED = ("backends/cuda/", "backends/cpu/numba_kernels/")


def families(root: Path, folder: str, suffix: str = ".py") -> set[str]:
    skip = INFRASTRUCTURE.get(folder, {"__init__"})
    return {p.stem for p in (root / folder).glob(f"*{suffix}")} - skip


def class_methods(path: Path, ops_only: bool = False) -> dict[str, set[str]]:
    """{class name: names of the functions its body defines} for the classes of one module; ``ops_only``:
    only the backend mixins, the classes with an ``...Ops`` base (not helpers such as the CPU's Im2col)."""
    tree = ast.parse(path.read_text())
    return {node.name: {f.name for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
            for node in tree.body if isinstance(node, ast.ClassDef)
            and (not ops_only or any(ast.unparse(b).endswith("Ops") for b in node.bases))}


def heavy_imports(path: Path) -> list[str]:
    """The CuPy / Numba modules a file imports, at any depth (imports inside functions count too)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
        found += [n for n in names if n.partition(".")[0] in HEAVY]
    return found


def layout_violations(root: Path) -> list[str]:
    """Every way the tree under ``root`` (a copy of the package) breaks the layout rule."""
    problems = []
    generic = families(root, "backends/generic")
    for family in sorted(generic):
        front = FRONT_ENDS.get(family, f"functional/{family}.py")
        if not (root / front).exists():
            problems.append(f"backends/generic/{family}.py has no front end {front}")
    for device in ("backends/cpu", "backends/cuda"):
        for family in sorted(families(root, device)):
            if family not in generic:
                problems.append(f"{device}/{family}.py: no backends/generic/{family}.py for this family")
                continue
            allowed = set().union(*class_methods(root / "backends/generic" / f"{family}.py").values())
            for cls, methods in class_methods(root / device / f"{family}.py", ops_only=True).items():
                foreign = {m for m in methods if not m.startswith("_")} - allowed
                if foreign:
                    problems.append(f"{device}/{family}.py: {cls} overrides {sorted(foreign)}, which are not "
                                    f"methods of the {family} family (backends/generic/{family}.py)")
    for kernels, owners in KERNEL_FOLDERS.items():
        suffix = ".cu" if kernels.endswith("/kernels") else ".py"
        for family in sorted(families(root, kernels, suffix)):
            if not (root / owners / f"{family}.py").exists():
                problems.append(f"{kernels}/{family}{suffix}: no {owners}/{family}.py launches it")
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if not rel.startswith(HEAVY_ALLOWED) and heavy_imports(path):
            problems.append(f"{rel} imports {heavy_imports(path)}: CuPy and Numba belong under "
                            f"{' or '.join(HEAVY_ALLOWED)}")
    return problems


def test_the_package_follows_the_layout():
    assert layout_violations(PACKAGE) == []


@pytest.fixture
def tree(tmp_path) -> Path:
    """A copy of the package's sources to break."""
    copy = tmp_path / "minitensor"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


@pytest.mark.parametrize("path, text, expected", [
    ("backends/cuda/telepathy.py", "class CudaTelepathyOps:\n    pass\n", "no backends/generic/telepathy.py"),
    ("backends/cpu/loss.py", "class CpuLossOps(LossOps):\n    def max_pool2d(self, x):\n        return x\n",
     "overrides ['max_pool2d']"),
    ("backends/cuda/kernels/telepathy.cu", "// nothing\n", "no backends/cuda/telepathy.py launches it"),
    ("backends/cpu/numba_kernels/telepathy.py", "", "no backends/cpu/telepathy.py launches it"),
    ("backends/generic/telepathy.py", "class TelepathyOps:\n    pass\n", "no front end functional/telepathy.py"),
    ("nn/modules/fast.py", "def f():\n    import cupy\n    return cupy\n", "nn/modules/fast.py imports ['cupy']"),
    ("utils/jit.py", "from numba import njit\n", "utils/jit.py imports ['numba']"),
])
def test_a_file_that_breaks_the_rule_is_named(tree, path, text, expected):
    (tree / path).write_text(text)
    problems = layout_violations(tree)
    assert any(expected in p for p in problems), problems
