"""The transforms the corpus programs use, on (H, W) or (H, W, C) uint8 arrays (torchvision's PIL images)."""
import numpy as np
import torch


class Compose:
    def __init__(self, transforms):
        self.transforms = transforms

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x


class ToTensor:
    def __call__(self, img):
        a = np.asarray(img, dtype=np.float32) / 255.0
        return torch.tensor(a[None] if a.ndim == 2 else a.transpose(2, 0, 1).copy())


class Normalize:
    def __init__(self, mean, std):
        self.mean, self.std = torch.tensor(mean).view(-1, 1, 1), torch.tensor(std).view(-1, 1, 1)

    def __call__(self, x):
        return (x - self.mean) / self.std


class Resize:
    """Nearest-neighbour resize of an (H, W) array to ``size`` (an int: square)."""

    def __init__(self, size):
        self.size = (size, size) if isinstance(size, int) else tuple(size)

    def __call__(self, img):
        a = np.asarray(img)
        rows = np.arange(self.size[0]) * a.shape[0] // self.size[0]
        cols = np.arange(self.size[1]) * a.shape[1] // self.size[1]
        return a[rows][:, cols]


class Lambda:
    def __init__(self, fn):
        self.fn = fn

    def __call__(self, x):
        return self.fn(x)
