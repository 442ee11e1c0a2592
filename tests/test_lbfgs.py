"""``optim.LBFGS``: its iterates against a dense-matrix BFGS reference, the line search's pieces against
known values, convergence on Rosenbrock and on least squares (with and without strong Wolfe), the state
dict, and PyTorch's iterates where PyTorch is installed.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_optim import snapshot

import minitensor as mt
from minitensor import optim
from minitensor.optim.lbfgs import _cubic_interpolate, _strong_wolfe


def rosenbrock(x: mt.Tensor) -> mt.Tensor:
    return ((1 - x[:-1]) ** 2).sum() + 100 * ((x[1:] - x[:-1] ** 2) ** 2).sum()


def make_closure(opt: optim.Optimizer, loss_fn, counter: list[int] | None = None):
    def closure():
        if counter is not None:
            counter[0] += 1
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss
    return closure


# ----------------------------------------------------------------------------- dense reference
def dense_lbfgs(x0, A, b, lr, n_iter, history_size):
    """L-BFGS without line search on f(x) = x'Ax/2 - b'x, the direction computed as -H g with H the dense
    matrix of BFGS updates H <- (I - r s y') H (I - r y s') + r s s' (r = 1 / y's) applied to
    H0 = (y's / y'y) I for the last ``history_size`` pairs: the same maths as the two-loop recursion,
    computed another way. Steps: min(1, 1 / |g|_1) lr first, then lr."""
    x = x0.astype(np.float64)
    pairs, out, h_diag, s, y = [], [], 1.0, None, None
    g = A @ x - b
    for k in range(n_iter):
        if s is not None and y @ s > 1e-10:
            pairs = (pairs + [(s, y)])[-history_size:]
            h_diag = (y @ s) / (y @ y)
        H = h_diag * np.eye(len(x))
        for s_i, y_i in pairs:
            r = 1.0 / (y_i @ s_i)
            V = np.eye(len(x)) - r * np.outer(y_i, s_i)
            H = V.T @ H @ V + r * np.outer(s_i, s_i)
        d = -H @ g
        t = min(1.0, 1.0 / np.abs(g).sum()) * lr if k == 0 else lr
        x = x + t * d
        g_new = A @ x - b
        s, y, g = t * d, g_new - g, g_new
        out.append(x)
    return out


@pytest.mark.parametrize("history_size", [100, 2])
def test_iterates_match_dense_bfgs_on_a_quadratic(history_size):
    rng = np.random.default_rng(0)
    M = rng.standard_normal((6, 6))
    A, b = M @ M.T / 6 + 0.5 * np.eye(6), rng.standard_normal(6)
    x0 = rng.standard_normal(6)
    x = mt.tensor(x0, requires_grad=True)
    A_t, b_t = mt.tensor(A), mt.tensor(b)
    # one iteration per step() call, so that each iterate can be read (the state carries over between calls)
    opt = optim.LBFGS([x], lr=0.5, max_iter=1, history_size=history_size, tolerance_change=0, tolerance_grad=0)
    closure = make_closure(opt, lambda: 0.5 * (x @ (A_t @ x)) - b_t @ x)
    got = []
    for _ in range(8):
        opt.step(closure)
        got.append(x.array.copy())
    for k, (g, r) in enumerate(zip(got, dense_lbfgs(x0, A, b, 0.5, 8, history_size)), start=1):
        np.testing.assert_allclose(g, r, rtol=1e-10, atol=1e-12, err_msg=f"iteration {k}")
    assert len(opt.state[x]["old_dirs"]) == min(history_size, 7)


# ---------------------------------------------------------------------------------- line search
def test_cubic_interpolate_finds_the_minimum_of_a_cubic():
    f = lambda z: z ** 3 - 3 * z  # noqa: E731  (minimum at z = 1)
    df = lambda z: 3 * z ** 2 - 3  # noqa: E731
    assert _cubic_interpolate(0.0, f(0.0), df(0.0), 2.0, f(2.0), df(2.0)) == pytest.approx(1.0, abs=1e-12)
    assert _cubic_interpolate(2.0, f(2.0), df(2.0), 0.0, f(0.0), df(0.0)) == pytest.approx(1.0, abs=1e-12)
    assert _cubic_interpolate(0.0, f(0.0), df(0.0), 2.0, f(2.0), df(2.0), bounds=(1.5, 3.0)) == 1.5  # clipped
    # no real minimiser (d1^2 < g1 g2): the middle of the bounds
    assert _cubic_interpolate(0.0, 0.0, 3.0, 1.0, 2.0, 3.0, bounds=(0.0, 4.0)) == 2.0


@pytest.mark.parametrize("t0", [1e-3, 1.0, 50.0])
def test_strong_wolfe_returns_a_step_satisfying_both_conditions(t0):
    x0 = np.array([-1.2, 1.0])

    def f_and_g(x):
        f = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        g = np.array([-2 * (1 - x[0]) - 400 * x[0] * (x[1] - x[0] ** 2), 200 * (x[1] - x[0] ** 2)])
        return f, g

    def obj_func(x, t, d):
        return f_and_g(x[0] + t * d)

    f0, g0 = f_and_g(x0)
    d = -g0
    gtd = g0 @ d
    f_new, g_new, t, evals = _strong_wolfe(np, obj_func, [x0], t0, d, f0, g0, gtd)
    f_t, g_t = f_and_g(x0 + t * d)
    assert f_new == f_t and np.array_equal(g_new, g_t) and 1 <= evals <= 25
    assert f_t <= f0 + 1e-4 * t * gtd  # sufficient decrease
    assert abs(g_t @ d) <= -0.9 * gtd  # curvature


# ---------------------------------------------------------------------------------- convergence
@pytest.mark.parametrize("line_search_fn,lr,steps", [("strong_wolfe", 1.0, 3), (None, 0.2, 30)])
def test_minimises_rosenbrock(line_search_fn, lr, steps):
    x = mt.tensor([-1.2, 1.0], dtype=mt.float64, requires_grad=True)  # the classic start
    opt = optim.LBFGS([x], lr=lr, max_iter=100, line_search_fn=line_search_fn, tolerance_grad=1e-12,
                      tolerance_change=1e-15)
    calls = [0]
    closure = make_closure(opt, lambda: rosenbrock(x), calls)
    first = opt.step(closure)
    assert isinstance(first, mt.Tensor) and first.item() == pytest.approx(rosenbrock(
        mt.tensor([-1.2, 1.0], dtype=mt.float64)).item())
    assert calls[0] == opt.state[x]["func_evals"] <= 125  # max_eval = max_iter * 5 // 4
    for _ in range(steps - 1):
        opt.step(closure)
    np.testing.assert_allclose(x.array, np.ones(2), atol=1e-6)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_fits_a_least_squares_regression(device, line_search_fn):
    rng = np.random.default_rng(1)
    X = rng.standard_normal((200, 5))
    y = X @ rng.standard_normal((5, 1)) + 0.3 + 0.1 * rng.standard_normal((200, 1))
    mt.manual_seed(0)
    model = mt.nn.Linear(5, 1).to(device)
    inputs, targets = mt.tensor(X, dtype=mt.float32, device=device), mt.tensor(y, dtype=mt.float32, device=device)
    opt = optim.LBFGS(model.parameters(), lr=1.0, history_size=10, max_iter=50, line_search_fn=line_search_fn)
    closure = make_closure(opt, lambda: mt.nn.functional.mse_loss(model(inputs), targets))
    for _ in range(3):
        opt.step(closure)
    solution, *_ = np.linalg.lstsq(np.hstack([X, np.ones((200, 1))]), y, rcond=None)
    fitted = np.concatenate([model.weight.detach().cpu().numpy().ravel(), model.bias.detach().cpu().numpy()])
    np.testing.assert_allclose(fitted, solution.ravel(), atol=2e-4)
    assert model.weight.dtype == mt.float32 and model.weight.device == mt.device(device)


def test_stops_at_once_when_the_gradient_is_already_zero():
    x = mt.tensor([1.0, 1.0], dtype=mt.float64, requires_grad=True)
    opt = optim.LBFGS([x])
    calls = [0]
    opt.step(make_closure(opt, lambda: rosenbrock(x), calls))
    assert calls[0] == 1 and opt.state[x]["n_iter"] == 0
    np.testing.assert_array_equal(x.array, [1.0, 1.0])


def test_max_iter_and_max_eval_bound_the_work():
    x = mt.tensor([-1.5, 2.0], dtype=mt.float64, requires_grad=True)
    opt = optim.LBFGS([x], max_iter=5, line_search_fn="strong_wolfe")
    calls = [0]
    opt.step(make_closure(opt, lambda: rosenbrock(x), calls))
    assert opt.state[x]["n_iter"] <= 5 and calls[0] <= 6  # max_eval = 6
    y = mt.tensor([-1.5, 2.0], dtype=mt.float64, requires_grad=True)
    plain = optim.LBFGS([y], lr=0.01, max_iter=7)
    calls = [0]
    plain.step(make_closure(plain, lambda: rosenbrock(y), calls))
    assert plain.state[y]["n_iter"] == 7 and calls[0] == 7  # no re-evaluation after the last iteration


def test_errors():
    a, b = mt.zeros(2, requires_grad=True), mt.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        optim.LBFGS([{"params": [a]}, {"params": [b]}])
    opt = optim.LBFGS([a])
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        opt.add_param_group({"params": [b]})
    bad = optim.LBFGS([a], line_search_fn="backtracking")
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        bad.step(make_closure(bad, lambda: ((a - 1) ** 2).sum()))
    with pytest.raises(TypeError):
        opt.step()  # the closure is required


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_state_dict_round_trip_continues_the_iterates(line_search_fn):
    x0 = np.array([-1.5, 2.0, 0.5])
    kw = dict(lr=0.5 if line_search_fn is None else 1.0, max_iter=4, history_size=3,
              line_search_fn=line_search_fn)
    x = mt.tensor(x0, requires_grad=True)
    full = optim.LBFGS([x], **kw)
    for _ in range(3):
        full.step(make_closure(full, lambda: rosenbrock(x)))
    y = mt.tensor(x0, requires_grad=True)
    first = optim.LBFGS([y], **kw)
    first.step(make_closure(first, lambda: rosenbrock(y)))
    saved = snapshot(first.state_dict())
    assert {"func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad",
            "prev_loss"} <= set(saved["state"][0])
    # PyTorch holds some scalars as 0-d tensors (t, H_diag, ro, al): such a state dict loads as floats
    entry = saved["state"][0]
    entry["H_diag"] = mt.from_numpy(np.array(entry["H_diag"]))
    entry["ro"] = [mt.from_numpy(np.array(r)) for r in entry["ro"]]
    z = mt.tensor(y.array.copy(), requires_grad=True)
    second = optim.LBFGS([z], lr=123.0)
    second.load_state_dict(saved)
    assert isinstance(second.state[z]["H_diag"], float) and all(isinstance(r, float) for r in second.state[z]["ro"])
    assert second.param_groups[0]["lr"] == kw["lr"]
    for _ in range(2):
        second.step(make_closure(second, lambda: rosenbrock(z)))
    np.testing.assert_array_equal(z.array, x.array)
    assert second.state[z]["n_iter"] == full.state[x]["n_iter"]


def test_several_parameters_of_several_shapes_share_one_flat_vector():
    rng = np.random.default_rng(2)
    targets = [rng.standard_normal(s) for s in [(2, 3), (4,), ()]]
    params = [mt.zeros(t.shape, dtype=mt.float64, requires_grad=True) for t in targets]
    opt = optim.LBFGS(params, line_search_fn="strong_wolfe")
    weighted = [(p, mt.tensor(t), i + 1) for i, (p, t) in enumerate(zip(params, targets))]
    opt.step(make_closure(opt, lambda: sum(((p - t) ** 2).sum() * w for p, t, w in weighted)))
    for p, t in zip(params, targets):
        np.testing.assert_allclose(p.array, t, atol=1e-5)


# ------------------------------------------------------------------------------------- PyTorch
@pytest.mark.torch
@pytest.mark.parametrize("line_search_fn,lr", [(None, 0.1), ("strong_wolfe", 1.0)])
def test_iterates_match_pytorch(line_search_fn, lr):
    torch = pytest.importorskip("torch")
    x0 = np.array([-1.5, 2.0, 0.5, -0.5])
    x = mt.tensor(x0, requires_grad=True)
    tx = torch.tensor(x0, requires_grad=True)
    opt = optim.LBFGS([x], lr=lr, max_iter=5, history_size=4, line_search_fn=line_search_fn)
    topt = torch.optim.LBFGS([tx], lr=lr, max_iter=5, history_size=4, line_search_fn=line_search_fn)

    def tclosure():
        topt.zero_grad()
        loss = ((1 - tx[:-1]) ** 2).sum() + 100 * ((tx[1:] - tx[:-1] ** 2) ** 2).sum()
        loss.backward()
        return loss

    closure = make_closure(opt, lambda: rosenbrock(x))
    for step in range(6):
        assert opt.step(closure).item() == pytest.approx(topt.step(tclosure).item(), rel=1e-10)
        np.testing.assert_allclose(x.array, tx.detach().numpy(), rtol=1e-9, atol=1e-12, err_msg=f"step {step}")
    assert opt.state[x]["func_evals"] == topt.state[tx]["func_evals"]


def test_a_program_written_for_pytorch_runs_with_the_import_changed():
    """The shape of PyTorch's regression / time-sequence examples: accelerator pick, cudnn flag, LBFGS with
    strong Wolfe and a closure, a loss read from the closure."""
    import minitensor as torch
    from minitensor import nn, optim

    saved_benchmark = torch.backends.cudnn.benchmark
    try:
        torch.backends.cudnn.benchmark = True
        device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available() else "cpu"
        torch.manual_seed(0)
        x = torch.linspace(-1, 1, 64).unsqueeze(1).to(device)
        y = 3 * x ** 2 - 2 * x + 0.5
        model = nn.Sequential(nn.Linear(1, 16), nn.Tanh(), nn.Linear(16, 1)).to(device)
        criterion = nn.MSELoss()
        optimizer = optim.LBFGS(model.parameters(), lr=1, line_search_fn="strong_wolfe")
        losses = []
        for _ in range(10):
            def closure():
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                return loss
            losses.append(optimizer.step(closure).item())
        assert losses[-1] < 1e-4 < losses[0]
    finally:
        torch.backends.cudnn.benchmark = saved_benchmark
