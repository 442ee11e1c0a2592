"""``minitensor.nn.functional``: PyTorch's ``torch.nn.functional`` names, from the op families in
``minitensor.functional``."""

from ..functional.activation import *  # noqa: F401,F403
from ..functional.attention import *  # noqa: F401,F403
from ..functional.conv import *  # noqa: F401,F403
from ..functional.dropout import *  # noqa: F401,F403
from ..functional.loss import *  # noqa: F401,F403
from ..functional.class_loss import *  # noqa: F401,F403
from ..functional.normalization import *  # noqa: F401,F403
from ..functional.pooling import *  # noqa: F401,F403
from ..functional.shape import pad  # noqa: F401
from ..functional.upsampling import *  # noqa: F401,F403
from ..functional.embedding import *  # noqa: F401,F403
from ..functional.linalg import linear  # noqa: F401
from ..functional.multihead_attention import *  # noqa: F401,F403
from ..functional import activation as _activation, attention as _attention, conv as _conv, dropout as _dropout
from ..functional import embedding as _embedding, loss as _loss, multihead_attention as _multihead_attention
from ..functional import normalization as _normalization, pooling as _pooling, class_loss as _class_loss
from ..functional import upsampling as _upsampling

__all__ = [*_activation.__all__, *_attention.__all__, *_conv.__all__, *_dropout.__all__, *_loss.__all__,
           *_normalization.__all__, *_pooling.__all__, *_embedding.__all__, *_multihead_attention.__all__, "pad",
           "linear"]
__all__ += _upsampling.__all__
__all__ += _class_loss.__all__

from ..functional.distance import *  # noqa: F401,F403,E402
from ..functional.margin_loss import *  # noqa: F401,F403,E402
from ..functional.likelihood_loss import *  # noqa: F401,F403,E402
from ..functional import distance as _distance, likelihood_loss as _likelihood_loss  # noqa: E402
from ..functional import margin_loss as _margin_loss  # noqa: E402
__all__ += [*_distance.__all__, *_margin_loss.__all__, *_likelihood_loss.__all__]

from ..functional.fold import fold, unfold  # noqa: E402
__all__ += ["fold", "unfold"]

from ..functional.linalg import bilinear  # noqa: E402
__all__ += ["bilinear"]

from ..functional.grid_sample import affine_grid, grid_sample  # noqa: E402
__all__ += ["affine_grid", "grid_sample"]

from ..functional.ctc import ctc_loss  # noqa: E402
__all__ += ["ctc_loss"]
from ..functional.gumbel import gumbel_softmax  # noqa: E402
__all__ += ["gumbel_softmax"]
from ..functional.pooling_windows import *  # noqa: F401,F403,E402
from ..functional.lp_pool import *  # noqa: F401,F403,E402
from ..functional import lp_pool as _lp_pool, pooling_windows as _pooling_windows  # noqa: E402
__all__ += [*_pooling_windows.__all__, *_lp_pool.__all__]

from . import grad  # noqa: E402,F401  (F.grad is the nn.grad module, as PyTorch's)
