"""A static check of minitensor's CuPy and numba.cuda calls against the installed packages, without a GPU.

Every attribute chain rooted at ``cupy``, ``cupyx``, ``cupy_backends`` or ``numba.cuda`` in a module (through
the names its imports bind, module-level or inside functions, and simple assignments ``cp = cupy_module()``,
``self._cupy = cupy``) is resolved against the real module: each attribute must exist, on the class where the
chain passes through a constructor call (``cupy.cuda.Device(i).synchronize``). Each call whose callee
resolves is bound to the callee's signature (``inspect.signature``, else the signature line of a Cython
docstring); CuPy ufuncs are checked against ``nin``/``nout`` and the keywords ``ufunc.__call__`` accepts.
In the backend's generic bodies and the CUDA backend, ``xp`` and ``self.xp`` are CuPy (what ``CupyBackend``
sets), so a NumPy-only name used there is found too.

A GPU would only be needed to run the calls; whether they exist and bind is decided here.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parents[2] / "minitensor"
ROOT_MODULES = ("cupy", "cupyx", "cupy_backends", "numba.cuda")
# Files whose ``xp`` / ``self.xp`` is CuPy on a GPU: CupyBackend's generic bodies and the CUDA mixins.
XP_DIRS = ("backends/generic", "backends/cuda")
# Functions (or methods, by name) that hand back a module on the CUDA path.
MODULE_FACTORIES = {"cupy_module": "cupy", "_nccl": "cupy.cuda.nccl", "_array_module": "cupy",
                    "_special_module": "cupyx.scipy.special", "_sparse_module": "cupyx.scipy.sparse"}
# ufunc.__call__'s keywords (cupy/_core/_kernel.pyx: any other raises "Wrong arguments").
UFUNC_KEYWORDS = {"out", "dtype", "casting"}
_DOC_SIGNATURE = re.compile(r"^\s*[\w.]*?(\w+)\((.*)\)\s*(->.*)?$")


@dataclass(frozen=True)
class Ref:
    """What an expression is known to be: ``obj`` itself, or (``instance``) an object of class ``obj``."""
    obj: Any
    instance: bool = False


@dataclass(frozen=True)
class Finding:
    """A missing attribute or an unbindable call, in function ``function`` (innermost, "" at module level)."""
    where: str  # file:line
    function: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass
class Report:
    """Per file: the attributes resolved, the calls bound, the calls whose callee has no readable
    signature, and the findings."""
    attributes: int = 0
    calls: int = 0
    unchecked: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def import_module(name: str) -> Any:
    return importlib.import_module(name)


def _returns(obj: Any) -> Ref | None:
    """What calling ``obj`` gives, where the scan needs to know (a generator whose methods are called)."""
    cupy = import_module("cupy")
    if obj is cupy.random.default_rng:
        return Ref(cupy.random.Generator, instance=True)
    return None


def _is_numba_stub(obj: Any) -> bool:
    """``cuda.grid`` and friends: typing stubs that only mean something inside a kernel."""
    stubs = import_module("numba.cuda.stubs")
    return inspect.isclass(obj) and issubclass(obj, stubs.Stub)


def _docstring_signature(obj: Any) -> inspect.Signature | None:
    """The ``name(params)`` first line of a Cython docstring, as a signature."""
    doc = (getattr(obj, "__doc__", None) or "").strip().splitlines()
    match = _DOC_SIGNATURE.match(doc[0]) if doc else None
    if match is None:
        return None
    namespace: dict[str, Any] = {}
    try:
        exec(f"def f({_python_parameters(match.group(2))}): pass", {}, namespace)  # noqa: S102 (a signature line, parsed)
    except SyntaxError:
        return None
    return inspect.signature(namespace["f"])


def _python_parameters(params: str) -> str:
    """Cython's typed parameter list (``int device_id=-1, *, str path=None``) as Python's, defaults None."""
    out = []
    for piece in params.split(","):
        declaration, has_default, _ = piece.partition("=")
        words = declaration.split()
        if words:
            out.append(words[-1] + ("=None" if has_default else ""))
    return ", ".join(out)


def signature(obj: Any) -> inspect.Signature | None:
    """The signature calls of ``obj`` are bound to (a class: its constructor), or None when unreadable."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        sig = None
    if sig is None or (inspect.isclass(obj) and _takes_anything(sig)):
        sig = _docstring_signature(obj) or (_docstring_signature(obj.__init__) if inspect.isclass(obj) else None)
        if sig is not None and inspect.isclass(obj):
            sig = _drop_self(sig)
    if sig is not None and getattr(obj, "__self__", None) is not None and not inspect.ismodule(obj.__self__):
        sig = _drop_self(sig)  # a bound builtin method: its docstring names self
    params = list(sig.parameters.values()) if sig is not None else []
    if params and params[0].name == "typingctx":  # a Numba intrinsic (cuda.grid): called without it
        sig = sig.replace(parameters=params[1:])  # type: ignore[union-attr]
    return sig


def _takes_anything(sig: inspect.Signature) -> bool:
    kinds = {p.kind for p in sig.parameters.values()}
    return kinds == {inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD}


def _drop_self(sig: inspect.Signature) -> inspect.Signature:
    params = list(sig.parameters.values())
    return sig.replace(parameters=params[1:]) if params and params[0].name == "self" else sig


class _Scanner(ast.NodeVisitor):
    """Walks one module with a stack of scopes (name -> Ref); checks every chain and call it meets."""

    def __init__(self, rel: str, report: Report, xp_is_cupy: bool) -> None:
        self.rel, self.report = rel, report
        self.scopes: list[dict[str, Ref]] = [{}]
        self.functions: list[str] = []
        self.self_attrs: dict[str, Ref] = {}
        self.checked: set[tuple[int, str]] = set()  # (id of the node, what was checked)
        if xp_is_cupy:
            cupy = import_module("cupy")
            generator = Ref(cupy.random.Generator, instance=True)
            self.scopes[0]["xp"] = Ref(cupy)
            self.self_attrs.update(xp=Ref(cupy), _rng=generator, _shared_rng=generator)

    # ---------------------------------------------------------------------------------- bindings
    def _bind(self, name: str, ref: Ref | None) -> None:
        if ref is not None:
            self.scopes[-1][name] = ref

    def _lookup(self, name: str) -> Ref | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not alias.name.startswith(ROOT_MODULES[:3]) and not alias.name.startswith("numba"):
                continue
            module = import_module(alias.name)
            if alias.asname:
                self._bind(alias.asname, Ref(module))
            else:
                self._bind(alias.name.partition(".")[0], Ref(import_module(alias.name.partition(".")[0])))

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not node.module or not node.module.startswith(("cupy", "cupyx", "numba")):
            return
        module = import_module(node.module)
        for alias in node.names:
            ref = self._attribute(Ref(module), alias.name, node, node.module)
            if f"{node.module}.{alias.name}".startswith(ROOT_MODULES):
                self._bind(alias.asname or alias.name, ref)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        self.scopes.append({})
        self.functions.append(getattr(node, "name", "<lambda>"))
        self.generic_visit(node)
        self.functions.pop()
        self.scopes.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Assign(self, node: ast.Assign) -> None:
        self.generic_visit(node)
        for target in node.targets:
            self._assign(target, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.generic_visit(node)
        if node.value is not None:
            self._assign(node.target, node.value)

    def _assign(self, target: ast.expr, value: ast.expr) -> None:
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            for t, v in zip(target.elts, value.elts):
                self._assign(t, v)
            return
        ref = self.resolve(value)
        if isinstance(target, ast.Name):
            self._bind(target.id, ref)
        elif (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
              and target.value.id == "self" and ref is not None):
            self.self_attrs[target.attr] = ref

    # ------------------------------------------------------------------------------- resolution
    def visit_Attribute(self, node: ast.Attribute) -> None:
        self.resolve(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.resolve(node)

    def resolve(self, node: ast.expr) -> Ref | None:
        """The Ref of ``node`` when it is rooted in a checked module, checking every step (once per node)."""
        if isinstance(node, ast.Name):
            return self._lookup(node.id)
        if isinstance(node, ast.BoolOp):  # ``rng or self._rng``
            refs = [self.resolve(v) for v in node.values]
            return next((r for r in reversed(refs) if r is not None), None)
        if isinstance(node, ast.Attribute):
            if isinstance(node.value, ast.Name) and node.value.id == "self":
                return self.self_attrs.get(node.attr)
            base = self.resolve(node.value)
            if base is None:
                return None
            where = ast.unparse(node.value)
            return self._attribute(base, node.attr, node, f"({where})" if isinstance(node.value, ast.BoolOp) else where)
        if isinstance(node, ast.Call):
            return self._call(node)
        self.generic_visit(node)
        return None

    def _attribute(self, base: Ref, name: str, node: ast.AST, where: str) -> Ref | None:
        key = (id(node), "attribute")
        first = key not in self.checked
        self.checked.add(key)
        if first:
            self.report.attributes += 1
        try:
            value = getattr(base.obj, name)
        except AttributeError:
            value = self._submodule(base.obj, name)
        if value is None:
            if first:
                owner = getattr(base.obj, "__qualname__", getattr(base.obj, "__name__", repr(base.obj)))
                self._find(node, f"{where}.{name}: {owner} has no attribute {name!r}")
            return None
        if base.instance and isinstance(inspect.getattr_static(base.obj, name, None), property):
            return None  # a property's value is not known
        if base.instance and (inspect.isfunction(value) or inspect.ismethoddescriptor(value)):
            return Ref(_BoundOnInstance(value))
        return Ref(value)

    @staticmethod
    def _submodule(module: Any, name: str) -> Any:
        if not inspect.ismodule(module):
            return None
        try:
            return import_module(f"{module.__name__}.{name}")
        except ImportError:
            return None

    def _call(self, node: ast.Call) -> Ref | None:
        for arg in [*node.args, *(k.value for k in node.keywords)]:
            self.resolve(arg)
        callee_name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if callee_name in MODULE_FACTORIES:
            if isinstance(node.func, ast.Attribute):
                self.resolve(node.func.value)
            return Ref(import_module(MODULE_FACTORIES[callee_name]))
        if callee_name == "xp_function" and node.args and isinstance(node.args[0], ast.Constant):
            xp = self._lookup("xp")
            if xp is not None:
                self._attribute(xp, node.args[0].value, node, "xp")
            return None
        func = self.resolve(node.func)
        if func is None:
            return None
        if (id(node), "call") in self.checked:
            return _returns(func.obj)
        self.checked.add((id(node), "call"))
        self._check_call(func, node)
        if inspect.isclass(func.obj) and not func.instance and not _is_numba_stub(func.obj):
            return Ref(func.obj, instance=True)
        return _returns(func.obj)

    def _check_call(self, func: Ref, node: ast.Call) -> None:
        text = ast.unparse(node.func)
        if func.instance or _is_numba_stub(func.obj):
            return  # calling an instance (a kernel launch) or a stub: nothing to bind
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            self.report.unchecked.append(f"{self.rel}:{node.lineno}: {text}(*args/**kwargs)")
            return
        positional, keywords = len(node.args), {k.arg for k in node.keywords}
        cupy = import_module("cupy")
        if isinstance(func.obj, cupy.ufunc):
            self.report.calls += 1
            ufunc = func.obj
            if not ufunc.nin <= positional <= ufunc.nin + ufunc.nout:
                self._find(node, f"{text}: ufunc takes {ufunc.nin} inputs (+{ufunc.nout} outputs), given "
                                 f"{positional} positional arguments")
            if keywords - UFUNC_KEYWORDS:
                self._find(node, f"{text}: ufunc does not take {sorted(keywords - UFUNC_KEYWORDS)}")
            return
        target = func.obj.function if isinstance(func.obj, _BoundOnInstance) else func.obj
        sig = signature(target)
        if sig is None:
            self.report.unchecked.append(f"{self.rel}:{node.lineno}: {text}")
            return
        self.report.calls += 1
        args = [object()] * (positional + isinstance(func.obj, _BoundOnInstance) * _takes_self(sig))
        try:
            sig.bind(*args, **{k: object() for k in keywords})
        except TypeError as error:
            self._find(node, f"{text}{sig}: {error}")

    def _find(self, node: ast.AST, message: str) -> None:
        function = next((f for f in reversed(self.functions) if f != "<lambda>"), "")
        self.report.findings.append(Finding(f"{self.rel}:{getattr(node, 'lineno', 0)}", function, message))


@dataclass(frozen=True)
class _BoundOnInstance:
    """A method looked up on the class of an instance: called, its ``self`` is supplied."""
    function: Any


def _takes_self(sig: inspect.Signature) -> bool:
    params = list(sig.parameters.values())
    return bool(params) and params[0].name == "self"


def scan_source(source: str, rel: str, xp_is_cupy: bool = False) -> Report:
    """The report of one module's source (``rel`` names it in the findings)."""
    report = Report()
    _Scanner(rel, report, xp_is_cupy).visit(ast.parse(source))
    return report


def package_modules() -> list[str]:
    """Every module of the package, relative to it (``backends/cuda/backend.py``)."""
    return sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py"))


def scan_module(rel: str) -> Report:
    return scan_source((PACKAGE / rel).read_text(), f"minitensor/{rel}", rel.startswith(XP_DIRS))
