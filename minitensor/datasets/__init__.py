"""``minitensor.datasets``: small image datasets as map-style Datasets (torchvision's names for MNIST)."""
from .digits import Digits
from .download import DownloadError, download_file
from .idx import IDXFormatError, read_idx
from .mnist import MNIST, FashionMNIST, default_root, mnist_test_split

__all__ = ["MNIST", "FashionMNIST", "Digits", "mnist_test_split", "default_root", "read_idx",
           "IDXFormatError", "download_file", "DownloadError"]
