"""``utils.tensorboard.SummaryWriter`` writes event files that TensorBoard's own reader (``EventAccumulator``)
reads back; the torch-marked twin logs the same run with PyTorch's writer and compares what is read."""
from __future__ import annotations

import io
import os
import struct
import zlib

import numpy as np
import pytest

import minitensor as mt

pytest.importorskip("tensorboard", reason="the tensorboard extra is not installed")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.plugins.hparams import plugin_data_pb2  # noqa: E402


def log_run(lib, logdir):
    """A training script's logging, as PyTorch programs write it."""
    from_lib = __import__(lib.__name__ + ".utils.tensorboard", fromlist=["SummaryWriter"])
    img = np.linspace(0, 1, 2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)  # CHW, 2 channels -> not an image
    with from_lib.SummaryWriter(log_dir=logdir, filename_suffix=".x") as w:
        for step in range(3):
            w.add_scalar("loss/train", lib.tensor(1.0 / (step + 1)), step)
            w.add_scalar("acc", 0.5 + step / 10, global_step=step)
        w.add_scalars("run", {"a": 1.0, "b": 2.0}, 0)
        w.add_histogram("weights", lib.tensor(np.arange(100.0) / 10), 0)
        w.add_histogram("w_auto", np.arange(10.0), 1, bins="auto")
        w.add_image("rgb", lib.tensor(np.concatenate([img, img[:1]])), 0)  # CHW float in [0, 1]
        w.add_image("hwc", (np.arange(12, dtype=np.uint8) * 20).reshape(2, 2, 3), 0, dataformats="HWC")
        w.add_image("gray", lib.tensor(img[0]), 0, dataformats="HW")
        w.add_images("batch", lib.tensor(np.stack([img[:1]] * 3)), 0)  # NCHW, one channel
        w.add_text("note", "hello **world**", 2)
        w.add_hparams({"lr": 0.1, "opt": "adam", "bs": 16}, {"hparam/acc": 0.9}, run_name="hp")
    return read_run(logdir)


def read_run(logdir):
    acc = EventAccumulator(logdir, size_guidance={"images": 0, "histograms": 0, "tensors": 0}).Reload()
    tags = acc.Tags()
    scalars = {t: [(e.step, round(e.value, 6)) for e in acc.Scalars(t)] for t in tags["scalars"]}
    hists = {t: [(e.step, e.histogram_value.min, e.histogram_value.max, e.histogram_value.num,
                  round(e.histogram_value.sum, 6), len(e.histogram_value.bucket_limit),
                  list(e.histogram_value.bucket)) for e in acc.Histograms(t)] for t in tags["histograms"]}
    images = {t: [(e.step, e.width, e.height) for e in acc.Images(t)] for t in tags["images"]}
    pixels = {t: acc.Images(t)[0].encoded_image_string for t in tags["images"]}
    texts = {t: [(e.step, e.tensor_proto.string_val[0].decode()) for e in acc.Tensors(t)] for t in tags["tensors"]}
    subruns = sorted(d for d in os.listdir(logdir) if os.path.isdir(os.path.join(logdir, d)))
    sub = {d: {t: [round(e.value, 6) for e in a.Scalars(t)] for t in a.Tags()["scalars"]}
           for d in subruns for a in [EventAccumulator(os.path.join(logdir, d)).Reload()]}
    hp = EventAccumulator(os.path.join(logdir, "hp")).Reload()
    content = hp.PluginTagToContent("hparams")["_hparams_/session_start_info"]
    start = plugin_data_pb2.HParamsPluginData.FromString(content)
    hparams = {k: (v.number_value if v.HasField("number_value") else v.string_value)
               for k, v in start.session_start_info.hparams.items()}
    files = [f for f in os.listdir(logdir) if f.startswith("events.out.tfevents")]
    return {"scalars": scalars, "hists": hists, "images": images, "texts": texts, "sub": sub, "hparams": hparams,
            "suffix": all(f.endswith(".x") for f in files) and len(files) == 1}, pixels


def decode_png(data):
    """Our PNGs (filter 0 on every row) back to an (H, W, C) array."""
    w, h, depth, color = struct.unpack(">IIBB", data[16:26])
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        idat += data[pos + 8:pos + 8 + n] if kind == b"IDAT" else b""
        pos += 12 + n
    c = {0: 1, 2: 3, 6: 4}[color]
    rows = np.frombuffer(zlib.decompress(idat), np.uint8).reshape(h, 1 + w * c)
    assert depth == 8 and not rows[:, 0].any()
    return rows[:, 1:].reshape(h, w, c)


def test_summary_writer_round_trips_through_tensorboard(tmp_path):
    seen, pixels = log_run(mt, str(tmp_path))
    assert seen["scalars"]["loss/train"] == [(0, 1.0), (1, 0.5), (2, 0.333333)]
    assert seen["scalars"]["acc"] == [(0, 0.5), (1, 0.6), (2, 0.7)]
    assert seen["sub"]["run_a"] == {"run": [1.0]} and seen["sub"]["run_b"] == {"run": [2.0]}
    step, lo, hi, num, total, _, buckets = seen["hists"]["weights"][0]
    assert (step, lo, hi, num, total, sum(buckets)) == (0, 0.0, 9.9, 100, 495.0, 100)
    assert seen["images"] == {"rgb": [(0, 4, 3)], "hwc": [(0, 2, 2)], "gray": [(0, 4, 3)], "batch": [(0, 12, 3)]}
    hwc = decode_png(pixels["hwc"])
    assert hwc.tolist() == ((np.arange(12) * 20).reshape(2, 2, 3)).tolist()
    gray = decode_png(pixels["gray"])
    assert gray.shape == (3, 4, 3) and gray[0, 0, 0] == 0 and gray[2, 3, 1] == int(np.float32(11 / 23) * 255)
    assert seen["texts"] == {"note/text_summary": [(2, "hello **world**")]}
    assert seen["hparams"] == {"lr": 0.1, "opt": "adam", "bs": 16.0} and seen["sub"]["hp"] == {"hparam/acc": [0.9]}
    assert seen["suffix"]


def test_summary_writer_defaults_purge_figure_graph(tmp_path, monkeypatch):
    from minitensor.utils.tensorboard import SummaryWriter
    monkeypatch.chdir(tmp_path)
    w = SummaryWriter(comment="_lr0.1")
    assert w.log_dir.startswith("runs" + os.sep) and w.log_dir.endswith("_lr0.1") and os.path.isdir(w.log_dir)
    with pytest.warns(UserWarning, match="add_graph writes nothing"):
        w.add_graph(mt.nn.Linear(2, 2), mt.ones(1, 2))
    w.close()
    w.add_scalar("after_close", 1.0, 0)  # a closed writer reopens a new event file, as PyTorch's
    w.flush()
    assert len(os.listdir(w.log_dir)) == 2
    w.close()
    with SummaryWriter("resumed", purge_step=5) as w:
        w.add_scalar("x", 1.0, 5)
    assert EventAccumulator("resumed").Reload().Scalars("x")[0].step == 5
    plt = pytest.importorskip("matplotlib.pyplot")
    fig = plt.figure(figsize=(2, 1), dpi=50)
    with SummaryWriter("fig") as w:
        w.add_figure("f", fig, 0)
    assert [(e.width, e.height) for e in EventAccumulator("fig").Reload().Images("f")] == [(100, 50)]


@pytest.mark.torch
def test_summary_writer_matches_torch(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("PIL", reason="PyTorch's add_image needs Pillow")
    ours, our_pixels = log_run(mt, str(tmp_path / "ours"))
    theirs, their_pixels = log_run(pytest.importorskip("torch"), str(tmp_path / "theirs"))
    assert ours == theirs
    from PIL import Image
    for tag, data in our_pixels.items():
        decoded = [np.asarray(Image.open(io.BytesIO(png))) for png in (data, their_pixels[tag])]
        assert np.array_equal(*decoded)


def test_missing_tensorboard_names_the_extra(monkeypatch):
    import importlib
    import sys
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    for name in [m for m in sys.modules if m.startswith("minitensor.utils.tensorboard")]:
        monkeypatch.delitem(sys.modules, name)
    with pytest.raises(ImportError, match=r"minitensor\[tensorboard\]"):
        importlib.import_module("minitensor.utils.tensorboard")
