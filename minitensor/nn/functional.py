"""``minitensor.nn.functional``: PyTorch's ``torch.nn.functional`` names, from the op families in
``minitensor.functional``."""

from ..functional.activation import *  # noqa: F401,F403
from ..functional.attention import *  # noqa: F401,F403
from ..functional.conv import *  # noqa: F401,F403
from ..functional.dropout import *  # noqa: F401,F403
from ..functional.loss import *  # noqa: F401,F403
from ..functional.normalization import *  # noqa: F401,F403
from ..functional.pooling import *  # noqa: F401,F403
from ..functional.shape import pad  # noqa: F401
from ..functional.embedding import *  # noqa: F401,F403
from ..functional.linalg import linear  # noqa: F401
from ..functional.multihead_attention import *  # noqa: F401,F403
