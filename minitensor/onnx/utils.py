"""``export``: PyTorch's ``torch.onnx.export`` for minitensor models.

The model runs once on the example ``args`` under ``no_grad`` while ``minitensor.onnx.trace.Tracer``
writes each applied Function as ONNX nodes (``ops.TABLE``); parameters and buffers become initializers
named as in ``state_dict``. Like PyTorch's tracing exporter, Python control flow and Python numbers read off
shapes are frozen at their traced values; ``dynamic_axes`` names the dims that stay free.
"""
from __future__ import annotations

import enum
import inspect
import os
import warnings
from typing import Any, Mapping, Sequence

from ..autograd import function as _function
from ..autograd.grad_mode import no_grad
from ..tensor import Tensor
from .errors import OnnxExporterError
from .graph import Graph, ValueInfo

__all__ = ["TrainingMode", "export", "is_in_onnx_export"]

DEFAULT_OPSET = 20  # PyTorch's default (torch.onnx._constants.ONNX_DEFAULT_OPSET)
MIN_OPSET = 18  # Reduce* with axes as an input; LayerNormalization


class TrainingMode(enum.IntEnum):
    """The mode the model is traced in: EVAL (the default: dropout off, batch norm on running
    statistics), PRESERVE (as it is) or TRAINING."""
    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


def is_in_onnx_export() -> bool:
    """True while ``export`` traces a model (a model may check it to take an export-friendly path)."""
    return _function.tracer is not None


def _require_onnx() -> Any:
    try:
        import onnx
    except ImportError as e:
        raise ImportError("minitensor.onnx.export needs the onnx package; install it with "
                          "pip install 'minitensor[onnx]'") from e
    return onnx


def export(model: Any, args: Any = (), f: Any = None, *, kwargs: dict[str, Any] | None = None,
           verbose: bool | None = None, input_names: Sequence[str] | None = None,
           output_names: Sequence[str] | None = None, opset_version: int | None = None, dynamo: bool = False,
           external_data: bool = True, dynamic_shapes: Any = None, export_params: bool = True,
           keep_initializers_as_inputs: bool = False,
           dynamic_axes: Mapping[str, Mapping[int, str]] | Mapping[str, Sequence[int]] | None = None,
           training: TrainingMode = TrainingMode.EVAL, do_constant_folding: bool = True) -> Any:
    """Trace ``model(*args, **kwargs)`` and write it as ONNX to ``f`` (a path or a binary file object; None:
    write nothing); returns the ``onnx.ModelProto``.

    ``args``: a tuple of the model's example inputs (or one tensor); tensors become the graph's inputs (in
    order, named ``input_names`` or after ``forward``'s parameters), other values are frozen into the graph.
    ``output_names`` names the outputs (default ``output`` or ``output_<i>``). ``dynamic_axes`` maps an
    input or output name to its free dims: ``{"x": {0: "batch"}}`` or ``{"x": [0]}``. ``opset_version``:
    18 or newer (default 20). ``export_params=False`` makes the parameters graph inputs;
    ``keep_initializers_as_inputs`` lists them as inputs too. ``do_constant_folding`` folds the ops that
    read only parameters and constants. ``dynamo`` and ``external_data`` are accepted for PyTorch's
    signature and ignored (there is one tracer; models over 2 GB are not supported); ``dynamic_shapes`` is
    not supported (use ``dynamic_axes``). An op without an ONNX conversion raises
    ``minitensor.onnx.errors.UnsupportedOperatorError`` naming it."""
    onnx = _require_onnx()
    if dynamic_shapes is not None:
        raise NotImplementedError("export: dynamic_shapes (torch.export's) is not supported; name the free "
                                  "dims with dynamic_axes={'input_name': {0: 'batch'}}")
    opset = DEFAULT_OPSET if opset_version is None else int(opset_version)
    if not MIN_OPSET <= opset <= onnx.defs.onnx_opset_version():
        raise ValueError(f"export: opset_version {opset} is not supported: choose {MIN_OPSET} to "
                         f"{onnx.defs.onnx_opset_version()} (the installed onnx package's newest)")
    if _function.tracer is not None:
        raise OnnxExporterError("export: another export is tracing (exports run one at a time)")
    args, kwargs = _split_args(args, kwargs)
    from .ops import TABLE
    from .trace import Param, Tracer, host
    graph = Graph(opset)
    tracer = Tracer(graph, TABLE, fold=do_constant_folding and export_params)
    named = [(k, a) for k, a in _input_slots(model, args, kwargs) if isinstance(a, Tensor)]
    names = _names(input_names, [k for k, _ in named], "input_names")
    for name, (_, t) in zip(names, named):
        tracer.bind(t, name)
    if hasattr(model, "named_parameters"):
        for qualname, p in [*model.named_parameters(), *model.named_buffers()]:
            if p is not None and id(p) not in {id(t) for _, t in named}:
                tracer.bind(p, Param(host(p), qualname))
    out = _traced_run(model, args, kwargs, tracer, training)
    outs = _flatten(out)
    out_names = _names(output_names, ["output"] if len(outs) == 1 else [f"output_{i}" for i in range(len(outs))],
                       "output_names")
    _name_outputs(graph, tracer, outs, out_names, set(names))
    axes = _dynamic_axes(dynamic_axes, names + out_names)
    inputs: list[ValueInfo] = [(n, t.array.dtype, _dims(n, t, axes, True)) for n, (_, t) in zip(names, named)]
    outputs: list[ValueInfo] = [(n, t.array.dtype, _dims(n, t, axes, not axes)) for n, t in zip(out_names, outs)]
    proto = graph.to_model(inputs, outputs, export_params, keep_initializers_as_inputs, "minitensor")
    if verbose:
        print(onnx.helper.printable_graph(proto.graph))
    if isinstance(f, (str, os.PathLike)):
        onnx.save_model(proto, os.fspath(f))
    elif f is not None:
        if not hasattr(f, "write"):
            raise TypeError(f"export: f must be a path, a binary file object or None, got {type(f).__name__}")
        f.write(proto.SerializeToString())
    return proto


def _split_args(args: Any, kwargs: dict[str, Any] | None) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """PyTorch's forms: one tensor, a tuple, or a tuple whose last item is a dict of keyword arguments."""
    args = (args,) if isinstance(args, Tensor) else tuple(args)
    kwargs = dict(kwargs or {})
    if args and isinstance(args[-1], dict):
        kwargs = {**args[-1], **kwargs}
        args = args[:-1]
    return args, kwargs


def _input_slots(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[tuple[str, Any]]:
    """(default name, value) for each argument: ``forward``'s parameter names where it has them."""
    try:
        params = [p.name for p in inspect.signature(getattr(model, "forward", model)).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [(params[i] if i < len(params) else f"input_{i}", a) for i, a in enumerate(args)] + list(kwargs.items())


def _names(given: Sequence[str] | None, defaults: list[str], what: str) -> list[str]:
    given = list(given or [])
    if len(given) > len(defaults):
        raise ValueError(f"export: {len(given)} {what} for {len(defaults)} tensors: {given}")
    return given + defaults[len(given):]


def _traced_run(model: Any, args: tuple[Any, ...], kwargs: dict[str, Any], tracer: Any,
                training: TrainingMode) -> Any:
    """model(*args, **kwargs) with ``tracer`` on and the modules in ``training``'s mode (restored after)."""
    modules = list(model.modules()) if hasattr(model, "modules") else []
    modes = [m.training for m in modules]
    if training != TrainingMode.PRESERVE:
        for m in modules:
            m.training = training == TrainingMode.TRAINING
    _function.tracer = tracer
    try:
        with no_grad():
            return model(*args, **kwargs)
    finally:
        _function.tracer = None
        for m, mode in zip(modules, modes):
            m.training = mode


def _flatten(out: Any) -> list[Tensor]:
    """The output tensors in order; None entries (MultiheadAttention's weights when not asked for) drop."""
    if isinstance(out, Tensor):
        return [out]
    if out is None:
        return []
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flatten(o)]
    raise OnnxExporterError(f"export: the model must return tensors (or tuples and lists of them), got "
                            f"{type(out).__name__}")


def _name_outputs(graph: Graph, tracer: Any, outs: list[Tensor], names: list[str], inputs: set[str]) -> None:
    """Give each output value its name: rename the node that makes it, or add an Identity node where the
    value is not a node's own (an input, an initializer, or an earlier output)."""
    made = {o for _, _, node_outs, _ in graph.nodes for o in node_outs}
    rename: dict[str, str] = {}
    for t, name in zip(outs, names):
        value = tracer.name_of(tracer.value(t))
        if value in made and value not in rename:
            rename[value] = name
        else:
            graph.add("Identity", [rename.get(value, value)])
            graph.nodes[-1][2][0] = name
    for _, ins, node_outs, _ in graph.nodes:
        ins[:] = [rename.get(n, n) for n in ins]
        node_outs[:] = [rename.get(n, n) for n in node_outs]
    clash = inputs & set(names)
    if clash:
        raise ValueError(f"export: {sorted(clash)} named both an input and an output")


def _dynamic_axes(spec: Any, names: list[str]) -> dict[str, dict[int, str]]:
    """PyTorch's dynamic_axes: {name: {axis: dim name}} or {name: [axes]} (named <name>_dynamic_axes_<k>)."""
    axes: dict[str, dict[int, str]] = {}
    for key, value in (spec or {}).items():
        if key not in names:
            warnings.warn(f"export: dynamic_axes names {key!r}, which is not an input or output name "
                          f"({names})", UserWarning, stacklevel=3)
            continue
        axes[key] = ({int(a): str(d) for a, d in value.items()} if isinstance(value, Mapping) else
                     {int(a): f"{key}_dynamic_axes_{k + 1}" for k, a in enumerate(value)})
    return axes


def _dims(name: str, t: Tensor, axes: dict[str, dict[int, str]], known: bool) -> list[int | str | None]:
    """A value's dims: the symbolic names ``axes`` gives it, else the traced sizes when ``known`` (an output
    not in dynamic_axes of a graph with free dims is left unknown: it may follow them)."""
    free = axes.get(name, {})
    for a in free:
        if not -t.ndim <= a < t.ndim:
            raise ValueError(f"export: dynamic_axes gives {name!r} axis {a}, but it has {t.ndim} dims")
    free = {a % t.ndim: d for a, d in free.items()}
    return [free[i] if i in free else s if known else None for i, s in enumerate(t.shape)]
