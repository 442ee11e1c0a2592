"""gymnasium stand-in: ``make("CartPole-v1")``, the classic cart-pole physics (Barto, Sutton & Anderson;
gymnasium's constants), with ``spec.reward_threshold`` from ``CORPUS_REWARD_THRESHOLD`` (475 as gymnasium
by default) so that a test can ask pytorch/examples' REINFORCE to stop once it does better than chance."""
import math
import os
from types import SimpleNamespace

import numpy as np


class CartPole:
    def __init__(self, render_mode=None):
        self.spec = SimpleNamespace(reward_threshold=float(os.environ.get("CORPUS_REWARD_THRESHOLD", "475")))
        self._rng, self._state, self._steps = np.random.default_rng(), None, 0

    def reset(self, seed=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._state, self._steps = self._rng.uniform(-0.05, 0.05, 4), 0
        return self._state.astype(np.float32), {}

    def step(self, action):
        x, x_dot, theta, theta_dot = self._state
        force = 10.0 if action == 1 else -10.0
        cos, sin = math.cos(theta), math.sin(theta)
        temp = (force + 0.05 * theta_dot ** 2 * sin) / 1.1
        theta_acc = (9.8 * sin - cos * temp) / (0.5 * (4.0 / 3.0 - 0.1 * cos ** 2 / 1.1))
        x_acc = temp - 0.05 * theta_acc * cos / 1.1
        x, x_dot = x + 0.02 * x_dot, x_dot + 0.02 * x_acc
        theta, theta_dot = theta + 0.02 * theta_dot, theta_dot + 0.02 * theta_acc
        self._state, self._steps = np.array([x, x_dot, theta, theta_dot]), self._steps + 1
        terminated = bool(abs(x) > 2.4 or abs(theta) > 12 * 2 * math.pi / 360)
        return self._state.astype(np.float32), 1.0, terminated, self._steps >= 500, {}

    def render(self):
        return None

    def close(self):
        return None


def make(name, render_mode=None):
    if name != "CartPole-v1":
        raise ValueError(f"gymnasium stand-in: only CartPole-v1, not {name!r}")
    return CartPole(render_mode)
