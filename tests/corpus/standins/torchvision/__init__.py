"""A torchvision stand-in for the corpus programs: ``datasets.MNIST`` of synthetic digits generated here
(no download), ``transforms`` and ``utils.save_image`` / ``make_grid``, written against ``torch`` so that the same code
serves the programs under minitensor and under PyTorch."""
from . import datasets, models, transforms, utils

__all__ = ["datasets", "models", "transforms", "utils"]
