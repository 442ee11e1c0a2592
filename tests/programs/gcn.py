"""A 2-layer graph convolutional network (Kipf & Welling) on a small synthetic graph, as PyTorch's GCN
example writes it: a normalized sparse adjacency D^-1/2 (A + I) D^-1/2 built with torch.sparse_coo_tensor,
propagated with torch.sparse.mm, trained with Adam on a few labelled nodes per class."""
import minitensor as torch
import minitensor.nn as nn
import minitensor.nn.functional as F

torch.manual_seed(0)
classes, per_class, features = 3, 40, 16
n = classes * per_class
labels = torch.arange(n) // per_class

# A stochastic block model: edges mostly within a class. Node features are weak class signals plus noise,
# so a node alone is hard to classify and its neighbourhood carries the answer.
same = labels.unsqueeze(0) == labels.unsqueeze(1)
p = torch.where(same, torch.full((n, n), 0.15), torch.full((n, n), 0.01))
upper = torch.triu(torch.rand(n, n) < p, diagonal=1)
adjacency = upper | upper.t() | torch.eye(n, dtype=torch.bool)  # symmetric, with self-loops
rows, cols = adjacency.to_sparse().indices()
degree = adjacency.sum(1).float()
weights = degree[rows].rsqrt() * degree[cols].rsqrt()
adj = torch.sparse_coo_tensor(torch.stack([rows, cols]), weights, (n, n)).coalesce()
centers = torch.randn(classes, features)
x = 0.3 * centers[labels] + torch.randn(n, features)

train = torch.zeros(n, dtype=torch.bool)
for c in range(classes):
    train[c * per_class:c * per_class + 5] = True  # five labelled nodes per class
test = ~train


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, input, adj):
        support = torch.mm(input, self.weight)
        return torch.sparse.mm(adj, support) + self.bias


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        return F.log_softmax(self.gc2(x, adj), dim=1)


model = GCN(features, 16, classes, dropout=0.5)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
for epoch in range(200):
    model.train()
    optimizer.zero_grad()
    loss = F.nll_loss(model(x, adj)[train], labels[train])
    loss.backward()
    optimizer.step()

model.eval()
with torch.no_grad():
    predictions = model(x, adj).argmax(1)
accuracy = (predictions[test] == labels[test]).float().mean().item()
print(f"adjacency {tuple(adj.shape)} with {adj._nnz()} entries ({adj.layout}); train loss {loss.item():.4f}; "
      f"test accuracy {accuracy:.3f}")
assert adj.is_sparse and adj.is_coalesced()
assert accuracy > 0.8, accuracy
