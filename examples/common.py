"""What the examples share: their command line, the data (with the offline fall-back), the device, and a
``Run`` that drives epochs with a progress bar, timings, a JSON log and checkpoints that can be resumed.

Nothing here imports NumPy or CuPy for the models: the device is one argument, so the same scripts train
on ``cpu`` and ``cuda``.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import ddp_setup
import minitensor as mt
from minitensor import datasets, nn, optim
from minitensor.datasets.download import DownloadError
from minitensor.utils.data import DataLoader, TensorDataset
from profiling import StepProfiler
from tensorboard_log import TensorBoardLog

try:
    from tqdm.auto import tqdm
except ImportError:  # the bar is a nicety: without the examples extra, epochs still print their line
    tqdm = None

DATASETS = ("mnist", "digits", "mnist-test-split")
MNIST_MEAN, MNIST_STD = 0.1307, 0.3081  # the usual normalisation of MNIST pixels in [0, 1]
SHARED_MNIST = Path(__file__).resolve().parents[2] / "shared" / "data" / "mnist"  # this project's machines
POSTFIX_EVERY = 20  # steps between progress-bar loss updates: each reads the loss back (a sync on a GPU)

StepFn = Callable[[mt.Tensor, mt.Tensor], dict[str, mt.Tensor]]


# ----------------------------------------------------------------------------------------- command line
def example_parser(doc: str, *, epochs: int, batch_size: int, lr: float) -> argparse.ArgumentParser:
    """The arguments every example takes, with the example's own defaults."""
    p = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--device", default="auto", choices=("cpu", "cuda", "auto"),
                   help="where to train; auto picks cuda when a GPU and CuPy are present (default: auto)")
    p.add_argument("--epochs", type=int, default=epochs, help=f"passes over the training set (default: {epochs})")
    p.add_argument("--batch-size", type=int, default=batch_size, help=f"samples per step (default: {batch_size})")
    p.add_argument("--lr", type=float, default=lr, help=f"Adam's learning rate (default: {lr:g})")
    add_data_arguments(p, seed_help="seeds weights, shuffling and noise (default: 0)")
    p.add_argument("--limit-steps", type=int, default=None, metavar="N",
                   help="stop after N training steps in all (a quick run; the last epoch is cut short)")
    p.add_argument("--out", default=None, metavar="DIR",
                   help="folder for the JSON log, the checkpoint and images (default: runs/<example>)")
    p.add_argument("--resume", nargs="?", const="", default=None, metavar="CHECKPOINT",
                   help="continue from a checkpoint (default path: <out>/checkpoint.mt) after its last epoch")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (one line per epoch only)")
    p.add_argument("--tensorboard", nargs="?", const="", default=None, metavar="DIR",
                   help="log losses per step and metrics per epoch for TensorBoard (default DIR: <out>/tensorboard; "
                        "needs the tensorboard extra)")
    p.add_argument("--step-losses", action="store_true",
                   help="also log every step's losses (metrics.json's step_losses), read back once per epoch: "
                        "what benchmarks/gpu_examples.py compares between devices")
    p.add_argument("--amp", action="store_true",
                   help="mixed precision: autocast in the device's 16-bit dtype (bfloat16 on the CPU, float16 on "
                        "CUDA) with a GradScaler (docs/amp.md)")
    p.add_argument("--profile", nargs="?", type=int, const=5, default=None, metavar="STEPS",
                   help="profile STEPS training steps (default 5) after 3 warm-up steps: print the top-15 ops and "
                        "write profile.txt, trace.json and profile.png into --out (docs/profiling.md)")
    return p


def add_data_arguments(p: argparse.ArgumentParser, seed_help: str) -> None:
    """--seed, --dataset and --data-dir: the arguments of every script that trains on the examples' data."""
    p.add_argument("--seed", type=int, default=0, help=seed_help)
    p.add_argument("--dataset", default="mnist", choices=DATASETS,
                   help="mnist: the full MNIST, found in --data-dir / $MINITENSOR_DATA / ~/.cache/minitensor or "
                        "downloaded (md5-checked); digits: scikit-learn's 8x8 digits, no network needed; "
                        "mnist-test-split: 8,000 images of MNIST's official test split to train on and the other "
                        "2,000 to test (fixed permutation, seed 0). When MNIST can be neither found nor downloaded, "
                        "the example says so and uses digits (default: mnist)")
    p.add_argument("--data-dir", default=None, help="folder holding the MNIST IDX files (.gz or not)")


def check_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse values that would fail later with a less clear message."""
    for name in ("epochs", "batch_size"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    for name in ("limit_steps", "profile"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1, got {getattr(args, name)}")
    if not args.lr > 0:
        parser.error(f"--lr must be positive, got {args.lr}")


def pick_device(name: str) -> mt.device:
    """``auto`` -> cuda when available, else cpu; ``cuda`` without a usable GPU exits with the reason."""
    if name == "auto":
        return mt.device("cuda" if mt.cuda.is_available() else "cpu")
    device = mt.device(name)
    try:
        mt.zeros(1, device=device)
    except RuntimeError as e:
        raise SystemExit(f"--device {name}: {e}") from None
    return device


def synchronize(device: mt.device) -> None:
    """Wait for the device's queued work, so that host clocks time it (a no-op on the CPU)."""
    if device.type == "cuda":
        mt.cuda.synchronize()


# ----------------------------------------------------------------------------------------------- data
@dataclass
class ImageData:
    """Train and test images (N, 1, s, s) float32 with int64 labels, and where they came from: ``dataset``
    is the one used (``digits`` after a fall-back), ``name`` describes it."""
    dataset: str
    name: str
    train: TensorDataset
    test: TensorDataset
    image_size: int


def load_images(dataset: str, data_dir: str | None, scale: str = "standard") -> ImageData:
    """The examples' data. ``scale``: "standard" (zero mean, unit variance: MNIST's usual constants, the
    digits' own training statistics) or "tanh" (pixels mapped to [-1, 1], a GAN generator's range).

    ``mnist`` and ``mnist-test-split`` fall back to ``digits``, saying why, when the files are neither
    present nor downloadable."""
    if dataset not in DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; choose one of {', '.join(DATASETS)}")
    if dataset != "digits":
        try:
            train, test = _mnist(dataset, data_dir)
        except (FileNotFoundError, DownloadError, OSError) as e:
            reason = str(e).replace("\n", "\n    ")
            print(f"{dataset}: not found and could not be downloaded, so using scikit-learn's 8x8 digits "
                  f"instead. The reason:\n    {reason}", file=sys.stderr)
            dataset = "digits"
        else:
            name = "MNIST" if dataset == "mnist" else "MNIST test split (8,000 train / 2,000 test)"
            return _scaled(dataset, name, train, test, scale, (MNIST_MEAN, MNIST_STD))
    train, test = datasets.Digits(train=True), datasets.Digits(train=False)
    return _scaled("digits", "digits (8x8, 1,437 train / 360 test)", train, test, scale, None)


def _mnist(dataset: str, data_dir: str | None) -> tuple[datasets.MNIST, datasets.MNIST]:
    if dataset == "mnist":
        return (datasets.MNIST(data_dir, train=True, download=True),
                datasets.MNIST(data_dir, train=False, download=True))
    roots = [data_dir] if data_dir else [None, SHARED_MNIST]  # None: $MINITENSOR_DATA or the cache
    for i, root in enumerate(roots):
        try:
            return (datasets.mnist_test_split(root, train=True, download=i == len(roots) - 1),
                    datasets.mnist_test_split(root, train=False))
        except FileNotFoundError:
            if i == len(roots) - 1:
                raise
    raise AssertionError("unreachable")


def _scaled(dataset: str, name: str, train: datasets.MNIST, test: datasets.MNIST, scale: str,
            mean_std: tuple[float, float] | None) -> ImageData:
    (x_train, y_train), (x_test, y_test) = train.tensors(), test.tensors()
    if scale == "tanh":
        mean, std = 0.5, 0.5
    elif scale == "standard":
        mean, std = mean_std if mean_std else (x_train.mean().item(), x_train.std().item())
    else:
        raise ValueError(f"unknown scale {scale!r}; choose 'standard' or 'tanh'")
    normalise = lambda x: (x - mean) / std  # noqa: E731
    return ImageData(dataset, name, TensorDataset(normalise(x_train), y_train),
                     TensorDataset(normalise(x_test), y_test), x_train.shape[-1])


# ------------------------------------------------------------------------------------------------ a run
class Run:
    """One training run of an example: the device, the output folder, epochs and the step budget, the
    progress bar, the JSON log (``<out>/metrics.json``) and the checkpoint (``<out>/checkpoint.mt``).

    ``modules`` and ``optimizers`` (by name) are what a checkpoint holds; with ``--resume`` their states
    are loaded here and training goes on after the checkpoint's last epoch.
    """

    def __init__(self, example: str, args: argparse.Namespace, data: ImageData, device: mt.device,
                 modules: dict[str, nn.Module], optimizers: dict[str, optim.Optimizer]) -> None:
        self.args, self.data, self.device = args, data, device
        self.modules, self.optimizers = modules, optimizers
        self.out = Path(args.out or Path("runs") / example)
        self.out.mkdir(parents=True, exist_ok=True)
        self.rank0 = ddp_setup.rank() == 0  # with --distributed only rank 0 prints, logs and saves
        self.step = 0
        self.first_epoch = 1
        self.log: dict[str, Any] = {
            "example": example, "args": vars(args), "device": str(device), "dataset": data.name,
            "parameters": {k: sum(p.numel() for p in m.parameters()) for k, m in modules.items()},
            "epochs": [],
        }
        if args.resume is not None:
            self._resume(Path(args.resume) if args.resume else self.checkpoint_path)
        # with --distributed only rank 0 profiles (its files would collide with the others')
        self.profiler = StepProfiler(args.profile, self.out, device, example) if args.profile and self.rank0 else None
        self.tensorboard = (TensorBoardLog(Path(args.tensorboard or self.out / "tensorboard"))
                            if args.tensorboard is not None and self.rank0 else None)
        params = ", ".join(f"{k} {v:,}" for k, v in self.log["parameters"].items())
        self.print(f"{example}: {data.name} on {device}; parameters: {params}; outputs in {self.out}")

    def print(self, line: str) -> None:
        if self.rank0:
            print(line)

    @property
    def checkpoint_path(self) -> Path:
        return self.out / "checkpoint.mt"

    def epochs(self) -> Iterator[int]:
        """Epoch numbers from the first one not yet done, while the step budget lasts."""
        for epoch in range(self.first_epoch, self.args.epochs + 1):
            if self._steps_left() == 0:
                return
            yield epoch

    def train_loader(self, epoch: int, dataset: TensorDataset | None = None, drop_last: bool = False
                     ) -> DataLoader:
        """A shuffled loader whose order depends only on (seed, epoch), so a resumed run sees the batches
        an uninterrupted one would have; with --distributed, this rank's shard of it."""
        dataset = dataset or self.data.train
        sampler = ddp_setup.sampler(dataset, self.args, epoch)
        return DataLoader(dataset, batch_size=self.args.batch_size, shuffle=sampler is None, sampler=sampler,
                          drop_last=drop_last, generator=self.args.seed * 100_003 + epoch)

    def train_epoch(self, epoch: int, loader: DataLoader, step: StepFn) -> dict[str, float]:
        """Run ``step(x, y)`` (on the device) over the loader, within the step budget.

        ``step`` returns named, detached scalar losses; they are summed on the device and read back only
        for the bar's postfix, every POSTFIX_EVERY steps. Returns the epoch's mean losses, steps, seconds,
        ms/step and samples/s (the clock stops after a device synchronisation)."""
        budget = self._steps_left()
        total_steps = len(loader) if budget is None else min(len(loader), budget)
        bar = self._bar(epoch, total_steps, len(loader.sampler) if total_steps == len(loader) else None)
        sums: dict[str, mt.Tensor] = {}
        per_step: list[dict[str, mt.Tensor]] | None = [] if self.args.step_losses else None
        steps = samples = 0
        profiler = self.profiler
        if profiler is not None:
            profiler.begin()
        start = time.perf_counter()
        for x, y in loader:
            if steps == total_steps:
                break
            losses = step(x.to(self.device), y.to(self.device))
            for name, value in losses.items():
                sums[name] = value if name not in sums else sums[name] + value
            if per_step is not None:
                per_step.append(losses)
            steps, samples = steps + 1, samples + x.shape[0]
            if self.tensorboard is not None:
                self.tensorboard.step(self.step + steps, losses)
            if profiler is not None:
                profiler.step()
            if bar is not None:
                bar.update(x.shape[0])
                if steps % POSTFIX_EVERY == 0 or steps == total_steps:
                    bar.set_postfix({k: f"{v.item() / steps:.4f}" for k, v in sums.items()}, refresh=False)
        synchronize(self.device)
        seconds = time.perf_counter() - start
        if profiler is not None:
            profiler.end_of_epoch()
        if bar is not None:
            bar.close()
        self.step += steps
        if per_step:
            self._log_step_losses(per_step)
        metrics = {name: total.item() / steps for name, total in sums.items()}
        metrics.update(steps=steps, train_seconds=round(seconds, 6), ms_per_step=round(1e3 * seconds / steps, 4),
                       samples_per_s=round(samples / seconds, 1))
        return metrics

    def end_epoch(self, epoch: int, metrics: dict[str, float]) -> None:
        """Print the epoch's line, append it to the log and save the log and the checkpoint (rank 0 only)."""
        if not self.rank0:
            return
        record = {"epoch": epoch, "step": self.step, **metrics}
        self.log["epochs"].append(record)
        if self.tensorboard is not None:
            self.tensorboard.epoch(epoch, metrics)
        print(f"epoch {epoch}/{self.args.epochs}: " + "  ".join(_format(k, v) for k, v in metrics.items()
                                                                if k not in ("steps", "train_seconds")))
        self.write_log()
        mt.save({"epoch": epoch, "step": self.step, "log_epochs": self.log["epochs"],
                 "modules": {k: m.state_dict() for k, m in self.modules.items()},
                 "optimizers": {k: o.state_dict() for k, o in self.optimizers.items()}}, self.checkpoint_path)

    def write_log(self, **final: Any) -> Path:
        """Write ``<out>/metrics.json`` (atomically), with ``final`` results when given (the run's end: a
        --profile still recording ends there); rank 0 only."""
        if not self.rank0:
            return self.out / "metrics.json"
        if final:
            self.log["final"] = final
            if self.tensorboard is not None:
                self.tensorboard.final(self.step, final)
            if self.profiler is not None:
                self.profiler.finish()
                self.log["profile"] = {k: str(v) for k, v in self.profiler.files.items()}
        path = self.out / "metrics.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.log, indent=2, default=str))
        os.replace(tmp, path)
        return path

    # ------------------------------------------------------------------------------------------ helpers
    def _log_step_losses(self, per_step: list[dict[str, mt.Tensor]]) -> None:
        """Append each step's losses to the log's ``step_losses`` (name -> list), one read-back per name."""
        logged = self.log.setdefault("step_losses", {})
        for name in per_step[0]:
            logged.setdefault(name, []).extend(mt.stack([losses[name] for losses in per_step]).tolist())

    def _steps_left(self) -> int | None:
        return None if self.args.limit_steps is None else max(self.args.limit_steps - self.step, 0)

    def _bar(self, epoch: int, steps: int, samples: int | None) -> Any:
        if tqdm is None or self.args.no_progress or not self.rank0:
            return None
        total = samples if samples is not None else steps * self.args.batch_size
        return tqdm(total=total, desc=f"epoch {epoch}/{self.args.epochs}", unit="img", unit_scale=True,
                    leave=False, dynamic_ncols=True)

    def _resume(self, path: Path) -> None:
        if not path.is_file():
            raise SystemExit(f"--resume: no checkpoint at {path}")
        state = mt.load(path, map_location=self.device)
        missing = (set(self.modules) - set(state["modules"])) | (set(self.optimizers) - set(state["optimizers"]))
        if missing:
            raise SystemExit(f"--resume: {path} has no state for {', '.join(sorted(missing))}; it was written "
                             f"by another example (it holds {', '.join(sorted(state['modules']))})")
        for name, module in self.modules.items():
            module.load_state_dict(state["modules"][name])
        for name, optimizer in self.optimizers.items():
            optimizer.load_state_dict(state["optimizers"][name])
        self.first_epoch, self.step = state["epoch"] + 1, state["step"]
        self.log["epochs"] = list(state["log_epochs"])
        self.log["resumed_from"] = {"path": str(path), "epoch": state["epoch"], "step": state["step"]}
        print(f"resumed from {path} after epoch {state['epoch']} (step {state['step']})")


def _format(key: str, value: float) -> str:
    if key.endswith("accuracy"):
        return f"{key.replace('_', ' ')} {value:.2%}"
    if key == "samples_per_s":
        return f"{value:,.0f} samples/s"
    if key == "ms_per_step":
        return f"{value:.2f} ms/step"
    return f"{key.replace('_', ' ')} {value:.4f}"


# ------------------------------------------------------------------------------------ mixed precision
class Precision:
    """--amp's pieces, PyTorch's recipe: the forward in ``autocast(device_type)`` (bfloat16 on the CPU, float16
    on CUDA), the backward through ``GradScaler.scale``, ``step`` and ``update`` through the scaler. Without
    --amp both are disabled, so each call is the plain float32 one."""

    def __init__(self, enabled: bool, device: mt.device) -> None:
        self.enabled, self.device_type = enabled, device.type
        self.scaler = mt.amp.GradScaler(device.type, enabled=enabled)

    def autocast(self) -> mt.autocast:
        return mt.autocast(self.device_type, enabled=self.enabled)

    def backward(self, loss: mt.Tensor) -> None:
        self.scaler.scale(loss).backward()

    def step(self, optimizer: optim.Optimizer) -> None:
        self.scaler.step(optimizer)

    def states(self) -> dict[str, Any]:
        """The scaler, for the checkpoint's optimizers (only with --amp: a float32 run has no scaler state)."""
        return {"scaler": self.scaler} if self.enabled else {}


# ----------------------------------------------------------------------------------------- classifiers
def classifier_step(model: nn.Module, optimizer: optim.Optimizer, precision: Precision | None = None) -> StepFn:
    """One Adam step on cross-entropy: the training step of the MLP and the CNN (and speedup.py's); with a
    ``precision`` (--amp), the forward runs under autocast and the backward and step through its scaler."""
    amp = precision or Precision(False, mt.device("cpu"))

    def step(x: mt.Tensor, y: mt.Tensor) -> dict[str, mt.Tensor]:
        with amp.autocast():
            loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        amp.backward(loss)
        amp.step(optimizer)
        amp.scaler.update()
        return {"loss": loss.detach()}
    return step


def accuracy(model: nn.Module, dataset: TensorDataset, device: mt.device, batch_size: int = 1000) -> float:
    """Fraction of ``dataset`` that ``model`` (in eval mode, without a graph) labels correctly."""
    was_training = model.training
    model.eval()
    correct = mt.zeros((), dtype=mt.int64, device=device)
    with mt.no_grad():
        for x, y in DataLoader(dataset, batch_size=batch_size):
            correct += (model(x.to(device)).argmax(1) == y.to(device)).sum()
    model.train(was_training)
    return correct.item() / len(dataset)


def run_classifier(example: str, build: Callable[[int], nn.Module], doc: str, argv: Sequence[str] | None,
                   *, epochs: int, batch_size: int, lr: float = 1e-3) -> dict[str, Any]:
    """The whole of ``mlp.py`` and ``cnn.py``: parse, load, train with Adam on cross-entropy, report test
    accuracy each epoch. Returns the JSON log."""
    parser = example_parser(doc, epochs=epochs, batch_size=batch_size, lr=lr)
    ddp_setup.add_argument(parser)
    args = parser.parse_args(argv)
    check_args(parser, args)
    device = ddp_setup.start(args, pick_device(args.device))
    mt.manual_seed(args.seed)
    data = load_images(args.dataset, args.data_dir)
    model = build(data.image_size).to(device)
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    precision = Precision(args.amp, device)
    run = Run(example, args, data, device, {"model": model}, {"optimizer": optimizer, **precision.states()})
    step = classifier_step(ddp_setup.wrap(model, args), optimizer, precision)
    for epoch in run.epochs():
        metrics = run.train_epoch(epoch, run.train_loader(epoch), step)
        if run.rank0:
            metrics["test_accuracy"] = accuracy(model, data.test, device)
        run.end_epoch(epoch, metrics)
    if run.rank0:
        final_accuracy = accuracy(model, data.test, device)
        run.write_log(test_accuracy=final_accuracy, steps=run.step)
        print(f"test accuracy {final_accuracy:.2%} after {run.step} steps")
    return run.log
