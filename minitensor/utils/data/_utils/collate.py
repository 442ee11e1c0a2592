"""``torch.utils.data._utils.collate``'s public names, for collate functions written against that path (the
collation itself is minitensor/utils/data/collate.py)."""
from __future__ import annotations

import re

from ..collate import default_collate, default_convert

np_str_obj_array_pattern = re.compile(r"[SaUO]")  # NumPy dtype kinds of strings and objects: not collated
default_collate_err_msg_format = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                                  "lists; found {}")

__all__ = ["default_collate", "default_convert", "default_collate_err_msg_format", "np_str_obj_array_pattern"]
