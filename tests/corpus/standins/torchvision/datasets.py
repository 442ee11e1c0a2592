"""``MNIST``: synthetic 28x28 uint8 digits, ten fixed templates plus noise (learnable in a few steps);
``CORPUS_MNIST_N`` training images (default 512), a quarter as many test ones; ``FashionMNIST`` the same
with other templates. ``CIFAR10``: the same for
32x32x3 colour images (``CORPUS_CIFAR_N``, default 256). ``FakeData``: random
images as torchvision's (``CORPUS_FAKEDATA_N`` of them in place of ``size``, when set)."""
import os

import numpy as np
import torch


def _digits(n, seed, templates_seed=0):
    g = np.random.default_rng(templates_seed)
    templates = g.random((10, 28, 28)) < 0.25
    r = np.random.default_rng(seed)
    targets = r.integers(0, 10, n)
    noise = r.random((n, 28, 28)) < 0.05
    images = (templates[targets] ^ noise).astype(np.uint8) * 255
    return images, targets


class MNIST(torch.utils.data.Dataset):
    _templates = 0

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        n = int(os.environ.get("CORPUS_MNIST_N", "512"))
        images, targets = _digits(n if train else max(n // 4, 1), 1 if train else 2, self._templates)
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

    # torchvision's deprecated names for data and targets (it warns), which older programs still read
    train_data = test_data = property(lambda self: self.data)
    train_labels = test_labels = property(lambda self: self.targets)


class FashionMNIST(MNIST):
    _templates = 3


class CIFAR10(torch.utils.data.Dataset):
    """(32, 32, 3) uint8 images (torchvision: PIL images) of ten fixed colour templates plus noise."""

    classes = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"]

    def __init__(self, root, train=True, transform=None, target_transform=None, download=False):
        n = int(os.environ.get("CORPUS_CIFAR_N", "256"))
        n = n if train else max(n // 4, 1)
        templates = np.random.default_rng(0).integers(0, 256, (10, 32, 32, 3))
        r = np.random.default_rng(1 if train else 2)
        self.targets = r.integers(0, 10, n).tolist()
        noise = r.integers(-40, 41, (n, 32, 32, 3))
        self.data = np.clip(templates[self.targets] + noise, 0, 255).astype(np.uint8)
        self.transform, self.target_transform = transform, target_transform

    def __len__(self):
        return len(self.targets)

    def __getitem__(self, i):
        img, target = self.data[i], self.targets[i]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target


class FakeData(torch.utils.data.Dataset):
    """Random (H, W, C) uint8 images (torchvision: PIL images) of ``image_size`` (C, H, W), random targets."""

    def __init__(self, size=1000, image_size=(3, 224, 224), num_classes=10, transform=None,
                 target_transform=None, random_offset=0):
        self.size = int(os.environ.get("CORPUS_FAKEDATA_N", size))
        self.image_size, self.num_classes = tuple(image_size), num_classes
        self.transform, self.target_transform, self.random_offset = transform, target_transform, random_offset

    def __len__(self):
        return self.size

    def __getitem__(self, i):
        r = np.random.default_rng(i + self.random_offset)
        c, h, w = self.image_size
        img = r.integers(0, 256, (h, w, c), dtype=np.uint8)
        img, target = (img[..., 0] if c == 1 else img), int(r.integers(0, self.num_classes))
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target
