"""``MNIST``: synthetic 28x28 uint8 digits, ten fixed templates plus noise (learnable in a few steps);
``CORPUS_MNIST_N`` training images (default 512), a quarter as many test ones."""
import os

import numpy as np
import torch


def _digits(n, seed):
    g = np.random.default_rng(0)
    templates = g.random((10, 28, 28)) < 0.25
    r = np.random.default_rng(seed)
    targets = r.integers(0, 10, n)
    noise = r.random((n, 28, 28)) < 0.05
    images = (templates[targets] ^ noise).astype(np.uint8) * 255
    return images, targets


class MNIST(torch.utils.data.Dataset):
    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        n = int(os.environ.get("CORPUS_MNIST_N", "512"))
        images, targets = _digits(n if train else max(n // 4, 1), 1 if train else 2)
        self.data, self.targets = torch.tensor(images), torch.tensor(targets)
        self.transform, self.target_transform = transform, target_transform

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        img, target = self.data[i].numpy(), int(self.targets[i])
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target
