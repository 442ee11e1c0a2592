"""``minitensor.profiler``: PyTorch's ``torch.profiler`` for minitensor's ops (docs/profiling.md).

    with profiler.profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        with profiler.record_function("step"):
            loss = model(x).sum(); loss.backward()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")

Forward ops are named after their Function ("Conv2d", "Mul"), backward nodes by ``grad_fn.name()``
("ConvolutionBackward0", PyTorch's grad_fn names), kernels by their template or function name ("im2col", "max_pool2d").
"""
from .events import EventList, FunctionEvent, FunctionEventAvg
from .profile import (ProfilerAction, ProfilerActivity, profile, record_function, schedule, supported_activities,
                      tensorboard_trace_handler)

__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "ProfilerAction", "ProfilerActivity", "profile",
           "record_function", "schedule", "supported_activities", "tensorboard_trace_handler"]
