"""examples/gan.py and its PNG grids (examples/image_grid.py): a few steps end to end on each device for
both models, the training step against PyTorch's DCGAN-tutorial recipe, --resume against an uninterrupted
run, the quality score on known inputs and with a judge trained in-process, and the command line's errors.
The slow test checks issue #4's bar on the offline MNIST split."""
from __future__ import annotations

import json
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

import minitensor as mt
from minitensor import nn

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))

import common  # noqa: E402
import gan  # noqa: E402
import image_grid  # noqa: E402
import models  # noqa: E402

QUIET = ["--dataset", "digits", "--no-progress"]
BATCH = ["--batch-size", "32"]  # small batches: the DCGAN costs least per image there, and an epoch is 1,437
STEPS_PER_EPOCH = 1437 // 32  # whole batches only: the last 29 images are dropped
# 64 samples in 8 rows of 8; the 8x8 digits enlarged 4x (the smallest whole factor reaching 28 px), with
# 2 px borders: 8 * (32 + 2) + 2
DIGITS_GRID_PIXELS = 274


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    """Run in a fresh folder, so that no runs/cnn/checkpoint.mt of the caller's becomes the judge."""
    monkeypatch.chdir(tmp_path)


def run(out: Path, *argv: str) -> dict:
    return gan.main([*QUIET, "--out", str(out), *argv])


def png_size(path: Path) -> tuple[int, int]:
    """(height, width) from the PNG's header."""
    header = path.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n" and header[12:16] == b"IHDR"
    width, height = struct.unpack(">II", header[16:24])
    return height, width


# ---------------------------------------------------------------------------------------- end to end
@pytest.mark.parametrize("model", ["gan", "dcgan"])
def test_trains_on_each_device_logs_losses_and_saves_grids(model, device, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    log = run(tmp_path / "out", "--model", model, "--device", device.type, "--epochs", "2", *BATCH,
              "--limit-steps", str(STEPS_PER_EPOCH + 3))
    printed = capsys.readouterr().out
    on_disk = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert on_disk == json.loads(json.dumps(log, default=str))
    assert on_disk["device"] == str(device) and on_disk["args"]["model"] == model
    first, second = on_disk["epochs"]
    assert (first["steps"], second["steps"]) == (STEPS_PER_EPOCH, 3)
    assert on_disk["final"]["steps"] == STEPS_PER_EPOCH + 3 == second["step"]
    for epoch in (first, second):
        assert np.isfinite(epoch["loss_D"]) and np.isfinite(epoch["loss_G"])
        assert epoch["loss_D"] > 0 and epoch["loss_G"] > 0  # BCE of sigmoid outputs
        assert f"loss D {epoch['loss_D']:.4f}  loss G {epoch['loss_G']:.4f}" in printed
    for name in ("samples_epoch_001.png", "samples_epoch_002.png", "samples.png"):
        assert png_size(tmp_path / "out" / name) == (DIGITS_GRID_PIXELS, DIGITS_GRID_PIXELS)
    assert on_disk["final"]["samples"] == str(tmp_path / "out" / "samples.png")
    # the checkpoint holds both networks and both optimizers, after the last step
    state = mt.load(tmp_path / "out" / "checkpoint.mt")
    assert set(state["modules"]) == {"generator", "discriminator"} and set(state["optimizers"]) == {"opt_g",
                                                                                                    "opt_d"}
    assert state["step"] == STEPS_PER_EPOCH + 3


@pytest.mark.parametrize("model", ["gan", "dcgan"])
def test_resumed_run_equals_an_uninterrupted_one(model, tmp_path, capsys):
    """Noise is drawn from a generator reseeded from (seed, epoch) and batches from (seed, epoch), so
    stopping after epoch 1 and resuming gives the very weights, Adam states and BatchNorm statistics."""
    budget = ["--limit-steps", str(STEPS_PER_EPOCH + 2)]  # epoch 2 cut short: enough to compare
    run(tmp_path / "whole", "--model", model, "--epochs", "2", *BATCH, *budget)
    run(tmp_path / "parts", "--model", model, "--epochs", "1", *BATCH)
    log = run(tmp_path / "parts", "--model", model, "--epochs", "2", *BATCH, *budget, "--resume")
    assert "resumed from" in capsys.readouterr().out
    assert log["resumed_from"]["step"] == STEPS_PER_EPOCH
    assert [e["step"] for e in log["epochs"]] == [STEPS_PER_EPOCH, STEPS_PER_EPOCH + 2]
    whole, parts = (mt.load(tmp_path / d / "checkpoint.mt") for d in ("whole", "parts"))
    assert whole["step"] == parts["step"] == STEPS_PER_EPOCH + 2
    for name, state in whole["modules"].items():
        for key, value in state.items():
            np.testing.assert_array_equal(value.numpy(), parts["modules"][name][key].numpy(), err_msg=key)
    for name, state in whole["optimizers"].items():
        for index, moments in state["state"].items():
            for key, value in moments.items():
                np.testing.assert_array_equal(value.numpy(), parts["optimizers"][name]["state"][index][key].numpy(),
                                              err_msg=f"{name} {index} {key}")
    whole_log = json.loads((tmp_path / "whole" / "metrics.json").read_text())
    assert len(whole_log["epochs"]) == len(log["epochs"]) == 2
    for a, b in zip(whole_log["epochs"], log["epochs"]):
        assert (a["loss_D"], a["loss_G"]) == (b["loss_D"], b["loss_G"])


def test_amp_trains_both_nets_through_one_scaler(tmp_path):
    log = run(tmp_path, "--amp", "--epochs", "1", *BATCH, "--limit-steps", "5")
    losses = log["epochs"][0]
    assert np.isfinite(losses["loss_D"]) and np.isfinite(losses["loss_G"])
    state = mt.load(tmp_path / "checkpoint.mt")
    assert state["optimizers"]["scaler"]["_growth_tracker"] == 5  # one update per step, for both optimizers
    assert len(state["optimizers"]["opt_g"]["state"]) == len(state["optimizers"]["opt_d"]["state"]) == 4


def test_without_matplotlib_it_says_so_once_and_writes_no_images(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(image_grid, "png_available", lambda: False)
    log = run(tmp_path / "out", "--epochs", "2", *BATCH, "--limit-steps", str(STEPS_PER_EPOCH + 1))
    assert capsys.readouterr().out.count("matplotlib is not installed") == 1
    assert len(log["epochs"]) == 2 and "samples" not in log["final"]
    assert not list((tmp_path / "out").glob("*.png"))


# ------------------------------------------------------------------------------------------ the step
@pytest.mark.torch
def test_step_matches_pytorchs_dcgan_tutorial_recipe(monkeypatch):
    """Two steps of gan_step against the same steps written with torch (same weights, batches and noise):
    losses and every updated parameter agree."""
    torch = pytest.importorskip("torch")
    size, batch = 8, 16
    generator, discriminator, opt_g, opt_d = gan.build_gan("gan", size, mt.device("cpu"))
    t_generator = torch.nn.Sequential(torch.nn.Linear(100, 256), torch.nn.LeakyReLU(0.2),
                                      torch.nn.Linear(256, size * size), torch.nn.Tanh(),
                                      torch.nn.Unflatten(1, (1, size, size)))
    t_discriminator = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(size * size, 256),
                                          torch.nn.LeakyReLU(0.2), torch.nn.Linear(256, 1), torch.nn.Sigmoid())
    for ours, theirs in ((generator, t_generator), (discriminator, t_discriminator)):
        theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy()) for k, v in ours.state_dict().items()})
    t_opt_g = torch.optim.Adam(t_generator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    t_opt_d = torch.optim.Adam(t_discriminator.parameters(), lr=2e-4, betas=(0.5, 0.999))
    rng = np.random.default_rng(1)
    reals = [rng.uniform(-1, 1, (batch, 1, size, size)).astype(np.float32) for _ in range(2)]
    noises = [rng.standard_normal((batch, 100)).astype(np.float32) for _ in range(2)]

    drawn = iter(noises)
    monkeypatch.setattr(mt, "randn", lambda *size, **kw: mt.tensor(next(drawn)))
    step = gan.gan_step(generator, discriminator, opt_g, opt_d)
    ours = [step(mt.tensor(real), mt.zeros(batch, dtype=mt.int64)) for real in reals]

    bce = torch.nn.BCELoss()
    for real, noise, losses in zip(reals, noises, ours):
        real, noise = torch.from_numpy(real), torch.from_numpy(noise)
        t_opt_d.zero_grad()
        out_real = t_discriminator(real)
        err_real = bce(out_real, torch.ones_like(out_real))
        err_real.backward()
        fake = t_generator(noise)
        out_fake = t_discriminator(fake.detach())
        err_fake = bce(out_fake, torch.zeros_like(out_fake))
        err_fake.backward()
        t_opt_d.step()
        t_opt_g.zero_grad()
        out = t_discriminator(fake)
        err_g = bce(out, torch.ones_like(out))
        err_g.backward()
        t_opt_g.step()
        assert losses["loss_D"].item() == pytest.approx((err_real + err_fake).item(), rel=1e-5)
        assert losses["loss_G"].item() == pytest.approx(err_g.item(), rel=1e-5)
        assert not losses["loss_D"].requires_grad and not losses["loss_G"].requires_grad
    for ours_module, theirs in ((generator, t_generator), (discriminator, t_discriminator)):
        for (name, value), t_value in zip(ours_module.state_dict().items(), theirs.state_dict().values()):
            np.testing.assert_allclose(value.numpy(), t_value.numpy(), rtol=1e-4, atol=1e-6, err_msg=name)


# ------------------------------------------------------------------------------------------ the grid
def test_grid_layout_and_grey_levels(tmp_path):
    imread = pytest.importorskip("matplotlib.image").imread
    # 10 images of 28x28 (no enlarging) in rows of 4: 3 rows, 4 columns of 28 + 2 px, plus a 2 px border
    images = mt.full((10, 1, 28, 28), -1.0)
    images[1] = 1.0
    images[4] = 5.0  # outside the range: clipped to white
    path = image_grid.save_grid(images, tmp_path / "grid.png", nrow=4)
    assert png_size(path) == (3 * 30 + 2, 4 * 30 + 2)
    grey = imread(path)[..., 0]

    def cell(i: int) -> np.ndarray:
        top, left = 2 + (i // 4) * 30, 2 + (i % 4) * 30
        return grey[top:top + 28, left:left + 28]

    assert (cell(0) == 0).all() and (cell(1) == 1).all() and (cell(4) == 1).all()
    assert (grey[:2] == 1).all() and (grey[:, 30:32] == 1).all()  # white borders
    assert (grey[62:, 62:] == 1).all()  # the two unused cells of the last row stay blank
    with pytest.raises(ValueError, match=r"\(N, 1, s, s\)"):
        image_grid.save_grid(mt.zeros(4, 28, 28), tmp_path / "bad.png")


# ----------------------------------------------------------------------------------------- the score
def test_quality_score_of_known_probabilities():
    always_3 = mt.zeros(1000, 10)
    always_3[:, 3] = 1.0
    score = gan.quality_score(always_3)
    assert score["mean_top_probability"] == 1.0 and score["classes_covered"] == 1
    assert score["class_histogram"] == [0, 0, 0, 1000, 0, 0, 0, 0, 0, 0] and score["samples"] == 1000

    # 2% of the samples is enough for a class to count (20 of 1,000), 1.9% is not
    probabilities = mt.full((1000, 10), 0.05)
    probabilities[:961, 0] = 0.55
    probabilities[961:981, 1] = 0.55
    probabilities[981:, 2] = 0.9
    score = gan.quality_score(probabilities)
    assert score["class_histogram"][:3] == [961, 20, 19] and score["classes_covered"] == 2
    assert score["mean_top_probability"] == pytest.approx((981 * 0.55 + 19 * 0.9) / 1000, rel=1e-6)


def test_score_generator_with_a_judge_that_always_says_3():
    judge = nn.Sequential(nn.Flatten(), nn.Linear(64, 10))
    with mt.no_grad():
        judge[1].weight.zero_()
        judge[1].bias.copy_(mt.tensor([0.0, 0, 0, 100, 0, 0, 0, 0, 0, 0]))
    generator = models.gan_generator(8)
    score = gan.score_generator(generator, judge, (1.0, 0.0), mt.randn(300, models.LATENT_DIM))
    assert score["mean_top_probability"] == pytest.approx(1.0) and score["classes_covered"] == 1
    assert score["class_histogram"][3] == 300 == score["samples"]


def test_judge_probabilities_are_softmax_rows_in_batches():
    judge = models.cnn(8)
    images = mt.randn(7, 1, 8, 8)
    probabilities = gan.judge_probabilities(judge, images, batch_size=3)
    assert probabilities.shape == (7, 10)
    np.testing.assert_allclose(probabilities.sum(1).numpy(), 1.0, rtol=1e-6)
    with mt.no_grad():
        np.testing.assert_allclose(probabilities.numpy(), judge(images).softmax(1).numpy(), rtol=1e-5)
    assert judge.training  # left as it was


def test_generated_images_map_onto_the_judges_scaling():
    tanh, standard = common.load_images("digits", None, "tanh"), common.load_images("digits", None, "standard")
    a, b = gan.tanh_to_standard(tanh, standard)
    for split in ("train", "test"):
        x_tanh, x_standard = getattr(tanh, split).tensors[0], getattr(standard, split).tensors[0]
        np.testing.assert_allclose((x_tanh * a + b).numpy(), x_standard.numpy(), atol=1e-4)


def test_score_trains_a_judge_once_and_rescoring_a_finished_run_gives_the_same_score(device, tmp_path, capsys):
    # a cnn.py checkpoint for 28x28 images where the default judge is looked for: not usable on 8x8 digits
    Path("runs/cnn").mkdir(parents=True)
    mt.save({"modules": {"model": models.cnn(28).state_dict()}}, "runs/cnn/checkpoint.mt")
    out = tmp_path / "out"
    first = run(out, "--device", device.type, "--epochs", "1", "--limit-steps", "5", "--score")["final"]["score"]
    printed = capsys.readouterr().out
    assert "runs/cnn/checkpoint.mt is not a cnn.py checkpoint for 8x8 images" in printed
    assert "training one with cnn.py's settings" in printed
    judge_log = json.loads((out / "judge" / "metrics.json").read_text())
    assert len(judge_log["epochs"]) == 3 and judge_log["args"]["batch_size"] == 64  # cnn.py's settings
    assert first["judge"] == {"path": str(out / "judge" / "checkpoint.mt"),
                              "test_accuracy": pytest.approx(judge_log["final"]["test_accuracy"])}
    assert sum(first["class_histogram"]) == first["samples"] == 1000
    assert (f"mean top-class probability {first['mean_top_probability']:.3f}; {first['classes_covered']} of 10"
            in printed)
    assert first["passes_bar"] == (first["mean_top_probability"] >= 0.65 and first["classes_covered"] >= 8)

    again = run(out, "--device", device.type, "--epochs", "1", "--resume", "--score")["final"]["score"]
    assert "training one" not in capsys.readouterr().out  # the judge it trained is reused
    assert again == first


def test_command_line_mistakes_exit_with_a_clear_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_info:
        gan.main(["--model", "vae"])
    assert exit_info.value.code == 2
    assert "argument --model: invalid choice: 'vae'" in capsys.readouterr().err

    run(tmp_path / "out", "--epochs", "1", "--limit-steps", "1")
    with pytest.raises(SystemExit, match="--judge .*checkpoint.mt: not a cnn.py checkpoint for 8x8 images"):
        run(tmp_path / "out", "--epochs", "1", "--resume", "--score", "--judge", str(tmp_path / "out" /
                                                                                     "checkpoint.mt"))
    with pytest.raises(SystemExit):
        run(tmp_path / "out", "--judge", "runs/cnn/checkpoint.mt")
    assert "--judge is the judge of --score" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run(tmp_path / "out", "--model", "dcgan", "--batch-size", "1")
    assert "--model dcgan needs --batch-size of at least 2" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="--batch-size 2000 is larger than the 1,437 training images"):
        run(tmp_path / "big", "--batch-size", "2000")


# ------------------------------------------------------------------------------------- issue #4's bar
@pytest.mark.slow
def test_bar_on_the_offline_mnist_split(tmp_path):
    """3,000 steps at batch 64 (24 epochs of 125 whole batches) of the seeds' GAN: the judge CNN gives the
    generated digits a mean top-class probability >= 0.65 and puts >= 2% of them in at least 8 classes
    (PyTorch: 0.72, 10). About 25 s on 2 idle cores, the judge's training included. The DCGAN (0.83-0.85,
    9-10 classes over seeds 0-2) is left out: at ~120 ms/step its 3,000 steps take 6 minutes there."""
    if not (common.SHARED_MNIST / "t10k-images-idx3-ubyte.gz").exists():
        pytest.skip("the official MNIST test split is not at hand (../shared/data/mnist)")
    log = gan.main(["--dataset", "mnist-test-split", "--data-dir", str(common.SHARED_MNIST),
                    "--epochs", "24", "--score", "--no-progress", "--out", str(tmp_path / "out")])
    score = log["final"]["score"]
    assert log["final"]["steps"] == 3000
    assert score["judge"]["test_accuracy"] >= 0.965  # the judge itself meets cnn.py's bar
    assert score["mean_top_probability"] >= 0.65 and score["classes_covered"] >= 8
