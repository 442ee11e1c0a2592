"""``torch.utils.benchmark.Timer``: ``timeit.Timer`` with PyTorch's habits: a warm-up before timing, the
thread pool held at ``num_threads`` (one by default) while timing, the accelerator synchronised at each
reading, and blocks of runs sized so that the timer's own cost stays under 0.01 % of a block."""
from __future__ import annotations

import enum
import statistics
import textwrap
import timeit
from typing import Any, Callable, NoReturn

from . import common

__all__ = ["Timer", "timer", "Language"]


def timer() -> float:
    """timeit's clock, after waiting for the accelerator's queued work (when there is one)."""
    from ... import accelerator
    if accelerator.is_available():
        accelerator.synchronize()
    return timeit.default_timer()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


class Timer:
    """Times ``stmt`` (a string of Python) after ``setup``, with ``globals`` (``torch`` is this library, as
    ``import minitensor as torch`` names it). ``label``, ``sub_label``, ``description`` and ``env`` travel
    with each Measurement to group it in ``Compare``; ``num_threads`` sizes the thread pool while timing."""

    def __init__(self, stmt: str = "pass", setup: str = "pass", global_setup: str = "",
                 timer: Callable[[], float] = timer, globals: dict[str, Any] | None = None,
                 label: str | None = None, sub_label: str | None = None, description: str | None = None,
                 env: str | None = None, num_threads: int = 1, language: Language | str = Language.PYTHON) -> None:
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("Timer(language='cpp') compiles the statement as a PyTorch C++ extension; "
                                      "minitensor has no C++ API: time Python statements")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely this code can simply "
                             "be moved to `setup`.")
        import minitensor
        self._globals = dict(globals or {})
        self._globals.setdefault("torch", minitensor)
        stmt, setup = (_dedent(s) for s in (stmt, setup))
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                          sub_label=sub_label, description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number: int) -> float:
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number: int = 1000000) -> common.Measurement:
        """``stmt`` ``number`` times in one block (after a warm-up of number // 100 runs, at least 2)."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return common.Measurement(number, [self._timeit(number)], self._task_spec)

    def repeat(self, repeat: int = -1, number: int = -1) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback: Callable[[int, float], NoReturn] | None = None) -> None:
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def collect_callgrind(self, number: int = 100, *, repeats: int | None = None, collect_baseline: bool = True,
                          retain_out_file: bool = False) -> Any:
        raise NotImplementedError("collect_callgrind runs the statement under Valgrind through PyTorch's C++ "
                                  "bindings, which minitensor does not have; use blocked_autorange")

    def _block_size(self, min_run_time: float) -> int:
        """Runs per block: 1, 10, 100... until the timer's overhead is at most 1e-4 of a block that lasts
        min_run_time / 1000, or a block lasts min_run_time."""
        overhead = statistics.median(self._timeit(0) for _ in range(5))
        number = 1
        while number * 10 <= 2147483647:
            taken = self._timeit(number)
            if (overhead / taken <= 1e-4 and taken >= min_run_time / 1000) or taken > min_run_time:
                break
            number *= 10
        return number

    def _measure(self, min_run_time: float, block_min_run_time: float, max_run_time: float | None,
                 callback: Callable[[int, float], Any] | None, threshold: float | None) -> common.Measurement:
        """Blocks until min_run_time is spent and (with a threshold) the IQR is under threshold x median over
        more than 3 blocks, or max_run_time is spent."""
        with common.set_torch_threads(self._task_spec.num_threads):
            number = self._block_size(block_min_run_time)
            times: list[float] = []
            while True:
                times.append(self._timeit(number))
                if callback:
                    callback(number, times[-1])
                settled = threshold is None or (len(times) > 3 and common.Measurement(
                    number, times, self._task_spec).meets_confidence(threshold))
                if (sum(times) >= min_run_time and settled) or (max_run_time and sum(times) > max_run_time):
                    break
        return common.Measurement(number, times, self._task_spec)

    def blocked_autorange(self, callback: Callable[[int, float], NoReturn] | None = None,
                          min_run_time: float = 0.2) -> common.Measurement:
        """Blocks of runs (sized as ``_block_size``) until ``min_run_time`` seconds are spent."""
        return self._measure(min_run_time, min_run_time, None, callback, None)

    def adaptive_autorange(self, threshold: float = 0.1, *, min_run_time: float = 0.01, max_run_time: float = 10.0,
                           callback: Callable[[int, float], NoReturn] | None = None) -> common.Measurement:
        """As ``blocked_autorange``, until the blocks' IQR / median is under ``threshold`` (over more than 3
        blocks and ``min_run_time``) or ``max_run_time`` is spent."""
        return self._measure(min_run_time, 0.05, max_run_time, callback, threshold)


def _dedent(code: str) -> str:
    code = textwrap.dedent(code)
    return (code[1:] if code and code[0] == "\n" else code).rstrip()
