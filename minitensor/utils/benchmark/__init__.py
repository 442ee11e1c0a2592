"""``minitensor.utils.benchmark``: PyTorch's ``torch.utils.benchmark`` for timing statements: ``Timer``
(``timeit``, ``blocked_autorange``, ``adaptive_autorange``), ``Measurement`` and ``Compare``'s tables. Not
here: the C++ timer and Callgrind (they need PyTorch's C++ toolchain) and the input fuzzers."""
from .common import Measurement, TaskSpec, ordered_unique, select_unit, set_torch_threads, trim_sigfig, unit_to_english
from .compare import Colorize, Compare
from .timer import Language, Timer, timer

__all__ = ["Colorize", "Compare", "Language", "Measurement", "TaskSpec", "Timer", "ordered_unique", "select_unit",
           "set_torch_threads", "timer", "trim_sigfig", "unit_to_english"]
