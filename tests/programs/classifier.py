"""PyTorch's MNIST example, shrunk onto synthetic images: a conv net, DataLoader, Adadelta with StepLR,
train/test loops, state dict saved and loaded."""
import os
import sys
import tempfile

import minitensor as torch
import minitensor.nn as nn
import minitensor.nn.functional as F
import minitensor.optim as optim
from minitensor.optim.lr_scheduler import StepLR
from minitensor.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(16 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def make_data(n, generator):
    """Four classes: a bright bar in one of four places of a 12x12 image, plus noise."""
    labels = torch.randint(0, 4, (n,), generator=generator)
    images = 0.3 * torch.randn(n, 1, 12, 12, generator=generator)
    for k in range(4):
        images[labels == k, :, 3 * k:3 * k + 3, :] += 1.0
    return TensorDataset(images, labels)


def train(model, device, loader, optimizer):
    model.train()
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()


def test(model, device, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in loader:
            output = model(data.to(device))
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.to(device).view_as(pred)).sum().item()
    return correct / len(loader.dataset)


torch.manual_seed(1)
use_accel = torch.accelerator.is_available()
device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
g = torch.Generator().manual_seed(0)
train_loader = DataLoader(make_data(512, g), batch_size=64, shuffle=True)
test_loader = DataLoader(make_data(256, g), batch_size=128)
model = Net().to(device)
optimizer = optim.Adadelta(model.parameters(), lr=1.0)
scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
for epoch in range(1, 4):
    train(model, device, train_loader, optimizer)
    scheduler.step()
accuracy = test(model, device, test_loader)
path = os.path.join(tempfile.mkdtemp(), "mnist_cnn.pt")
torch.save(model.state_dict(), path)
restored = Net().to(device)
restored.load_state_dict(torch.load(path))
assert test(restored, device, test_loader) == accuracy
print(f"test accuracy {accuracy:.3f}")
assert accuracy > 0.9, accuracy
sys.exit(0)
