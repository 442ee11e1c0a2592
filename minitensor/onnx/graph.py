"""The ONNX graph under construction: nodes, initializers and fresh names, as plain Python until
``to_model`` (the only place that needs the ``onnx`` package) writes the ``ModelProto``."""
from __future__ import annotations

import itertools
from typing import Any, Sequence

import numpy as np

# A graph input or output: (name, NumPy dtype, dims), a dim being an int, a symbolic name or None (unknown).
ValueInfo = tuple[str, np.dtype, Sequence["int | str | None"]]


class Graph:
    """Nodes in execution order; each value has one producer (a node, an initializer or a graph input)."""

    def __init__(self, opset: int) -> None:
        self.opset = opset
        self.nodes: list[tuple[str, list[str], list[str], dict[str, Any]]] = []
        self.initializers: dict[str, np.ndarray] = {}
        self.params: dict[str, np.ndarray] = {}  # the model's parameters and buffers that the graph reads
        self._count = itertools.count()

    def fresh(self, hint: str) -> str:
        return f"{hint}_{next(self._count)}"

    def add(self, op: str, inputs: Sequence[str], n_out: int = 1, **attrs: Any) -> Any:
        """Append the node ``op(*inputs)`` ("" for an absent optional input); returns its output's name, or
        the list of names when ``n_out > 1``."""
        outs = [self.fresh(op) for _ in range(n_out)]
        self.nodes.append((op, list(inputs), outs, attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, value: Any, dtype: Any = None, hint: str = "const") -> str:
        """A new initializer holding ``value`` (an array or a number, cast to ``dtype`` when given)."""
        name = self.fresh(hint)
        self.initializers[name] = np.asarray(value, dtype=dtype)
        return name

    def ints(self, values: Sequence[int]) -> str:
        """A 1-D int64 initializer: the shape, axes, pads... inputs of Reshape, Slice, ReduceSum, Pad."""
        return self.const(np.asarray(values, dtype=np.int64).reshape(-1), hint="ints")

    def to_model(self, inputs: list[ValueInfo], outputs: list[ValueInfo], export_params: bool,
                 keep_initializers_as_inputs: bool, producer: str) -> Any:
        """The ``onnx.ModelProto``; parameters are initializers (``export_params``) or else graph inputs."""
        import onnx
        from onnx import helper, numpy_helper

        def info(name: str, dtype: np.dtype, dims: Sequence[int | str | None]) -> Any:
            return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), list(dims))

        stored = {**self.params, **self.initializers} if export_params else dict(self.initializers)
        graph_inputs = [info(*i) for i in inputs]
        fed = self.params if not export_params else stored if keep_initializers_as_inputs else {}
        graph_inputs += [info(name, a.dtype, a.shape) for name, a in fed.items()]
        nodes = [helper.make_node(op, ins, outs, name=outs[0].rpartition("_")[0] + f"_node_{k}", **attrs)
                 for k, (op, ins, outs, attrs) in enumerate(self.nodes)]
        tensors = [numpy_helper.from_array(np.ascontiguousarray(a), name) for name, a in stored.items()]
        graph = helper.make_graph(nodes, "main_graph", graph_inputs, [info(*o) for o in outputs], tensors)
        opsets = [helper.make_opsetid("", self.opset)]
        model = helper.make_model(graph, opset_imports=opsets, producer_name=producer)
        # the oldest IR version that has this opset, so that older runtimes load the file
        model.ir_version = min(onnx.IR_VERSION, helper.find_min_ir_version_for(opsets, ignore_unknown=True))
        return model
