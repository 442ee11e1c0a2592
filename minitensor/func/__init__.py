"""``minitensor.func`` (PyTorch's ``torch.func``, ex-functorch): composable function transforms.

``grad`` / ``grad_and_value`` / ``vjp`` / ``jvp`` (grad.py), ``jacrev`` / ``jacfwd`` / ``hessian``
(jacobian.py), ``vmap`` (vmap.py: a loop over the batch, see there) and ``functional_call`` /
``stack_module_state`` (functional_call.py). All are built on ``autograd.grad(create_graph=True)``, so they nest."""
from __future__ import annotations

from .functional_call import functional_call, stack_module_state
from .grad import grad, grad_and_value, jvp, vjp
from .jacobian import hessian, jacfwd, jacrev
from .vmap import vmap

__all__ = ["functional_call", "stack_module_state", "grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd",
           "hessian", "vmap"]
