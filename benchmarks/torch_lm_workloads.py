"""The PyTorch twins of ``lm_workloads.py``'s GPT and LSTM language models (same module names, so that a
minitensor state dict loads as is), and their optimizers. PyTorch is imported inside the functions (see
``torch_workloads.py``)."""
from __future__ import annotations

from typing import Any

from .lm_workloads import GPT, GPT_BETAS, GPT_LR, GPT_WEIGHT_DECAY, LSTM, VOCAB


def model(name: str) -> Any:
    """The untrained twin of ``name`` (gpt or lstm); its weights come from the snapshot."""
    return _gpt() if name == "gpt" else _lstm()


def optimizer(name: str, module: Any) -> Any:
    """gpt: AdamW with nanoGPT's groups (decay on the matrices only); lstm: Adam with PyTorch's defaults."""
    import torch
    if name == "lstm":
        return torch.optim.Adam(module.parameters())
    params = list(module.parameters())
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": GPT_WEIGHT_DECAY},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=GPT_LR, betas=GPT_BETAS)


def _gpt() -> Any:
    import torch
    from torch import nn
    n_embd, n_head = GPT["n_embd"], GPT["n_head"]

    class CausalSelfAttention(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=False)
            self.c_proj = nn.Linear(n_embd, n_embd, bias=False)

        def forward(self, x: Any) -> Any:
            b, t, c = x.shape
            q, k, v = (z.view(b, t, n_head, c // n_head).transpose(1, 2) for z in self.c_attn(x).split(c, dim=2))
            y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))

    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c_fc = nn.Linear(n_embd, 4 * n_embd, bias=False)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * n_embd, n_embd, bias=False)

        def forward(self, x: Any) -> Any:
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.ln_1, self.attn = nn.LayerNorm(n_embd, bias=False), CausalSelfAttention()
            self.ln_2, self.mlp = nn.LayerNorm(n_embd, bias=False), MLP()

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPTLM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wte = nn.Embedding(VOCAB, n_embd)
            self.wpe = nn.Embedding(GPT["block_size"], n_embd)
            self.h = nn.ModuleList([Block() for _ in range(GPT["n_layer"])])
            self.ln_f = nn.LayerNorm(n_embd, bias=False)
            self.lm_head = nn.Linear(n_embd, VOCAB, bias=False)
            self.lm_head.weight = self.wte.weight  # weight tying

        def forward(self, idx: Any) -> Any:
            x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
            for block in self.h:
                x = block(x)
            logits = self.lm_head(self.ln_f(x))
            return logits.view(-1, logits.shape[-1])
    return GPTLM()


def _lstm() -> Any:
    from torch import nn

    class LSTMLM(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = nn.Embedding(VOCAB, LSTM["embed"])
            self.rnn = nn.LSTM(LSTM["embed"], LSTM["hidden"], LSTM["layers"])
            self.decoder = nn.Linear(LSTM["hidden"], VOCAB)

        def forward(self, tokens: Any) -> Any:
            output, _ = self.rnn(self.encoder(tokens))
            logits = self.decoder(output)
            return logits.view(-1, logits.shape[-1])
    return LSTMLM()
