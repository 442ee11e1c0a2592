"""A word-level language model the way PyTorch's example writes it (nn.Transformer subclassed, a causal mask,
gradient clipping; learned positions), on a tiny synthetic corpus."""
import math

import minitensor as torch
import minitensor.nn as nn
import minitensor.nn.functional as F


class LearnedPositions(nn.Module):
    """Positions as a learned table (GPT-style) rather than the example's sines and cosines."""

    def __init__(self, d_model, dropout=0.1, max_len=64):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        self.table = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.table.weight, std=0.02)

    def forward(self, x):
        positions = torch.arange(x.size(0), device=x.device)
        return self.dropout(x + self.table(positions).unsqueeze(1))


class TransformerModel(nn.Transformer):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.1):
        super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid, num_encoder_layers=nlayers)
        self.model_type = "Transformer"
        self.src_mask = None
        self.pos_encoder = LearnedPositions(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        nn.init.uniform_(self.input_emb.weight, -0.1, 0.1)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -0.1, 0.1)

    def forward(self, src, has_mask=True):
        if has_mask:
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                self.src_mask = nn.Transformer.generate_square_subsequent_mask(len(src))
        else:
            self.src_mask = None
        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=self.src_mask)
        return F.log_softmax(self.decoder(output), dim=-1)


torch.manual_seed(0)
ntokens, bptt, batch = 12, 8, 4
corpus = torch.arange(ntokens).repeat(40)  # a cyclic sequence: the next word is always learnable
data = corpus[: (len(corpus) // batch) * batch].view(batch, -1).t().contiguous()
model = TransformerModel(ntokens, 32, 2, 64, 2, dropout=0.0)
criterion = nn.NLLLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=3e-3)
losses = []
for epoch in range(4):
    model.train()
    for i in range(0, data.size(0) - 1, bptt):
        seq_len = min(bptt, len(data) - 1 - i)
        source, targets = data[i:i + seq_len], data[i + 1:i + 1 + seq_len].reshape(-1)
        optimizer.zero_grad()
        output = model(source)
        loss = criterion(output.view(-1, ntokens), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
        losses.append(loss.item())
model.eval()
with torch.no_grad():
    output = model(data[:bptt])
    accuracy = (output.argmax(-1)[:-1] == data[1:bptt]).float().mean().item()
print(f"first loss {losses[0]:.3f} last loss {losses[-1]:.3f} accuracy {accuracy:.2f}")
assert losses[-1] < 0.5 * losses[0], losses
assert accuracy > 0.9, accuracy
