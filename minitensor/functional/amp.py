"""Mixed precision's gradient pass as PyTorch spells it: ``_amp_foreach_non_finite_check_and_unscale_``
(what ``GradScaler.unscale_`` runs), over the backend's ``amp_unscale_and_check_inf``."""
from __future__ import annotations

from typing import Sequence

from ..tensor import Tensor, _bump_version

__all__ = ["_amp_foreach_non_finite_check_and_unscale_"]


def _amp_foreach_non_finite_check_and_unscale_(scaled_grads: Sequence[Tensor], found_inf: Tensor,
                                                inv_scale: Tensor | float) -> None:
    """Multiply every tensor of ``scaled_grads`` in place by ``inv_scale``, and set ``found_inf`` (a
    one-element float32 tensor on their device) to 1 when any of them held an inf or NaN; it keeps its
    value otherwise. A tensor ``inv_scale`` is read once on the host."""
    if not scaled_grads:
        return
    device = scaled_grads[0].device
    if any(g.device != device for g in scaled_grads) or found_inf.device != device:
        raise RuntimeError("_amp_foreach_non_finite_check_and_unscale_: scaled_grads and found_inf must be "
                           f"on one device, got {sorted({str(g.device) for g in scaled_grads})} and "
                           f"{found_inf.device}")
    if found_inf.numel() != 1:
        raise RuntimeError(f"found_inf must be a 1-element tensor, got {found_inf.numel()} elements")
    scale = inv_scale.item() if isinstance(inv_scale, Tensor) else inv_scale
    B = device.backend
    found = B.amp_unscale_and_check_inf([g.array for g in scaled_grads], float(scale))
    B.copy_into(found_inf.array, (found_inf.array + found.reshape(found_inf.shape)) > 0)  # on the device
    for t in (*scaled_grads, found_inf):
        _bump_version(t)
