"""nn: layers, losses, optimizers and checkpoints, built only on minigrad's public API.

    import minigrad as mg
    import nn

    model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))
    opt = nn.optim.Adam(model.parameters(), lr=1e-3)
    loss = nn.functional.cross_entropy(model(x), y)
    loss.backward(); opt.step(); opt.zero_grad()
    nn.save({"model": model.state_dict(), "optim": opt.state_dict()}, "ckpt.npz")
"""

from . import functional, init, lr_scheduler, optim, utils
from .layers import (BatchNorm1d, BatchNorm2d, Dropout, Dropout1d, Embedding, Flatten,
                     GroupNorm, Identity, LayerNorm, Linear, RMSNorm, Unflatten, Upsample)
from .convolution import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AvgPool1d,
                          AvgPool2d, AvgPool3d, Conv1d, Conv2d, Conv3d, MaxPool1d, MaxPool2d,
                          MaxPool3d)
from .activations import (CELU, ELU, GELU, SELU, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU,
                          LogSigmoid, LogSoftmax, Mish, ReLU, ReLU6, Sigmoid, SiLU, Softmax,
                          Softmin, Softplus, Softsign, Tanh)
from .loss_modules import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss,
                           CosineSimilarity, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                           MSELoss, NLLLoss, SmoothL1Loss)
from .module import (Module, ModuleDict, ModuleList, Parameter, ParameterDict, ParameterList,
                     RemovableHandle, Sequential)
from .optim import clip_grad_norm, clip_grad_norm_, clip_grad_value_
from .serialization import load, save
from .attention import (AdditiveAttention, BilinearAttention, DotProductAttention,
                        HardAttention, LocationAttentionDecoderStep, LocationAwareAttention,
                        MultiHeadAttention, MultiheadAttention, RBFAttention)
from .attention_functional import causal_mask, padding_mask
from .positional import (LearnedPositionalEmbedding, SinusoidalPositionalEncoding,
                         sinusoidal_encoding)
from .recurrent import (GRU, LSTM, RNN, GRUCell, GRUGates, LSTMCell, LSTMGates, RNNCell,
                        UpdateGateCell, UpdateGateRNN, UpdateGates)
from .transformer import (FeedForward, Transformer, TransformerDecoder,
                          TransformerDecoderLayer, TransformerEncoder, TransformerEncoderLayer,
                          TransformerLM)
from .diagnostics import Diagnostics
from .plots import plot_diagnostics
