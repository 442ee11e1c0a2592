"""Differential fuzzing against PyTorch: every public op, hypothesis-drawn inputs, one table of call specs.

The table ``specs.txt`` holds one line per op, grouped by family (``[unary pointwise]``...)::

    names | args | dtypes | kwargs | options

* ``names``: comma-separated public names called with the same arguments (``abs``, ``F.relu``,
  ``linalg.det``, ``special.erf``, ``T.view_as`` for a Tensor method alone). A plain name also runs as the
  Tensor method of that name and as its in-place ``name_`` (on a clone), wherever both libraries have them.
* ``args``: positional argument tokens: ``x y z w`` tensors (mutually broadcastable shapes, 0-d and empty
  included), ``d`` a valid dim of ``x``, ``i`` an int64 index tensor of ``x``'s shape into dim ``d``,
  ``j`` a 1-D int64 index vector into dim ``d``, ``m`` a bool mask of ``x``'s shape, ``s`` a Python scalar
  of the dtype class, ``{a/b/c}`` one of the literals, anything else a Python literal.
* ``dtypes``: ``f`` float32+float64, ``i`` int64, ``b`` bool (``fi``, ``fib``...).
* ``kwargs``: ``key=token`` separated by spaces (same tokens).
* ``options``: ``shapes=*nk,*km`` (a template per tensor: letters are shared sizes in 0..4, digits fixed
  sizes, ``*`` a shared batch of 0-2 dims), ``nonempty`` (sizes >= 1), ``ndim=a:b``, ``finite`` (no
  nan/inf), ``vals=lo:hi`` (value range), ``nograd``, ``nozsign`` (the sign of a zero is not compared),
  ``noerr`` (who raises is not compared), ``novalues`` (uninitialized memory: dtype and shape only),
  ``only=0`` (compare these outputs only: the others are not unique, e.g. indices of ties), ``gradonly=x``
  (only the first argument requires grad), ``gfinite`` (gradients compared at finite inputs only),
  ``sorted=y`` (that tensor sorted along its last dim), ``tol=r`` / ``gtol=r`` (relative tolerances of values /
  gradients), ``reduce`` / ``scaled`` (absolute tolerance scaled by the inputs' magnitude), ``xfail: reason``
  (the rest of the line; strict: CI's examples find it) and ``xfail(float32): reason`` for one dtype only;
  ``known: reason`` / ``known(float64): reason`` the same, not strict, for a difference only a long run
  (MINITENSOR_FUZZ_EXAMPLES=50) finds. A comment starts at `` #``.

``[excluded]`` lines are ``names | reason``: the public names that are not fuzzed (random, stateful,
constructors...), each with why. ``test_spec_table.py`` (no torch) asserts the table covers every public
name: a new public name must get a line or an exclusion. ``test_fuzz_torch.py`` (``-m torch``) runs each
line in each dtype: values (nan positions, the sign of zeros, a tolerance per dtype), output dtype and shape,
error vs no error, and in float64 the gradients of a random cotangent (nan positions included; not where
PyTorch's own backward raises, and an output without a graph passes where PyTorch's gradient is zero).
``test_found.py`` holds the regression tests (no torch) of the differences it found and minitensor fixed. The
fuzz is derandomized (CI reproduces) and does not shrink; ``MINITENSOR_FUZZ_EXAMPLES=200`` raises the
examples per line and dtype for a long local run (default 4).
"""
