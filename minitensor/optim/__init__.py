"""Optimizers with PyTorch's names, defaults and update formulas, and learning-rate schedulers.

Each optimizer's ``step`` calls one in-place backend method per parameter (``sgd_update``, ``adam_update``,
``rmsprop_update``, ``adagrad_update``), so its state arrays are allocated once and updated in place.
"""
from __future__ import annotations

from . import lr_scheduler
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "lr_scheduler"]
