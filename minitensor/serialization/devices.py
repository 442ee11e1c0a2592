"""``map_location``: where loaded tensors go, from the device they were saved on."""
from __future__ import annotations

from collections.abc import Callable

from ..device import as_device, device
from ..tensor import Tensor

class MapLocationError(TypeError):
    """``map_location`` returned something other than a tensor (passed through the unpickler's errors)."""


MapLocation = str | device | dict[str, str | device] | Callable[[Tensor, str], Tensor] | None


def place(t: Tensor, saved_location: str, map_location: MapLocation) -> Tensor:
    """``t`` (a CPU tensor as read) on the CPU when ``map_location`` is None (minitensor does not restore
    the saved device: see docs/differences.md); on a device (``"cuda:0"``, ``device("cpu")``); by a dict
    from saved locations to devices (others stay on the CPU); or as returned by a callable
    ``(tensor, saved_location) -> tensor``, PyTorch's ``(storage, location) -> storage``."""
    if callable(map_location) and not isinstance(map_location, (str, device)):
        moved = map_location(t, saved_location)
        if not isinstance(moved, Tensor):
            raise MapLocationError(f"map_location returned {type(moved).__name__} for a tensor saved on "
                            f"{saved_location!r}; it must return a Tensor")
        return moved
    target = map_location.get(saved_location) if isinstance(map_location, dict) else map_location
    if target is None:  # torch.load keeps the saved (here: CPU) tensors where they are, default device or not
        return t
    dev = as_device(target)
    return t if dev.type == "cpu" else t.to(dev)
