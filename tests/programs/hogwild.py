"""PyTorch's mnist_hogwild example, shrunk: one model in shared memory trained by two processes at once."""
import minitensor as torch
import minitensor.multiprocessing as mp
import minitensor.nn as nn
import minitensor.nn.functional as F
import minitensor.optim as optim


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        return F.log_softmax(self.fc2(F.relu(self.fc1(x))), dim=1)


def make_data(seed):
    g = torch.Generator().manual_seed(seed)
    centers = torch.tensor([[2.0] * 8, [-2.0] * 8, [2.0, -2.0] * 4])
    labels = torch.randint(0, 3, (600,), generator=g)
    return centers[labels] + torch.randn(600, 8, generator=g), labels


def train(rank, model):
    torch.manual_seed(1 + rank)
    data, target = make_data(rank)
    optimizer = optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    for epoch in range(3):
        for i in range(0, 600, 30):
            optimizer.zero_grad()
            loss = F.nll_loss(model(data[i:i + 30]), target[i:i + 30])
            loss.backward()
            optimizer.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    model = Net()
    model.share_memory()
    processes = []
    for rank in range(2):
        p = mp.Process(target=train, args=(rank, model))
        p.start()
        processes.append(p)
    for p in processes:
        p.join()
        assert p.exitcode == 0
    data, target = make_data(99)
    with torch.no_grad():
        accuracy = (model(data).argmax(1) == target).float().mean().item()
    print(f"accuracy after Hogwild training {accuracy:.3f}")
    assert accuracy > 0.95, accuracy  # the parent's model learned from its children's steps
