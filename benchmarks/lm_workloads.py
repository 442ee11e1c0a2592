"""The language-model workloads of ``workloads.py`` (issue #28), in minitensor; their PyTorch twins are in
``torch_lm_workloads.py``, with the same module names so that the state-dict keys match.

- ``gpt``: nanoGPT's model (``model.py``) at its shakespeare-char shape scaled down: 4 layers, 4 heads, 128
  wide, a block of 64 characters, a 65-character vocabulary, batch 12; pre-LayerNorm blocks with causal
  ``scaled_dot_product_attention`` and a GELU MLP, no biases (nanoGPT's ``train.py`` default), the output
  layer tied to the token embedding, nanoGPT's initialisation, dropout 0; AdamW (lr 1e-3, betas 0.9, 0.99,
  weight decay 0.1 on the matrices only, as nanoGPT's ``configure_optimizers``).
- ``lstm``: PyTorch's word_language_model shape: Embedding(65, 128), a 2-layer LSTM(128, 256), Linear(256,
  65), on (64, 16) tokens (sequence first); Adam (lr 1e-3), no dropout.

Both train on one fixed batch of random characters: inputs and their next characters as targets.
"""
from __future__ import annotations

import math

import minitensor as mt
from minitensor import nn, optim

VOCAB = 65  # shakespeare-char's characters
GPT = {"n_layer": 4, "n_head": 4, "n_embd": 128, "block_size": 64}
GPT_LR, GPT_BETAS, GPT_WEIGHT_DECAY = 1e-3, (0.9, 0.99), 0.1  # nanoGPT's shakespeare-char AdamW
LSTM = {"embed": 128, "hidden": 256, "layers": 2, "seq_len": 64}
BATCH_SIZES = {"gpt": 12, "lstm": 16}


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd: int, n_head: int) -> None:
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd, bias=False)
        self.c_proj = nn.Linear(n_embd, n_embd, bias=False)

    def forward(self, x: mt.Tensor) -> mt.Tensor:
        b, t, c = x.shape
        q, k, v = (z.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
                   for z in self.c_attn(x).split(c, dim=2))
        y = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, c))


class MLP(nn.Module):
    def __init__(self, n_embd: int) -> None:
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd, bias=False)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * n_embd, n_embd, bias=False)

    def forward(self, x: mt.Tensor) -> mt.Tensor:
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, n_embd: int, n_head: int) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd, bias=False)
        self.attn = CausalSelfAttention(n_embd, n_head)
        self.ln_2 = nn.LayerNorm(n_embd, bias=False)
        self.mlp = MLP(n_embd)

    def forward(self, x: mt.Tensor) -> mt.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPTLM(nn.Module):
    """nanoGPT's GPT: (B, T) tokens -> (B * T, vocab) logits (flattened for cross-entropy)."""

    def __init__(self, vocab: int, n_layer: int, n_head: int, n_embd: int, block_size: int) -> None:
        super().__init__()
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList([Block(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd, bias=False)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # weight tying
        for name, p in self.named_parameters():  # nanoGPT's _init_weights, then its scaled residual projections
            if p.dim() == 2:
                std = 0.02 / math.sqrt(2 * n_layer) if name.endswith("c_proj.weight") else 0.02
                nn.init.normal_(p, mean=0.0, std=std)

    def forward(self, idx: mt.Tensor) -> mt.Tensor:
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(mt.arange(t, device=idx.device))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return logits.view(-1, logits.shape[-1])


class LSTMLM(nn.Module):
    """Embedding, LSTM, Linear decoder: (T, B) tokens -> (T * B, vocab) logits."""

    def __init__(self, vocab: int, embed: int, hidden: int, layers: int) -> None:
        super().__init__()
        self.encoder = nn.Embedding(vocab, embed)
        self.rnn = nn.LSTM(embed, hidden, layers)
        self.decoder = nn.Linear(hidden, vocab)

    def forward(self, tokens: mt.Tensor) -> mt.Tensor:
        output, _ = self.rnn(self.encoder(tokens))
        logits = self.decoder(output)
        return logits.view(-1, logits.shape[-1])


def gpt_param_groups(model: nn.Module, weight_decay: float) -> list[dict]:
    """nanoGPT's configure_optimizers: weight decay on the matrices (and embeddings), none on the rest."""
    params = list(model.parameters())
    return [{"params": [p for p in params if p.dim() >= 2], "weight_decay": weight_decay},
            {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]


def build(name: str, batch: int, device: mt.device) -> tuple[nn.Module, optim.Optimizer, mt.Tensor, mt.Tensor]:
    """The model on ``device``, its optimizer, the input tokens and the flattened next-token targets of ``name``
    (gpt: (batch, 64) tokens; lstm: (64, batch)), on the host, drawn from the current seed: model first, then
    the tokens."""
    if name == "gpt":
        model: nn.Module = GPTLM(VOCAB, **GPT).to(device)
        optimizer: optim.Optimizer = optim.AdamW(gpt_param_groups(model, GPT_WEIGHT_DECAY), lr=GPT_LR,
                                                 betas=GPT_BETAS)
        tokens = mt.randint(0, VOCAB, (batch, GPT["block_size"] + 1))
        return model, optimizer, tokens[:, :-1].contiguous(), tokens[:, 1:].reshape(-1)
    if name == "lstm":
        model = LSTMLM(VOCAB, LSTM["embed"], LSTM["hidden"], LSTM["layers"]).to(device)
        tokens = mt.randint(0, VOCAB, (LSTM["seq_len"] + 1, batch))
        return model, optim.Adam(model.parameters()), tokens[:-1].contiguous(), tokens[1:].reshape(-1)
    raise ValueError(f"unknown language-model workload {name!r}")
