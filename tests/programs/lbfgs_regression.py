"""Polynomial regression fitted with LBFGS and a strong-Wolfe line search, as PyTorch's examples do it."""
import minitensor as torch
import minitensor.nn as nn

torch.manual_seed(0)
x = torch.linspace(-1, 1, 200).unsqueeze(1)
features = torch.cat([x ** i for i in range(1, 5)], 1)
true_w, true_b = torch.tensor([[0.5], [-1.0], [2.0], [0.3]]), 0.7
y = features.mm(true_w) + true_b + 0.01 * torch.randn(200, 1)

fc = nn.Linear(4, 1)
optimizer = torch.optim.LBFGS(fc.parameters(), lr=1, max_iter=50, line_search_fn="strong_wolfe")


def closure():
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(fc(features), y)
    loss.backward()
    return loss


first = closure().item()
for _ in range(3):
    optimizer.step(closure)
last = closure().item()
print(f"loss {first:.4f} -> {last:.6f}; weights {fc.weight.view(-1).tolist()} bias {fc.bias.item():.3f}")
assert last < 2e-4, last
assert torch.allclose(fc.weight.view(-1, 1), true_w, atol=0.05)
assert abs(fc.bias.item() - true_b) < 0.02
