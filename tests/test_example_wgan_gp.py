"""examples/gan.py --model wgan-gp: WGAN-GP (a critic with a gradient penalty, a second-order gradient) end to
end on the digits, its rhythm of one generator step per five critic steps, --resume, and its refusals. The
penalty's gradient itself is checked against PyTorch in tests/test_higher_order_torch.py."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import minitensor as mt

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))

import gan  # noqa: E402
import models  # noqa: E402

QUIET = ["--dataset", "digits", "--no-progress", "--model", "wgan-gp", "--batch-size", "32"]
STEPS_PER_EPOCH = 1437 // 32


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def run(out: Path, *argv: str) -> dict:
    return gan.main([*QUIET, "--out", str(out), *argv])


def test_trains_with_the_papers_settings_and_logs_the_penalty(device, tmp_path):
    log = run(tmp_path / "out", "--device", device.type, "--epochs", "1", "--limit-steps", "7")
    assert log["args"]["lr"] == gan.WGAN_LR and log["args"]["model"] == "wgan-gp"
    epoch, = log["epochs"]
    assert epoch["steps"] == 7
    assert all(np.isfinite(epoch[k]) for k in ("loss_D", "loss_G", "penalty")) and epoch["penalty"] >= 0
    state = mt.load(tmp_path / "out" / "checkpoint.mt")
    assert state["optimizers"]["opt_d"]["param_groups"][0]["betas"] == gan.WGAN_BETAS
    assert not any("running_mean" in k for k in state["modules"]["discriminator"])  # no BatchNorm in the critic


def test_the_generator_steps_after_every_fifth_critic_step():
    mt.manual_seed(0)
    generator, critic, opt_g, opt_c = gan.build_gan("wgan-gp", 8, mt.device("cpu"), gan.WGAN_LR)
    step = gan.wgan_gp_step(generator, critic, opt_g, opt_c)
    real = mt.randn(4, 1, 8, 8)
    before = [p.detach().clone() for p in generator.parameters()]
    critic_before = [p.detach().clone() for p in critic.parameters()]
    for k in range(1, 6):
        losses = step(real, None)
        moved = any(not mt.equal(a, p.detach()) for a, p in zip(before, generator.parameters()))
        assert moved == (k == 5), k
        assert set(losses) == {"loss_D", "loss_G", "penalty"}
    # every critic step moved the critic (its last bias excepted: D(fake) - D(real) does not depend on it)
    assert all(not mt.equal(a, p.detach()) for a, p in list(zip(critic_before, critic.parameters()))[:-1])


def test_the_critic_is_the_dcgan_discriminator_without_batch_norm_or_sigmoid():
    critic = models.wgan_critic(8)
    names = [type(m).__name__ for m in critic]
    assert "BatchNorm2d" not in names and "Sigmoid" not in names and names[-1] == "Linear"
    assert critic(mt.randn(3, 1, 8, 8)).shape == (3, 1)


def test_resumed_run_equals_an_uninterrupted_one(tmp_path):
    """The count of critic steps lives in the critic's Adam state, so the generator's rhythm survives."""
    budget = ["--limit-steps", str(STEPS_PER_EPOCH + 2)]
    run(tmp_path / "whole", "--epochs", "2", *budget)
    run(tmp_path / "parts", "--epochs", "1")
    run(tmp_path / "parts", "--epochs", "2", *budget, "--resume")
    whole, parts = (mt.load(tmp_path / d / "checkpoint.mt") for d in ("whole", "parts"))
    for name, state in whole["modules"].items():
        for key, value in state.items():
            np.testing.assert_array_equal(value.numpy(), parts["modules"][name][key].numpy(), err_msg=key)


def test_refusals(tmp_path, capsys):
    with pytest.raises(SystemExit):
        run(tmp_path / "out", "--amp")
    assert "--model wgan-gp does not take --amp" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run(tmp_path / "out", "--batch-size", "1")
    assert "--model wgan-gp needs --batch-size of at least 2" in capsys.readouterr().err
