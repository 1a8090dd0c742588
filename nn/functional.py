"""nn.functional: every stateless function of nn under one name, as PyTorch's
torch.nn.functional (`import nn.functional as F`). This module only gathers names: the
functions live in layer_functions.py (linear, layer_norm, batch_norm, embedding, pad, dropout
in PyTorch's signature), convolution.py (conv1d, conv2d, conv3d and the max, average and
adaptive average poolings over one, two and three axes),
losses.py (every loss), attention_functional.py (attention), activations.py
(softmax, log_softmax and softmin, which refuse to guess PyTorch's implicit dim) and minigrad
(the other activations).
"""

from minigrad import gelu, relu, sigmoid, tanh  # noqa: F401
from minigrad import (celu, elu, hardsigmoid, hardswish, hardtanh, leaky_relu,  # noqa: F401
                      logsigmoid, mish, relu6, selu, silu, softplus, softsign)

from .activations import log_softmax, softmax, softmin  # noqa: F401  (PyTorch's implicit dim)
from .activations import gumbel_softmax  # noqa: F401

from .attention_functional import (attention_weights, causal_mask,  # noqa: F401
                                   masked_softmax, padding_mask,
                                   scaled_dot_product_attention)
from minigrad import glu  # noqa: F401
from .layer_functions import (Affine, BatchNorm, LayerNorm, batch_norm,  # noqa: F401
                              dropout, dropout1d, embedding, group_norm, interpolate,
                              layer_norm, linear, normalize, one_hot, pad, rms_norm)
from .convolution import (adaptive_avg_pool1d, adaptive_avg_pool2d,  # noqa: F401
                          adaptive_avg_pool3d, avg_pool1d, avg_pool2d, avg_pool3d, conv1d,
                          conv2d, conv3d, max_pool1d, max_pool2d, max_pool3d)
from .layer_functions import Linear  # noqa: F401  (Affine's name before; nn.Linear is the layer)
from .losses import (BinaryCrossEntropyWithLogits, CrossEntropy,  # noqa: F401
                     binary_cross_entropy, binary_cross_entropy_with_logits,
                     cosine_embedding_loss, cosine_similarity, cross_entropy, huber_loss,
                     kl_div, l1_loss, mse_loss, nll_loss, smooth_l1_loss)
