"""``torch._inductor.config``: the Inductor settings scripts commonly set, with PyTorch's defaults. They are kept
and read back (``torch.compile`` returns the model itself here, so none changes a result); a name PyTorch's
config lacks raises its AttributeError, on reading and on setting, as a misspelt knob does there."""
from __future__ import annotations

import sys
import types
from typing import Any

_TOP: dict[str, Any] = {
    "coordinate_descent_tuning": False, "coordinate_descent_check_all_directions": False, "max_autotune": False,
    "max_autotune_gemm": False, "max_autotune_pointwise": False, "epilogue_fusion": True, "freezing": False,
    "shape_padding": True, "aggressive_fusion": False, "benchmark_kernel": False, "debug": False,
    "force_disable_caches": False, "fx_graph_cache": True, "cpp_wrapper": False, "split_reductions": True,
    "conv_1x1_as_mm": False, "fallback_random": False, "worker_start_method": "subprocess",
    "permute_fusion": False, "layout_optimization": True, "force_fuse_int_mm_with_mul": False,
    "use_mixed_mm": True, "search_autotune_cache": False, "autotune_local_cache": True, "group_fusion": False,
    "pattern_matcher": True, "reorder_for_compute_comm_overlap": False, "unroll_reductions_threshold": 8,
    "realize_opcount_threshold": None, "size_asserts": True, "nan_asserts": False, "developer_warnings": False,
}
_SUB: dict[str, dict[str, Any]] = {
    "triton": {"cudagraphs": False, "cudagraph_trees": True, "unique_kernel_names": True,
               "autotune_pointwise": True, "descriptive_names": "original_aten", "store_cubin": False,
               "cudagraph_skip_dynamic_graphs": False},
    "cpp": {"threads": -1, "simdlen": None, "enable_kernel_profile": False, "weight_prepack": True},
}


class _Settings:
    """A group of settings (the module itself, or one of ``triton`` / ``cpp``): unknown names raise."""

    def __init__(self, prefix: str, defaults: dict[str, Any]) -> None:
        object.__setattr__(self, "_prefix", prefix)
        object.__setattr__(self, "_values", dict(defaults))

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"{object.__getattribute__(self, '_prefix')}.{name} does not exist")

    def __setattr__(self, name: str, value: Any) -> None:
        values = object.__getattribute__(self, "_values")
        if name not in values or isinstance(values[name], _Settings):  # PyTorch refuses both
            raise AttributeError(f"{self._prefix}.{name} does not exist")
        values[name] = value

    def __dir__(self) -> list[str]:
        return sorted(object.__getattribute__(self, "_values"))


_settings = _Settings(__name__, {**_TOP, **{k: _Settings(f"{__name__}.{k}", v) for k, v in _SUB.items()}})


class _ConfigModule(types.ModuleType):
    """This module, its attributes read and written through ``_settings``."""

    def __getattr__(self, name: str) -> Any:  # only for names the module itself does not define
        return getattr(_settings, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name.startswith("__") or name in self.__dict__:
            super().__setattr__(name, value)
        else:
            setattr(_settings, name, value)


def get_config_copy() -> dict[str, Any]:
    """The settings, as a dict (the groups' settings under dotted names)."""
    out: dict[str, Any] = {}
    for name in dir(_settings):
        value = getattr(_settings, name)
        if isinstance(value, _Settings):
            out.update({f"{name}.{k}": getattr(value, k) for k in dir(value)})
        else:
            out[name] = value
    return out


sys.modules[__name__].__class__ = _ConfigModule
