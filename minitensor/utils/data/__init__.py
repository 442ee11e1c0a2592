"""``minitensor.utils.data``: PyTorch's data pipeline names - datasets, samplers, collation, DataLoader."""
from ._worker import WorkerInfo, get_worker_info
from .collate import default_collate
from .dataloader import DataLoader
from .dataset import ConcatDataset, Dataset, Subset, TensorDataset, random_split
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

from . import distributed
from .distributed import DistributedSampler

__all__ = ["Dataset", "TensorDataset", "Subset", "ConcatDataset", "random_split", "Sampler",
           "SequentialSampler", "RandomSampler", "BatchSampler", "default_collate", "DataLoader",
           "get_worker_info", "WorkerInfo"]

__all__ += ["DistributedSampler", "distributed"]
from .sampler import SubsetRandomSampler, WeightedRandomSampler  # noqa: E402
__all__ += ["SubsetRandomSampler", "WeightedRandomSampler"]
from .collate import default_convert  # noqa: E402
from .dataset import StackDataset  # noqa: E402
from .iterable import ChainDataset, IterableDataset  # noqa: E402
__all__ += ["default_convert", "StackDataset", "IterableDataset", "ChainDataset"]
