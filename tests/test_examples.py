"""The classifier examples (examples/mlp.py, examples/cnn.py) and what they share (examples/common.py):
end to end for a few steps on each device, their JSON log, checkpoints and --resume, the data fall-back
and the command line's errors. The quality bars on MNIST are in test_training.py."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

import minitensor as mt

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))

import cnn  # noqa: E402
import common  # noqa: E402
import mlp  # noqa: E402
import models  # noqa: E402

QUIET = ["--dataset", "digits", "--no-progress"]


def run(example, tmp_path: Path, *argv: str, out: str = "out") -> dict:
    return example.main([*QUIET, "--out", str(tmp_path / out), *argv])


@pytest.mark.parametrize("example", [mlp, cnn], ids=["mlp", "cnn"])
def test_trains_on_each_device_and_logs_what_it_printed(example, device, tmp_path, capsys):
    run(example, tmp_path, "--device", device.type, "--epochs", "2", "--batch-size", "128",
        "--limit-steps", "20")
    printed = capsys.readouterr().out
    on_disk = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert on_disk["device"] == str(device) and on_disk["dataset"].startswith("digits")
    first, second = on_disk["epochs"]
    # 1,437 training images in batches of 128: 12 steps (the last of 29 images); the budget of 20 steps
    # cuts epoch 2 after 8 full batches
    assert (first["epoch"], first["steps"], second["epoch"], second["steps"]) == (1, 12, 2, 8)
    assert on_disk["final"]["steps"] == 20 == second["step"]
    for epoch, samples in ((first, 1437), (second, 8 * 128)):
        assert np.isfinite(epoch["loss"]) and 0 <= epoch["test_accuracy"] <= 1
        assert epoch["samples_per_s"] == pytest.approx(samples / epoch["train_seconds"], rel=0.01)
        assert epoch["ms_per_step"] == pytest.approx(1e3 * epoch["train_seconds"] / epoch["steps"], rel=0.01)
        assert f"test accuracy {epoch['test_accuracy']:.2%}" in printed
    assert second["loss"] < first["loss"]  # it learns

    # the checkpoint holds the trained weights: reloaded, they give the accuracy the log reports
    state = mt.load(tmp_path / "out" / "checkpoint.mt")
    model = (models.mlp if example is mlp else models.cnn)(8)
    model.load_state_dict(state["modules"]["model"])
    assert common.accuracy(model, common.load_images("digits", None).test, mt.device("cpu")) == \
        pytest.approx(on_disk["final"]["test_accuracy"])


def test_batch_count_follows_the_batch_size(tmp_path):
    log = run(cnn, tmp_path, "--epochs", "1", "--batch-size", "500")
    assert log["epochs"][0]["steps"] == 3  # ceil(1437 / 500), the last batch short


def test_resumed_run_equals_an_uninterrupted_one(tmp_path):
    run(mlp, tmp_path, "--epochs", "2", out="straight")
    run(mlp, tmp_path, "--epochs", "1", out="split")
    log = run(mlp, tmp_path, "--epochs", "2", "--resume", out="split")
    assert log["resumed_from"]["epoch"] == 1 and [e["epoch"] for e in log["epochs"]] == [1, 2]
    straight = mt.load(tmp_path / "straight" / "checkpoint.mt")
    resumed = mt.load(tmp_path / "split" / "checkpoint.mt")
    assert straight["step"] == resumed["step"] == 30
    for key, value in straight["modules"]["model"].items():
        np.testing.assert_array_equal(resumed["modules"]["model"][key].numpy(), value.numpy(), err_msg=key)
    assert json.loads((tmp_path / "split" / "metrics.json").read_text())["epochs"][1]["step"] == 30


@pytest.mark.parametrize("example", [mlp, cnn], ids=["mlp", "cnn"])
def test_amp_learns_and_resumes_with_the_scalers_state(example, tmp_path):
    """--amp on the CPU: bfloat16 autocast and GradScaler("cpu"); the scaler's state is in the checkpoint,
    so a resumed run ends with the very weights and scaler state of an uninterrupted one."""
    run(example, tmp_path, "--amp", "--epochs", "2", out="straight")
    run(example, tmp_path, "--amp", "--epochs", "1", out="split")
    log = run(example, tmp_path, "--amp", "--epochs", "2", "--resume", out="split")
    assert log["args"]["amp"] and log["epochs"][1]["loss"] < log["epochs"][0]["loss"]
    straight, resumed = (mt.load(tmp_path / d / "checkpoint.mt") for d in ("straight", "split"))
    scaler = straight["optimizers"]["scaler"]
    assert scaler == resumed["optimizers"]["scaler"]
    assert scaler["scale"] == 2.0 ** 16 and scaler["_growth_tracker"] == straight["step"]  # no inf, no growth yet
    for key, value in straight["modules"]["model"].items():
        assert value.dtype == mt.float32
        np.testing.assert_array_equal(resumed["modules"]["model"][key].numpy(), value.numpy(), err_msg=key)


def test_resume_without_a_checkpoint_or_from_another_example_says_so(tmp_path):
    with pytest.raises(SystemExit, match="no checkpoint at"):
        run(mlp, tmp_path, "--resume")
    run(mlp, tmp_path, "--epochs", "1", "--limit-steps", "2", out="mlp")
    state = mt.load(tmp_path / "mlp" / "checkpoint.mt")
    state["modules"] = {"generator": state["modules"]["model"]}
    mt.save(state, tmp_path / "other.mt")
    with pytest.raises(SystemExit, match="no state for model"):
        run(mlp, tmp_path, "--resume", str(tmp_path / "other.mt"))


def test_limit_steps_ends_the_run_early(tmp_path):
    log = run(mlp, tmp_path, "--epochs", "5", "--limit-steps", "3")
    assert [e["steps"] for e in log["epochs"]] == [3] and log["final"]["steps"] == 3


def test_tensorboard_flag_logs_steps_epochs_and_the_result(tmp_path):
    pytest.importorskip("tensorboard", reason="the tensorboard extra is not installed")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    log = run(mlp, tmp_path, "--epochs", "2", "--limit-steps", "6", "--batch-size", "500", "--tensorboard")
    acc = EventAccumulator(str(tmp_path / "out" / "tensorboard")).Reload()
    assert [e.step for e in acc.Scalars("train/loss")] == [1, 2, 3, 4, 5, 6]
    assert [e.step for e in acc.Scalars("epoch/loss")] == [1, 2]
    assert acc.Scalars("epoch/loss")[1].value == pytest.approx(log["epochs"][1]["loss"], rel=1e-6)
    assert acc.Scalars("final/test_accuracy")[0].value == pytest.approx(log["final"]["test_accuracy"], rel=1e-6)


@pytest.mark.parametrize("argv, message", [
    (["--epochs", "0"], "--epochs must be at least 1"),
    (["--batch-size", "-4"], "--batch-size must be at least 1"),
    (["--lr", "0"], "--lr must be positive"),
    (["--limit-steps", "0"], "--limit-steps must be at least 1"),
    (["--dataset", "cifar"], "invalid choice: 'cifar'"),
    (["--device", "tpu"], "invalid choice: 'tpu'"),
])
def test_bad_arguments_exit_with_a_message_naming_them(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run(mlp, tmp_path, *argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.skipif(mt.cuda.is_available(), reason="checks the message shown without a GPU")
def test_cuda_without_a_gpu_exits_with_the_reason(tmp_path):
    with pytest.raises(SystemExit, match="--device cuda: .*(CuPy|GPU|driver|numba-cuda)"):
        run(mlp, tmp_path, "--device", "cuda")


def test_auto_picks_what_is_available():
    assert common.pick_device("auto").type == ("cuda" if mt.cuda.is_available() else "cpu")


@pytest.mark.parametrize("example", [mlp, cnn], ids=["mlp", "cnn"])
def test_help_explains_every_argument(example, capsys):
    with pytest.raises(SystemExit):
        example.main(["--help"])
    text = capsys.readouterr().out
    for flag in ("--device", "--epochs", "--batch-size", "--lr", "--seed", "--dataset", "--data-dir",
                 "--limit-steps", "--out", "--resume", "--no-progress", "--amp", "--tensorboard"):
        assert flag in text
    parser = common.example_parser("doc", epochs=1, batch_size=1, lr=1.0)
    assert all(action.help for action in parser._actions), "an argument without help"


def test_mnist_falls_back_to_digits_and_says_why(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MINITENSOR_DATA", str(tmp_path / "empty"))
    monkeypatch.setattr(common.datasets.MNIST, "mirrors", ("http://127.0.0.1:9/",))  # nothing listens
    data = common.load_images("mnist", None)
    assert data.name.startswith("digits") and data.image_size == 8
    err = capsys.readouterr().err
    assert "using scikit-learn's 8x8 digits" in err and "127.0.0.1:9" in err


def test_a_corrupt_mnist_file_is_an_error_not_a_fall_back(tmp_path):
    (tmp_path / "mnist").mkdir()
    for stem in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"):
        (tmp_path / "mnist" / stem).write_bytes(b"not an idx file")
    with pytest.raises(ValueError):
        common.load_images("mnist", str(tmp_path))


def test_scalings():
    standard = common.load_images("digits", None)
    x = standard.train.tensors[0].numpy().astype(np.float64)
    assert abs(x.mean()) < 1e-5 and x.std() == pytest.approx(1, rel=1e-3)
    tanh = common.load_images("digits", None, scale="tanh").train.tensors[0].numpy()
    assert tanh.min() == -1 and tanh.max() == 1
    with pytest.raises(ValueError, match="unknown scale"):
        common.load_images("digits", None, scale="minmax")


def test_the_offline_split_when_present():
    root = common.SHARED_MNIST
    if not (root / "t10k-images-idx3-ubyte.gz").exists():
        pytest.skip(f"the official MNIST test split is not at {root}")
    data = common.load_images("mnist-test-split", str(root))
    assert (len(data.train), len(data.test), data.image_size) == (8000, 2000, 28)
    x = data.train.tensors[0].numpy()
    assert x.shape == (8000, 1, 28, 28) and x.dtype == np.float32
    assert (x.min(), x.max()) == pytest.approx(((0 - 0.1307) / 0.3081, (1 - 0.1307) / 0.3081), rel=1e-6)


def test_models_adapt_to_the_image_size():
    for size in (8, 28):
        x = mt.randn(2, 1, size, size)
        assert models.mlp(size)(x).shape == (2, 10)
        assert models.cnn(size)(x).shape == (2, 10)
        assert models.gan_discriminator(size)(x).shape == (2, 1)
        assert models.dcgan_discriminator(size)(x).shape == (2, 1)
        z = mt.randn(2, models.LATENT_DIM)
        assert models.gan_generator(size)(z).shape == (2, 1, size, size)
        assert models.dcgan_generator(size)(z).shape == (2, 1, size, size)
    assert models.cnn(28)[7].in_features == 3136  # the Linear(3136, 128)
    with pytest.raises(ValueError, match="divisible by 4"):
        models.dcgan_generator(30)
