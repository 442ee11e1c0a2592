"""The examples' models, in one place: the MLP, the CNN, the GAN's generator and discriminator (plain
and DCGAN), and a Transformer language model. Each adapts its first (or last) layer to the image size, so
the same code trains on 28x28 MNIST and on scikit-learn's 8x8 digits.

``benchmarks/`` and ``tests/`` build their workloads from here too, so a timing or a quality bar is always
about the model the examples train.
"""
from __future__ import annotations

import math

import minitensor as mt
from minitensor import nn

LATENT_DIM = 100  # the GAN's noise vector z ~ N(0, I)
NUM_CLASSES = 10


def mlp(image_size: int = 28, hidden: int | tuple[int, ...] = 128) -> nn.Module:
    """Flatten, then Linear + ReLU for each hidden width, then Linear(., 10): (N, 1, s, s) images -> (N, 10)
    logits. The examples' MLP is 784-128-10; the benchmarks' MLP-L is ``hidden=(1024, 1024)``."""
    widths = [image_size * image_size, *((hidden,) if isinstance(hidden, int) else hidden)]
    layers: list[nn.Module] = [nn.Flatten()]
    for n_in, n_out in zip(widths, widths[1:]):
        layers += [nn.Linear(n_in, n_out), nn.ReLU()]
    return nn.Sequential(*layers, nn.Linear(widths[-1], NUM_CLASSES))


def cnn(image_size: int = 28) -> nn.Module:
    """Two conv(3x3, padding 1) + ReLU + MaxPool(2) blocks (32 and 64 channels), Linear(64*(s/4)^2, 128),
    ReLU, Linear(128, 10): (N, 1, s, s) -> (N, 10) logits; s = 28 gives the usual Linear(3136, 128)."""
    side = image_size // 4  # two 2x2 pools, each rounding down
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * side * side, 128), nn.ReLU(), nn.Linear(128, NUM_CLASSES))


def gan_generator(image_size: int = 28, hidden: int = 256) -> nn.Module:
    """z (N, 100) -> Linear(100, 256), LeakyReLU(0.2), Linear(256, s*s), Tanh -> images (N, 1, s, s) in
    [-1, 1]."""
    return nn.Sequential(nn.Linear(LATENT_DIM, hidden), nn.LeakyReLU(0.2),
                         nn.Linear(hidden, image_size * image_size), nn.Tanh(),
                         nn.Unflatten(1, (1, image_size, image_size)))


def gan_discriminator(image_size: int = 28, hidden: int = 256) -> nn.Module:
    """images (N, 1, s, s) -> Flatten, Linear(s*s, 256), LeakyReLU(0.2), Linear(256, 1), Sigmoid -> (N, 1),
    the probability that each image is real."""
    return nn.Sequential(nn.Flatten(), nn.Linear(image_size * image_size, hidden), nn.LeakyReLU(0.2),
                         nn.Linear(hidden, 1), nn.Sigmoid())


def dcgan_generator(image_size: int = 28, width: int = 64) -> nn.Module:
    """z (N, 100) -> Linear to (2w, s/4, s/4) + BatchNorm + ReLU, then two ConvTranspose2d(4, stride 2,
    padding 1) that double the side: to (w, s/2, s/2) + BatchNorm + ReLU, and to (1, s, s) + Tanh.
    ``image_size`` must be a multiple of 4 (28 and 8 are)."""
    side = _quarter(image_size)
    return nn.Sequential(
        nn.Linear(LATENT_DIM, 2 * width * side * side, bias=False), nn.BatchNorm1d(2 * width * side * side),
        nn.ReLU(), nn.Unflatten(1, (2 * width, side, side)),
        nn.ConvTranspose2d(2 * width, width, 4, stride=2, padding=1, bias=False), nn.BatchNorm2d(width),
        nn.ReLU(),
        nn.ConvTranspose2d(width, 1, 4, stride=2, padding=1), nn.Tanh())


def dcgan_discriminator(image_size: int = 28, width: int = 64) -> nn.Module:
    """images (N, 1, s, s) -> Conv2d(4, stride 2, padding 1) to (w, s/2, s/2) + LeakyReLU(0.2), to
    (2w, s/4, s/4) + BatchNorm + LeakyReLU(0.2), Flatten, Linear(2w (s/4)^2, 1), Sigmoid -> (N, 1)."""
    side = _quarter(image_size)
    return nn.Sequential(
        nn.Conv2d(1, width, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
        nn.Conv2d(width, 2 * width, 4, stride=2, padding=1, bias=False), nn.BatchNorm2d(2 * width),
        nn.LeakyReLU(0.2),
        nn.Flatten(), nn.Linear(2 * width * side * side, 1), nn.Sigmoid())


def wgan_critic(image_size: int = 28, width: int = 64) -> nn.Module:
    """``dcgan_discriminator`` as WGAN-GP's critic (Gulrajani et al., 2017): no BatchNorm (the gradient
    penalty is taken per image, which batch statistics would couple) and no Sigmoid (a score, not a
    probability) -> (N, 1)."""
    side = _quarter(image_size)
    return nn.Sequential(
        nn.Conv2d(1, width, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
        nn.Conv2d(width, 2 * width, 4, stride=2, padding=1), nn.LeakyReLU(0.2),
        nn.Flatten(), nn.Linear(2 * width * side * side, 1))


def _quarter(image_size: int) -> int:
    if image_size % 4:
        raise ValueError(f"the DCGAN halves the image side twice, so it needs a side divisible by 4; got "
                         f"{image_size}")
    return image_size // 4


def positional_encoding(max_len: int, d_model: int) -> mt.Tensor:
    """The sinusoidal table (max_len, 1, d_model): sin(p w_i) in even and cos(p w_i) in odd columns,
    w_i = 10000^(-2i / d_model) (PyTorch's word_language_model's PositionalEncoding)."""
    position = mt.arange(0, max_len, dtype=mt.float32).unsqueeze(1)
    div_term = mt.exp(mt.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe = mt.zeros(max_len, d_model)
    pe[:, 0::2] = mt.sin(position * div_term)
    pe[:, 1::2] = mt.cos(position * div_term)
    return pe.unsqueeze(1)


class TransformerLM(nn.Module):
    """Tokens (S, N) -> next-token logits (S * N, ntoken): embedding * sqrt(d_model) + the sinusoidal
    positions (buffer ``pe``), a causal ``TransformerEncoder`` of ``nlayers`` PyTorch-default layers
    (post-norm, ReLU), and a Linear decoder; PyTorch's word_language_model TransformerModel without its
    unused decoder stack. The logits come flattened, so that cross-entropy takes them as a classifier's."""

    def __init__(self, ntoken: int, d_model: int = 512, nhead: int = 8, d_hid: int = 2048, nlayers: int = 2,
                 dropout: float = 0.1, max_len: int = 512) -> None:
        super().__init__()
        self.d_model = d_model
        self.input_emb = nn.Embedding(ntoken, d_model)
        self.register_buffer("pe", positional_encoding(max_len, d_model))
        layer = nn.TransformerEncoderLayer(d_model, nhead, d_hid, dropout)
        self.encoder = nn.TransformerEncoder(layer, nlayers, enable_nested_tensor=False)
        self.decoder = nn.Linear(d_model, ntoken)

    def forward(self, src: mt.Tensor) -> mt.Tensor:
        mask = nn.Transformer.generate_square_subsequent_mask(src.shape[0], device=src.device)
        x = self.input_emb(src) * math.sqrt(self.d_model) + self.pe[:src.shape[0]]
        logits = self.decoder(self.encoder(x, mask=mask))
        return logits.reshape(-1, logits.shape[-1])
