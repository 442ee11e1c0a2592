"""A decoder-only (GPT-style) language model the way PyTorch users write one: token and learned position
embeddings, a causal nn.TransformerEncoder with batch_first, weight tying, AdamW with a cosine schedule and
gradient clipping, on a tiny synthetic corpus; then greedy generation."""
import minitensor as torch
import minitensor.nn as nn
import minitensor.nn.functional as F


class TinyGPT(nn.Module):
    def __init__(self, vocab, d_model=32, nhead=2, layers=2, context=16):
        super().__init__()
        self.tokens = nn.Embedding(vocab, d_model)
        self.positions = nn.Parameter(torch.zeros(1, context, d_model))
        block = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=4 * d_model, dropout=0.0,
                                           batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(block, layers)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab, bias=False)
        self.head.weight = self.tokens.weight  # tied input and output embeddings

    def forward(self, idx):
        t = idx.size(1)
        mask = nn.Transformer.generate_square_subsequent_mask(t)
        x = self.tokens(idx) + self.positions[:, :t]
        return self.head(self.norm(self.blocks(x, mask=mask, is_causal=True)))


torch.manual_seed(0)
vocab, context = 10, 16
corpus = torch.arange(vocab).repeat(60)  # a cyclic sequence: each next token is learnable
starts = torch.randint(0, len(corpus) - context - 1, (256,))
x = torch.stack([corpus[s:s + context] for s in starts.tolist()])
y = torch.stack([corpus[s + 1:s + context + 1] for s in starts.tolist()])
model = TinyGPT(vocab, context=context)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=60)
losses = []
for step in range(60):
    batch = torch.randint(0, 256, (32,))
    logits = model(x[batch])
    loss = F.cross_entropy(logits.reshape(-1, vocab), y[batch].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    scheduler.step()
    losses.append(loss.item())

model.eval()
with torch.no_grad():
    idx = torch.tensor([[3, 4, 5]])
    for _ in range(6):
        next_token = model(idx)[:, -1].argmax(-1, keepdim=True)
        idx = torch.cat([idx, next_token], dim=1)
print(f"first loss {losses[0]:.3f} last loss {losses[-1]:.3f} generated {idx[0].tolist()}")
assert losses[-1] < 0.2 * losses[0], losses
assert idx[0].tolist() == [3, 4, 5, 6, 7, 8, 9, 0, 1], idx
