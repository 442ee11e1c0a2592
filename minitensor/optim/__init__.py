"""Optimizers with PyTorch's names, defaults and update formulas, and learning-rate schedulers.

Each optimizer's ``step`` calls one in-place backend method per parameter (``sgd_update``, ``adam_update``,
``rmsprop_update``, ``adagrad_update``, ``adadelta_update``, ``adamax_update``, ``nadam_update``,
``radam_update``, ``asgd_update``, ``rprop_update``, ``sparse_adam_update``), so its state arrays are
allocated once and updated in place. ``LBFGS`` works on one flat vector of all the parameters instead
(closure-based, with a strong-Wolfe line search). ``Adafactor`` composes tensor ops per parameter (its
factored state is not the parameter's shape).
"""
from __future__ import annotations

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam, AdamW
from .adamax import Adamax
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "ASGD", "LBFGS", "Rprop", "SparseAdam", "lr_scheduler"]

from . import swa_utils  # noqa: E402  (torch.optim.swa_utils)
__all__ += ["swa_utils"]

from .adafactor import Adafactor  # noqa: E402
__all__ += ["Adafactor"]
