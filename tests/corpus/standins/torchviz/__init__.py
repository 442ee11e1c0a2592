"""torchviz stand-in (graphviz is not installed): ``make_dot`` walks the autograd graph as torchviz 0.0.2's does
(each output's ``grad_fn``, ``next_functions``, an AccumulateGrad's ``variable``, a custom Function's
``saved_tensors``, a view's ``_base``; ``_saved_*`` attributes with ``show_saved``) and returns a ``Digraph``
that keeps its node and edge lines in ``body`` instead of drawing them."""
import torch

SAVED_PREFIX = "_saved_"


class Digraph:
    """graphviz.Digraph's recording part: ``node``, ``edge`` and ``attr`` append lines to ``body``."""

    def __init__(self, **attrs):
        self.attrs, self.body = attrs, []

    def node(self, name, label=None, **attrs):
        self.body.append(f"\t{name} [label={label!r} {attrs}]")

    def edge(self, tail, head, **attrs):
        self.body.append(f"\t{tail} -> {head} {attrs}")

    def attr(self, **attrs):
        self.attrs.update(attrs)


def _size(size):
    return "(" + ", ".join(str(v) for v in size) + ")"


def make_dot(var, params=None, show_attrs=False, show_saved=False, max_attr_chars=50):
    if params is not None:
        assert all(isinstance(p, torch.Tensor) for p in params.values())
        param_map = {id(v): k for k, v in params.items()}
    else:
        param_map = {}
    dot = Digraph(node_attr=dict(style="filled", shape="box", align="left"), graph_attr=dict(size="12,12"))
    seen = set()

    def var_name(v, name=None):
        return "%s\n %s" % (name or param_map.get(id(v), ""), _size(v.size()))

    def add_nodes(fn):
        assert not torch.is_tensor(fn)
        if fn in seen:
            return
        seen.add(fn)
        if show_saved:
            for attr in dir(fn):
                if attr.startswith(SAVED_PREFIX):
                    val = getattr(fn, attr)
                    if torch.is_tensor(val):
                        seen.add(val)
                        dot.edge(str(id(fn)), str(id(val)), dir="none")
                        dot.node(str(id(val)), var_name(val, attr[len(SAVED_PREFIX):]), fillcolor="orange")
        dot.node(str(id(fn)), type(fn).__name__)
        if hasattr(fn, "variable"):  # an AccumulateGrad: the leaf it accumulates into
            v = fn.variable
            seen.add(v)
            dot.node(str(id(v)), var_name(v), fillcolor="lightblue")
            dot.edge(str(id(v)), str(id(fn)))
        if hasattr(fn, "next_functions"):
            for u in fn.next_functions:
                if u[0] is not None:
                    dot.edge(str(id(u[0])), str(id(fn)))
                    add_nodes(u[0])
        if hasattr(fn, "saved_tensors"):  # a custom Function's node
            for t in fn.saved_tensors:
                seen.add(t)
                dot.edge(str(id(t)), str(id(fn)), dir="none")
                dot.node(str(id(t)), var_name(t), fillcolor="orange")

    def add_base_tensor(v, color="darkolivegreen1"):
        if v in seen:
            return
        seen.add(v)
        dot.node(str(id(v)), var_name(v), fillcolor=color)
        if v.grad_fn:
            add_nodes(v.grad_fn)
            dot.edge(str(id(v.grad_fn)), str(id(v)))
        if v._is_view():
            add_base_tensor(v._base, color="darkolivegreen3")
            dot.edge(str(id(v._base)), str(id(v)), style="dotted")

    if isinstance(var, tuple):
        for v in var:
            add_base_tensor(v)
    else:
        add_base_tensor(var)
    return dot
