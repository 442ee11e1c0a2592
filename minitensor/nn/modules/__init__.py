"""The layers of ``minitensor.nn``, one family per file as in PyTorch."""
from __future__ import annotations

from .activation import ELU, GELU, Hardtanh, LeakyReLU, LogSoftmax, ReLU, ReLU6, Sigmoid, SiLU, Softmax, \
    Softplus, Tanh
from .loss import HuberLoss, SmoothL1Loss
from .dropout import AlphaDropout, Dropout1d, Dropout2d, Dropout3d, FeatureAlphaDropout
from .padding import CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d, ConstantPad3d, \
    ReflectionPad1d, ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, \
    ZeroPad1d, ZeroPad2d, ZeroPad3d
from .conv import Conv1d, Conv3d, ConvTranspose1d, ConvTranspose3d
from .pooling import AdaptiveAvgPool1d, AdaptiveAvgPool3d
from .pooling import AvgPool1d, AvgPool3d, MaxPool1d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .normalization import GroupNorm
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .activation import GLU, Hardshrink, PReLU, Softmax2d, Softshrink, Tanhshrink, Threshold
from .activation import CELU, SELU, Hardsigmoid, Hardswish, LogSigmoid, Mish, Softmin, Softsign
from .attention import MultiheadAttention, NonDynamicallyQuantizableLinear
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv2d, ConvTranspose2d
from .dropout import Dropout
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, L1Loss, MSELoss, NLLLoss
from .module import Module
from .normalization import LayerNorm
from .pooling import AdaptiveAvgPool2d, AvgPool2d, MaxPool2d
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .sparse import Embedding
from .transformer import Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder, \
    TransformerEncoderLayer

__all__ = ["Module", "Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict", "Identity",
           "Linear", "Flatten", "Unflatten", "Conv2d", "ConvTranspose2d", "MaxPool2d", "AvgPool2d",
           "AdaptiveAvgPool2d", "BatchNorm1d", "BatchNorm2d", "LayerNorm", "Dropout", "Embedding", "ReLU",
           "ReLU6", "Hardtanh", "LeakyReLU", "ELU", "GELU", "SiLU", "Softplus", "Sigmoid", "Tanh", "Softmax",
           "LogSoftmax", "MSELoss", "L1Loss", "CrossEntropyLoss", "NLLLoss", "BCELoss", "BCEWithLogitsLoss",
           "RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
           "MultiheadAttention", "NonDynamicallyQuantizableLinear", "Transformer", "TransformerEncoder",
           "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer"]
__all__ += ["CELU", "SELU", "Mish", "Hardsigmoid", "Hardswish", "LogSigmoid", "Softsign", "Softmin"]
__all__ += ["SmoothL1Loss", "HuberLoss"]
__all__ += ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]
__all__ += ["ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
            "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
            "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "PixelShuffle", "PixelUnshuffle", "Upsample",
            "UpsamplingNearest2d", "UpsamplingBilinear2d"]
__all__ += ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "GroupNorm"]
__all__ += ["Conv1d", "Conv3d", "ConvTranspose1d", "ConvTranspose3d"]
__all__ += ["MaxPool1d", "MaxPool3d", "AvgPool1d", "AvgPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]
__all__ += ["PReLU", "GLU", "Threshold", "Hardshrink", "Softshrink", "Tanhshrink", "Softmax2d"]
__all__ += ["AdaptiveAvgPool1d", "AdaptiveAvgPool3d"]
from .loss import CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss, KLDivLoss, MarginRankingLoss  # noqa: E402
from .loss import MultiLabelSoftMarginLoss, MultiMarginLoss, PoissonNLLLoss, SoftMarginLoss  # noqa: E402
from .loss import CTCLoss, MultiLabelMarginLoss, TripletMarginLoss  # noqa: E402
from .distance import CosineSimilarity, PairwiseDistance  # noqa: E402
__all__ += ["KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss", "MarginRankingLoss", "HingeEmbeddingLoss",
            "CosineEmbeddingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss",
            "TripletMarginLoss", "CosineSimilarity", "PairwiseDistance", "MultiLabelMarginLoss",
            "CTCLoss"]

from .fold import Fold, Unfold  # noqa: E402
__all__ += ["Fold", "Unfold"]

from .pooling import AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d  # noqa: E402
from .pooling import FractionalMaxPool2d, FractionalMaxPool3d, LPPool1d, LPPool2d, LPPool3d  # noqa: E402
__all__ += ["AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "FractionalMaxPool2d",
            "FractionalMaxPool3d", "LPPool1d", "LPPool2d", "LPPool3d"]

from .pixelshuffle import ChannelShuffle  # noqa: E402
from .linear import Bilinear  # noqa: E402
from .normalization import LocalResponseNorm, RMSNorm  # noqa: E402
__all__ += ["Bilinear", "ChannelShuffle", "RMSNorm", "LocalResponseNorm"]

from .sparse import EmbeddingBag  # noqa: E402
__all__ += ["EmbeddingBag"]

from .lazy import LazyBatchNorm1d, LazyBatchNorm2d, LazyBatchNorm3d, LazyConv1d, LazyConv2d, LazyConv3d  # noqa: E402
from .lazy import LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d, LazyLinear  # noqa: E402
__all__ += ["LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
            "LazyConvTranspose2d", "LazyConvTranspose3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
            "LazyBatchNorm3d"]
from .lazy import LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d  # noqa: E402
__all__ += ["LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
__all__ += ["BatchNorm3d"]
from .activation import RReLU  # noqa: E402
from .container import Container  # noqa: E402
from .loss import NLLLoss2d  # noqa: E402
__all__ += ["RReLU", "Container", "NLLLoss2d"]
from .loss import TripletMarginWithDistanceLoss  # noqa: E402
__all__ += ["TripletMarginWithDistanceLoss"]
from .normalization import CrossMapLRN2d  # noqa: E402
__all__ += ["CrossMapLRN2d"]
from .adaptive import AdaptiveLogSoftmaxWithLoss  # noqa: E402
__all__ += ["AdaptiveLogSoftmaxWithLoss"]
from .sync_batchnorm import SyncBatchNorm  # noqa: E402
__all__ += ["SyncBatchNorm"]
