"""The three summaries of TensorBoard's hparams plugin (experiment, session start, session end), as PyTorch's
``add_hparams`` writes them."""
from __future__ import annotations

from typing import Any

from google.protobuf import struct_pb2
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboard.plugins.hparams import api_pb2, metadata, plugin_data_pb2

from .summary import make_np


def _summary(tag: str, **content: Any) -> Summary:
    data = plugin_data_pb2.HParamsPluginData(version=metadata.PLUGIN_DATA_VERSION, **content)
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name=metadata.PLUGIN_NAME,
                                                                 content=data.SerializeToString()))
    return Summary(value=[Summary.Value(tag=tag, metadata=smd)])


def _kind(value: Any) -> tuple[str, str]:
    """(struct_pb2.Value field, hparams DataType) of a value. Numbers first, so a bool is a number, as in
    PyTorch's ``hparams``."""
    from ...tensor import Tensor
    if isinstance(value, (int, float, Tensor)):
        return "number_value", "DATA_TYPE_FLOAT64"
    if isinstance(value, str):
        return "string_value", "DATA_TYPE_STRING"
    raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")


def hparams(hparam_dict: dict, metric_dict: dict,
            domain_discrete: dict | None = None) -> tuple[Summary, Summary, Summary]:
    """(experiment, session start, session end) summaries for these hyperparameters and metric names."""
    from ...tensor import Tensor
    domain_discrete = domain_discrete or {}
    if not isinstance(domain_discrete, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in domain_discrete.items():
        if k not in hparam_dict or not isinstance(v, list) or not all(isinstance(d, type(hparam_dict[k])) for d in v):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same type as "
                            f"hparam_dict[{k}].")
    infos, start = [], plugin_data_pb2.SessionStartInfo()
    for k, v in hparam_dict.items():
        if v is None:
            continue
        field, kind = _kind(v)
        value = float(make_np(v).reshape(-1)[0]) if isinstance(v, Tensor) else v
        setattr(start.hparams[k], field, value)
        domain = (struct_pb2.ListValue(values=[struct_pb2.Value(**{field: d}) for d in domain_discrete[k]])
                  if k in domain_discrete else None)
        infos.append(api_pb2.HParamInfo(name=k, type=api_pb2.DataType.Value(kind), domain_discrete=domain))
    metrics = [api_pb2.MetricInfo(name=api_pb2.MetricName(tag=k)) for k in metric_dict]
    experiment = api_pb2.Experiment(hparam_infos=infos, metric_infos=metrics)
    end = plugin_data_pb2.SessionEndInfo(status=api_pb2.Status.Value("STATUS_SUCCESS"))
    return (_summary(metadata.EXPERIMENT_TAG, experiment=experiment),
            _summary(metadata.SESSION_START_INFO_TAG, session_start_info=start),
            _summary(metadata.SESSION_END_INFO_TAG, session_end_info=end))
