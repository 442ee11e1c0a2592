"""PyTorch's default DDP communication hooks: ``allreduce_hook`` (what DDP does without a hook) and
``fp16_compress_hook`` / ``bf16_compress_hook`` (the bucket travels in 16 bits: half the bytes, a rounding
per element). ``process_group`` is the hook's state (None: the default group)."""
from __future__ import annotations

from typing import Any

from .... import dtypes as _dt
from ... import all_reduce, get_world_size
from ...grad_bucket import GradBucket
from ...work import Future


def _summed(tensor: Any, process_group: Any) -> Future:
    """The future of ``tensor`` summed over the group, in place."""
    work = all_reduce(tensor, group=process_group, async_op=True)
    if work is None:
        raise RuntimeError("the communication hook's process group does not contain this rank")
    return work.get_future()


def allreduce_hook(process_group: Any, bucket: GradBucket) -> Future:
    """The bucket divided by the world size, then summed over the ranks: their average."""
    buffer = bucket.buffer().div_(get_world_size(process_group))
    return _summed(buffer, process_group).then(lambda fut: fut.value()[0])


def _compress_hook(dtype: _dt.dtype, process_group: Any, bucket: GradBucket) -> Future:
    buffer = bucket.buffer()
    compressed = (buffer / get_world_size(process_group)).to(dtype)

    def decompress(fut: Future) -> Any:
        buffer.copy_(fut.value()[0])  # back into the bucket's own dtype
        return buffer
    return _summed(compressed, process_group).then(decompress)


def fp16_compress_hook(process_group: Any, bucket: GradBucket) -> Future:
    return _compress_hook(_dt.float16, process_group, bucket)


def bf16_compress_hook(process_group: Any, bucket: GradBucket) -> Future:
    return _compress_hook(_dt.bfloat16, process_group, bucket)
