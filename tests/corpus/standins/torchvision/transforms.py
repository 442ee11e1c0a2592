"""The transforms the corpus programs use, on (H, W) or (H, W, C) uint8 arrays (torchvision's PIL images);
the random ones draw from NumPy's global generator (torchvision: Python's and torch's)."""
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


class Pad:
    """Zero padding of ``padding`` pixels on every side of an (H, W) or (H, W, C) array."""

    def __init__(self, padding):
        self.padding = padding

    def __call__(self, img):
        a = np.asarray(img)
        return np.pad(a, [(self.padding, self.padding)] * 2 + [(0, 0)] * (a.ndim - 2))


class RandomCrop:
    def __init__(self, size, padding=None):
        self.size = (size, size) if isinstance(size, int) else tuple(size)
        self.padding = padding

    def __call__(self, img):
        a = Pad(self.padding)(img) if self.padding else np.asarray(img)
        top = np.random.randint(0, a.shape[0] - self.size[0] + 1)
        left = np.random.randint(0, a.shape[1] - self.size[1] + 1)
        return a[top:top + self.size[0], left:left + self.size[1]]


class RandomHorizontalFlip:
    def __init__(self, p=0.5):
        self.p = p

    def __call__(self, img):
        return np.asarray(img)[:, ::-1] if np.random.rand() < self.p else img


class CenterCrop:
    """The central ``size`` window of an (H, W) or (H, W, C) array or PIL image (no padding: the images are
    at least ``size``)."""

    def __init__(self, size):
        self.size = (size, size) if isinstance(size, int) else tuple(size)

    def __call__(self, img):
        a = np.asarray(img)
        top, left = (a.shape[0] - self.size[0]) // 2, (a.shape[1] - self.size[1]) // 2
        return a[top:top + self.size[0], left:left + self.size[1]]
