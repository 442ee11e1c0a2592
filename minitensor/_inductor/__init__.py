"""``torch._inductor``'s importable surface: its ``config`` module, which scripts set before ``torch.compile``
(llm.c's ``config.coordinate_descent_tuning = True``). minitensor has no compiler backend, so the settings are
kept and read back but change nothing (see ``minitensor.compiler``)."""
