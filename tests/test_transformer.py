"""nn.MultiheadAttention and the Transformer modules: outputs against a float64 NumPy port of PyTorch's
algorithm from the same weights, PyTorch's parameter names and init, masks and the causal hint, and a
small language model written as PyTorch's word_language_model writes it (subclassing nn.Transformer),
which must learn. The ``torch`` tests load the same weights into PyTorch where it is installed."""
from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import as_np, assert_close

import minitensor as mt
import minitensor.nn.functional as F
from minitensor import nn


# ---------------------------------------------------------------------------------------- NumPy reference
def softmax(s):
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return p / p.sum(axis=-1, keepdims=True)


def additive(mask):
    """A MultiheadAttention mask (bool: True = not allowed) as a float bias."""
    return np.where(mask, -np.inf, 0.0) if mask.dtype == bool else mask


def mha_ref(query, key, value, w, num_heads, key_padding_mask=None, attn_mask=None, average=True,
            zero_attn=False):
    """PyTorch's multi_head_attention_forward for batched sequence-first input, from a state dict ``w``."""
    tgt, n, e = query.shape
    head = e // num_heads
    if "in_proj_weight" in w:
        wq, wk, wv = np.split(w["in_proj_weight"], 3)
    else:
        wq, wk, wv = w["q_proj_weight"], w["k_proj_weight"], w["v_proj_weight"]
    bq, bk, bv = np.split(w["in_proj_bias"], 3) if "in_proj_bias" in w else (0.0, 0.0, 0.0)
    q, k, v = query @ wq.T + bq, key @ wk.T + bk, value @ wv.T + bv
    if "bias_k" in w:
        k = np.concatenate([k, np.broadcast_to(w["bias_k"], (1, n, e))])
        v = np.concatenate([v, np.broadcast_to(w["bias_v"], (1, n, e))])

    def heads(x):
        return x.reshape(x.shape[0], n, num_heads, head).transpose(1, 2, 0, 3)
    q, k, v = heads(q), heads(k), heads(v)
    if zero_attn:
        k = np.concatenate([k, np.zeros((n, num_heads, 1, head))], axis=2)
        v = np.concatenate([v, np.zeros((n, num_heads, 1, head))], axis=2)
    src = k.shape[2]
    bias = np.zeros((n, num_heads, tgt, src))
    if attn_mask is not None:
        m = additive(attn_mask)
        m = m.reshape(n, num_heads, tgt, -1) if m.ndim == 3 else m
        bias[..., :m.shape[-1]] += m  # keys appended by bias_k / add_zero_attn are never masked
    if key_padding_mask is not None:
        bias[..., :key_padding_mask.shape[-1]] += additive(key_padding_mask)[:, None, None, :]
    p = softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(head) + bias)
    out = (p @ v).transpose(2, 0, 1, 3).reshape(tgt, n, e) @ w["out_proj.weight"].T
    out = out + w.get("out_proj.bias", 0.0)
    return out, (p.mean(axis=1) if average else p)


def layer_norm(x, w, prefix, eps=1e-5):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w[prefix + ".weight"] + w[prefix + ".bias"]


def sub(w, prefix):
    return {k[len(prefix) + 1:]: v for k, v in w.items() if k.startswith(prefix + ".")}


def encoder_layer_ref(x, w, nhead, attn_mask=None, norm_first=False, activation=lambda h: np.maximum(h, 0)):
    def sa(h):
        return mha_ref(h, h, h, sub(w, "self_attn"), nhead, attn_mask=attn_mask)[0]

    def ff(h):
        return activation(h @ w["linear1.weight"].T + w["linear1.bias"]) @ w["linear2.weight"].T + w["linear2.bias"]
    if norm_first:
        x = x + sa(layer_norm(x, w, "norm1"))
        return x + ff(layer_norm(x, w, "norm2"))
    x = layer_norm(x + sa(x), w, "norm1")
    return layer_norm(x + ff(x), w, "norm2")


def state(module):
    return {k: as_np(v).astype(np.float64) for k, v in module.state_dict().items()}


def rand(*shape, seed=0):
    return np.random.default_rng(seed + sum(shape)).standard_normal(shape)


def t(a):
    return mt.tensor(np.asarray(a))


# ------------------------------------------------------------------------------------ MultiheadAttention
MHA_CASES = {
    "plain": {},
    "no bias": {"bias": False},
    "kdim vdim": {"kdim": 5, "vdim": 3},
    "bias_kv": {"add_bias_kv": True},
    "zero_attn": {"add_zero_attn": True},
    "bias_kv and zero_attn": {"add_bias_kv": True, "add_zero_attn": True},
}


@pytest.mark.parametrize("kwargs", MHA_CASES.values(), ids=MHA_CASES.keys())
@pytest.mark.parametrize("masks", ["none", "bool", "float"])
def test_multihead_attention_matches_the_reference(kwargs, masks):
    mt.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, dtype=mt.float64, **kwargs)
    if kwargs.get("add_bias_kv"):
        nn.init.normal_(mha.in_proj_bias if mha.in_proj_bias is not None else mha.bias_k)
    tgt, src, n = 4, 6, 3
    query = rand(tgt, n, 8)
    key, value = rand(src, n, kwargs.get("kdim", 8), seed=1), rand(src, n, kwargs.get("vdim", 8), seed=2)
    kpm = attn = None
    if masks == "bool":
        kpm = np.zeros((n, src), dtype=bool)
        kpm[0, -2:] = True
        attn = rand(tgt, src, seed=3) > 1.0
        attn[:, 0] = False  # every query keeps a key
    elif masks == "float":
        kpm, attn = rand(n, src, seed=4), rand(2 * n, tgt, src, seed=5)
    args = {"key_padding_mask": None if kpm is None else t(kpm), "attn_mask": None if attn is None else t(attn)}
    expected, weights = mha_ref(query, key, value, state(mha), 2, kpm, attn,
                                zero_attn=kwargs.get("add_zero_attn", False))
    out, w = mha(t(query), t(key), t(value), **args)
    assert_close(out, expected, rtol=1e-10, atol=1e-12)
    assert_close(w, weights, rtol=1e-10, atol=1e-12)
    out, w = mha(t(query), t(key), t(value), need_weights=False, **args)  # the fused attention path
    assert w is None
    assert_close(out, expected, rtol=1e-10, atol=1e-12)


def test_multihead_attention_batch_first_unbatched_and_per_head_weights():
    mt.manual_seed(1)
    mha = nn.MultiheadAttention(6, 3, batch_first=True, dtype=mt.float64)
    x = rand(2, 5, 6)  # (N, L, E)
    expected, weights = mha_ref(x.transpose(1, 0, 2), *(x.transpose(1, 0, 2),) * 2, state(mha), 3, average=False)
    xt = t(x)
    out, w = mha(xt, xt, xt, average_attn_weights=False)
    assert_close(out, expected.transpose(1, 0, 2), rtol=1e-10, atol=1e-12)
    assert tuple(w.shape) == (2, 3, 5, 5)
    assert_close(w, weights, rtol=1e-10, atol=1e-12)
    one, w1 = mha(xt[0], xt[0], xt[0])  # unbatched (L, E): batch_first does not apply
    assert tuple(one.shape) == (5, 6) and tuple(w1.shape) == (5, 5)
    assert_close(one, expected[:, 0], rtol=1e-10, atol=1e-12)
    assert_close(w1, weights[0].mean(axis=0), rtol=1e-10, atol=1e-12)


def test_multihead_attention_parameters_init_and_gradients():
    mha = nn.MultiheadAttention(8, 2)
    assert list(mha.state_dict()) == ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    assert isinstance(mha.out_proj, nn.NonDynamicallyQuantizableLinear) and isinstance(mha.out_proj, nn.Linear)
    assert mha.q_proj_weight is None and mha.bias_k is None and mha.head_dim == 4
    assert not as_np(mha.in_proj_bias).any() and not as_np(mha.out_proj.bias).any()
    bound = math.sqrt(6 / (8 + 24))  # xavier_uniform_ on (3E, E)
    w = as_np(mha.in_proj_weight)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.8 * bound
    separate = nn.MultiheadAttention(8, 2, kdim=5, vdim=3, bias=False, add_bias_kv=True)
    assert [(k, tuple(v.shape)) for k, v in separate.state_dict().items()] == [
        ("q_proj_weight", (8, 8)), ("k_proj_weight", (8, 5)), ("v_proj_weight", (8, 3)), ("bias_k", (1, 1, 8)),
        ("bias_v", (1, 1, 8)), ("out_proj.weight", (8, 8))]
    x = mt.randn(4, 2, 8)
    mha(x, x, x)[0].sum().backward()
    assert all(p.grad is not None and p.grad.shape == p.shape for p in mha.parameters())
    with pytest.raises(AssertionError, match="divisible"):
        nn.MultiheadAttention(10, 3)
    with pytest.raises(AssertionError, match="is_causal|3D"):
        mha(mt.randn(4, 8, 2, 8), x, x)
    with pytest.raises(RuntimeError, match="Need attn_mask"):
        mha(x, x, x, is_causal=True)
    with pytest.raises(RuntimeError, match="2D attn_mask"):
        mha(x, x, x, attn_mask=mt.zeros(3, 3))
    with pytest.raises(AssertionError, match="does not match value shape"):
        mha(x, x, mt.randn(3, 2, 8))
    with pytest.raises(AssertionError, match="key_padding_mask shape"):
        mha(x, x, x, key_padding_mask=mt.zeros(2, 3, dtype=mt.bool))
    with pytest.raises(AssertionError, match="only bool and floating"):
        mha(x, x, x, attn_mask=mt.zeros(4, 4, dtype=mt.int64))


def test_multihead_attention_causal_hint_matches_the_explicit_mask_and_dropout_runs_only_in_training():
    mha = nn.MultiheadAttention(8, 2, dropout=0.5, dtype=mt.float64)
    x = t(rand(5, 3, 8))
    mask = nn.Transformer.generate_square_subsequent_mask(5, dtype=mt.float64)
    mha.eval()
    explicit = mha(x, x, x, attn_mask=mask, need_weights=False)[0]
    hinted = mha(x, x, x, attn_mask=mask, need_weights=False, is_causal=True)[0]
    assert_close(hinted, as_np(explicit), rtol=1e-12, atol=1e-13)
    bool_mask = mt.triu(mt.ones(5, 5, dtype=mt.bool), 1)  # True = not allowed
    assert_close(mha(x, x, x, attn_mask=bool_mask)[0], as_np(explicit), rtol=1e-12, atol=1e-13)
    mha.train()
    assert not np.allclose(as_np(mha(x, x, x, need_weights=False)[0]), as_np(mha.eval()(x, x, x)[0]))


# -------------------------------------------------------------------------------------- Transformer layers
@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_and_encoder_match_the_reference(norm_first, activation):
    mt.manual_seed(2)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, activation=activation, norm_first=norm_first,
                                       dtype=mt.float64)
    encoder = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(8, dtype=mt.float64)).eval()
    w = state(encoder)
    act = (lambda h: np.maximum(h, 0)) if activation == "relu" else \
        (lambda h: 0.5 * h * (1 + np.vectorize(math.erf)(h / math.sqrt(2))))
    x = rand(5, 3, 8)
    mask = np.triu(np.full((5, 5), -np.inf), 1)
    h = x
    for i in range(2):
        h = encoder_layer_ref(h, sub(w, f"layers.{i}"), 2, mask, norm_first, act)
    expected = layer_norm(h, w, "norm")
    assert_close(encoder(t(x), mask=t(mask)), expected, rtol=1e-10, atol=1e-12)
    assert_close(encoder(t(x), mask=t(mask), is_causal=False), expected, rtol=1e-10, atol=1e-12)
    # deep copies: the layers start equal and are separate parameters
    assert encoder.layers[0].linear1.weight is not encoder.layers[1].linear1.weight
    np.testing.assert_array_equal(w["layers.0.linear1.weight"], w["layers.1.linear1.weight"])


def test_decoder_layer_matches_the_reference_and_padding_masks_apply():
    mt.manual_seed(3)
    layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16, dtype=mt.float64).eval()
    w = state(layer)
    tgt, memory = rand(4, 2, 8), rand(6, 2, 8, seed=1)
    mask = np.triu(np.full((4, 4), -np.inf), 1)
    pad = np.array([[False] * 6, [False] * 4 + [True] * 2])

    def ff(h):
        return np.maximum(h @ w["linear1.weight"].T + w["linear1.bias"], 0) @ w["linear2.weight"].T + w["linear2.bias"]
    x = layer_norm(tgt + mha_ref(tgt, tgt, tgt, sub(w, "self_attn"), 2, attn_mask=mask)[0], w, "norm1")
    x = layer_norm(x + mha_ref(x, memory, memory, sub(w, "multihead_attn"), 2, key_padding_mask=pad)[0], w,
                   "norm2")
    expected = layer_norm(x + ff(x), w, "norm3")
    out = layer(t(tgt), t(memory), tgt_mask=t(mask), memory_key_padding_mask=t(pad))
    assert_close(out, expected, rtol=1e-10, atol=1e-12)
    decoder = nn.TransformerDecoder(layer, 1).eval()
    assert_close(decoder(t(tgt), t(memory), tgt_mask=t(mask), memory_key_padding_mask=t(pad)), expected,
                 rtol=1e-10, atol=1e-12)


def transformer_keys(num_encoder_layers, num_decoder_layers):
    """PyTorch's state_dict keys of nn.Transformer, in its order."""
    attn = ["in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"]
    linear = ["linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias"]
    keys = []
    for i in range(num_encoder_layers):
        p = f"encoder.layers.{i}."
        keys += [p + "self_attn." + a for a in attn] + [p + x for x in linear]
        keys += [p + f"norm{j}.{x}" for j in (1, 2) for x in ("weight", "bias")]
    keys += ["encoder.norm.weight", "encoder.norm.bias"]
    for i in range(num_decoder_layers):
        p = f"decoder.layers.{i}."
        keys += [p + "self_attn." + a for a in attn] + [p + "multihead_attn." + a for a in attn]
        keys += [p + x for x in linear] + [p + f"norm{j}.{x}" for j in (1, 2, 3) for x in ("weight", "bias")]
    return keys + ["decoder.norm.weight", "decoder.norm.bias"]


def test_transformer_names_init_shapes_and_mask():
    model = nn.Transformer(d_model=16, nhead=4, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=32)
    assert list(model.state_dict()) == transformer_keys(2, 1)
    assert len(nn.Transformer().state_dict()) == len(transformer_keys(6, 6))
    w = as_np(model.decoder.layers[0].linear1.weight)  # xavier_uniform_ on every matrix
    assert np.abs(w).max() <= math.sqrt(6 / 48) and np.abs(w).max() > 0.8 * math.sqrt(6 / 48)
    src, tgt = mt.randn(7, 3, 16), mt.randn(5, 3, 16)
    out = model(src, tgt, tgt_mask=model.generate_square_subsequent_mask(5))
    assert tuple(out.shape) == (5, 3, 16)
    first = nn.Transformer(16, 4, 1, 1, 32, batch_first=True)
    assert tuple(first(mt.randn(3, 7, 16), mt.randn(3, 5, 16)).shape) == (3, 5, 16)
    with pytest.raises(RuntimeError, match="batch number"):
        model(src, mt.randn(5, 2, 16))
    with pytest.raises(RuntimeError, match="feature number"):
        model(src, mt.randn(5, 3, 8))
    mask = nn.Transformer.generate_square_subsequent_mask(3)
    np.testing.assert_array_equal(as_np(mask), [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])
    assert mask.dtype == mt.float32
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=mt.float64).dtype == mt.float64
    with pytest.raises(RuntimeError, match="relu/gelu"):
        nn.TransformerEncoderLayer(8, 2, activation="tanh")


# --------------------------------------------------- a language model as PyTorch's word_language_model
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, dropout=0.1, max_len=5000):
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        pe = mt.zeros(max_len, d_model)
        position = mt.arange(0, max_len, dtype=mt.float).unsqueeze(1)
        div_term = mt.exp(mt.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = mt.sin(position * div_term)
        pe[:, 1::2] = mt.cos(position * div_term)
        pe = pe.unsqueeze(0).transpose(0, 1)
        self.register_buffer("pe", pe)

    def forward(self, x):
        x = x + self.pe[:x.size(0), :]
        return self.dropout(x)


class TransformerModel(nn.Transformer):
    """Container module with an encoder, a recurrent or transformer module, and a decoder."""

    def __init__(self, ntoken, ninp, nhead, nhid, nlayers, dropout=0.5):
        super().__init__(d_model=ninp, nhead=nhead, dim_feedforward=nhid,
                         num_encoder_layers=nlayers)
        self.model_type = "Transformer"
        self.src_mask = None
        self.pos_encoder = PositionalEncoding(ninp, dropout)
        self.input_emb = nn.Embedding(ntoken, ninp)
        self.ninp = ninp
        self.decoder = nn.Linear(ninp, ntoken)
        self.init_weights()

    def _generate_square_subsequent_mask(self, sz):
        return mt.triu(mt.full((sz, sz), float("-inf")), diagonal=1)

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.input_emb.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, src, has_mask=True):
        if has_mask:
            if self.src_mask is None or self.src_mask.size(0) != len(src):
                self.src_mask = self._generate_square_subsequent_mask(len(src)).to(src.device)
        else:
            self.src_mask = None
        src = self.input_emb(src) * math.sqrt(self.ninp)
        src = self.pos_encoder(src)
        output = self.encoder(src, mask=self.src_mask)
        output = self.decoder(output)
        return F.log_softmax(output, dim=-1)


def test_transformer_language_model_subclass_trains_with_pytorch_state_dict_keys():
    mt.manual_seed(0)
    ntokens, seq, batch = 20, 12, 4
    model = TransformerModel(ntokens, 16, 2, 32, 2, dropout=0.1)
    expected = transformer_keys(2, 0)[:-2] + ["decoder.weight", "decoder.bias", "pos_encoder.pe",
                                              "input_emb.weight"]
    assert list(model.state_dict()) == expected
    data = mt.randint(0, ntokens, (seq + 1, batch))
    inputs, targets = data[:-1], data[1:].reshape(-1)
    criterion = nn.NLLLoss()
    optimizer = mt.optim.Adam(model.parameters(), lr=1e-2)
    model.train()
    losses = []
    for _ in range(12):
        optimizer.zero_grad()
        output = model(inputs)
        loss = criterion(output.view(-1, ntokens), targets)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
        losses.append(loss.item())
    assert losses[0] == pytest.approx(math.log(ntokens), abs=0.5)
    assert losses[-1] < losses[0] - 0.5, losses
    model.eval()
    with mt.no_grad():
        a = model(inputs)
        b = model(inputs[:6])  # causal: a prefix's predictions do not see later tokens
    assert_close(b, as_np(a[:6]), rtol=1e-4, atol=1e-5)


# -------------------------------------------------------------------------------------------- PyTorch
def to_torch(module, torch_module):
    import torch
    torch_module = torch_module.double()  # first: loading float64 weights into float32 ones would round them
    torch_module.load_state_dict({k: torch.from_numpy(as_np(v).copy()) for k, v in module.state_dict().items()})
    return torch_module.eval()


@pytest.mark.torch
def test_multihead_attention_matches_pytorch():
    torch = pytest.importorskip("torch")
    mha = nn.MultiheadAttention(8, 2, kdim=5, vdim=3, add_bias_kv=True, dtype=mt.float64).eval()
    theirs = to_torch(mha, torch.nn.MultiheadAttention(8, 2, kdim=5, vdim=3, add_bias_kv=True))
    q, k, v = rand(4, 3, 8), rand(6, 3, 5), rand(6, 3, 3)
    kpm = np.zeros((3, 6), dtype=bool)
    kpm[1, -1] = True
    out, w = mha(t(q), t(k), t(v), key_padding_mask=t(kpm))
    ref_out, ref_w = theirs(*(torch.from_numpy(a) for a in (q, k, v)), key_padding_mask=torch.from_numpy(kpm))
    assert_close(out, ref_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert_close(w, ref_w.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.torch
def test_transformer_matches_pytorch_from_the_same_weights():
    torch = pytest.importorskip("torch")
    kw = {"d_model": 16, "nhead": 4, "num_encoder_layers": 2, "num_decoder_layers": 2, "dim_feedforward": 32}
    model = nn.Transformer(**kw, dtype=mt.float64).eval()
    theirs = to_torch(model, torch.nn.Transformer(**kw))
    src, tgt = rand(7, 3, 16), rand(5, 3, 16)
    mask = nn.Transformer.generate_square_subsequent_mask(5, dtype=mt.float64)
    np.testing.assert_array_equal(as_np(mask), torch.nn.Transformer.generate_square_subsequent_mask(5).numpy())
    out = model(t(src), t(tgt), tgt_mask=mask)
    ref = theirs(torch.from_numpy(src), torch.from_numpy(tgt), tgt_mask=torch.from_numpy(as_np(mask)))
    assert_close(out, ref.detach().numpy(), rtol=1e-9, atol=1e-10)
    assert list(model.state_dict()) == list(theirs.state_dict())
    lm = TransformerModel(20, 16, 2, 32, 2)
    assert list(lm.state_dict()) == transformer_keys(2, 0)[:-2] + ["decoder.weight", "decoder.bias",
                                                                    "pos_encoder.pe", "input_emb.weight"]


# ------------------------------------------------- where PyTorch keeps the out_proj class (corpus: word LM)
def test_out_proj_class_lives_in_nn_modules_linear(tmp_path):
    """PyTorch's word_language_model names ``torch.nn.modules.linear.NonDynamicallyQuantizableLinear`` in
    ``safe_globals`` to load a whole saved Transformer: the class must be there, and a whole
    MultiheadAttention saved with ``torch.save`` must load back under those safe globals."""
    from minitensor.nn.modules import linear
    mha = nn.MultiheadAttention(8, 2)
    assert type(mha.out_proj) is linear.NonDynamicallyQuantizableLinear
    assert linear.NonDynamicallyQuantizableLinear.__module__ == "minitensor.nn.modules.linear"
    mt.save(mha, tmp_path / "m.pt")
    allowed = [nn.MultiheadAttention, linear.NonDynamicallyQuantizableLinear, nn.modules.linear.Linear]
    with mt.serialization.safe_globals(allowed):
        back = mt.load(tmp_path / "m.pt")
    x = mt.randn(3, 1, 8)
    assert_close(as_np(back(x, x, x)[0]), as_np(mha(x, x, x)[0]), rtol=0, atol=0)


@pytest.mark.torch
def test_out_proj_class_lives_in_nn_modules_linear_torch():
    torch = pytest.importorskip("torch")
    from minitensor.nn.modules import linear
    theirs = torch.nn.modules.linear.NonDynamicallyQuantizableLinear
    assert type(torch.nn.MultiheadAttention(8, 2).out_proj) is theirs
    assert theirs.__module__ == "torch.nn.modules.linear" and theirs.__name__ in dir(linear)
