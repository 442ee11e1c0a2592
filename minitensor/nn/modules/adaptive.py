"""``AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (2016), "Efficient softmax
approximation for GPUs", with PyTorch's parameters, state_dict keys and results."""
from __future__ import annotations

from collections import namedtuple
from typing import Any, Sequence, cast

from ...creation import tensor as _tensor
from ...functional.indexing import where
from ...functional.shape import cat
from ...tensor import Tensor
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Classes split by ``cutoffs`` c_0 < c_1 < ... < n_classes: the head (``Linear(in_features, c_0 +
    n_clusters)``) scores the c_0 frequent classes and one logit per cluster; cluster i (classes [c_i, c_{i+1}))
    is ``Linear(in_features, in_features // div_value^(i+1)) -> Linear(., c_{i+1} - c_i)``, both without bias.

    log p(y) = head_logprob[y] for y < c_0, head_logprob[c_0 + i] + cluster_i_logprob[y - c_i] otherwise.
    ``forward(input (N, in_features) or (in_features,), target (N,) or ())`` returns
    ``_ASMoutput(output = log p(target) (N,), loss = -mean(output))``. Each cluster runs on the rows whose target
    falls in it (one gather per cluster; a Python loop over the few clusters, none over the samples).
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int], div_value: float = 4.0,
                 head_bias: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 \
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features, self.n_classes = in_features, n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value, self.head_bias = div_value, head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, device=device, dtype=dtype),
                                        Linear(hsz, osz, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for projection in self.tail:
            for linear in projection.children():
                cast(Linear, linear).reset_parameters()

    def _check(self, input: Tensor, target: Tensor) -> None:
        if target.dim() == 1:
            if input.shape[0] != target.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch dimension.")
            if input.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                   f"{input.size()}")
        elif target.dim() == 0:
            if input.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                   f"{input.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        self._check(input_, target_)
        batched = target_.dim() > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        if target.numel() and bool(((target < 0) | (target >= self.n_classes)).any()):  # one host sync
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                               f"[{target.min().item()}, {target.max().item()}] were found. ")
        # cluster[n] = how many cutoffs are <= target[n]: 0 for the shortlist, i + 1 for tail cluster i
        bounds = _tensor(self.cutoffs[:-1], dtype=target.dtype, device=target.device)
        cluster = (target.unsqueeze(1) >= bounds).sum(1)
        head_index = where(cluster == 0, target, cluster + (self.shortlist_size - 1))
        output = input.new_zeros(target.shape[0])
        for i, projection in enumerate(self.tail):
            rows = (cluster == i + 1).nonzero().squeeze(1)
            if rows.numel() == 0:
                continue
            logprob = F.log_softmax(projection(input.index_select(0, rows)), dim=1)
            local = target.index_select(0, rows) - self.cutoffs[i]
            output = output.index_copy(0, rows, logprob.gather(1, local.unsqueeze(1)).squeeze(1))
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, head_index.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:
        """log p of every class, (N, n_classes): the head's shortlist, then each cluster shifted by its logit."""
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i, projection in enumerate(self.tail):
            cluster_logprob = F.log_softmax(projection(input), dim=1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, dim=1)

    def log_prob(self, input: Tensor) -> Tensor:
        """log p(class | input) for every class: (N, in_features) -> (N, n_classes)."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:
        """The most likely class of each row, (N,): the head's argmax when it is a shortlist class, else the
        argmax of the full distribution (computed only for those rows)."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        not_in_shortlist = output >= self.shortlist_size
        if not bool(not_in_shortlist.any()):
            return output
        if bool(not_in_shortlist.all()):
            return self._get_full_log_prob(input, head_output).argmax(dim=1)
        log_prob = self._get_full_log_prob(input[not_in_shortlist], head_output[not_in_shortlist])
        output[not_in_shortlist] = log_prob.argmax(dim=1)
        return output
