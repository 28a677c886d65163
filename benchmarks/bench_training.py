"""Training speed of the course translator vs torch.nn.Transformer of the same size, in float64 (the course's
precision) and in float32, and of a full training.

    .venv/bin/python benchmarks/bench_training.py [--steps 6] [--rounds 25] [--warmup 12] [--full-runs 1]

One thread; the same batches for every model (make_batches of training/train.py with the standard TrainConfig batch
size and the standard ModelConfig); dropout 0; Adam with the course learning rate. After warm-up, each
round times `--steps` training steps (default: one epoch's batches) of every variant in turn: the course
model without tracing, torch.nn.Transformer, and the course model with every step inside
record(model) (trace/tracing.py). Per step we measure the process CPU time (one thread, so this is the compute
time, hardly disturbed by other processes on a busy machine) and the wall time. Figures are medians over
the rounds; ratios are medians of the per-round ratios course/torch (paired, so load that drifts between
rounds cancels out). Verdicts use the CPU-time ratios. Last, the wall time (and CPU time) of one full
standard course_model() training (30 epochs incl. exact-match evaluations and probe snapshots); its
verdict uses the wall time.

This is a script that prints figures, not a test: it always exits 0.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time

import torch
from torch import nn

from course_utils.core.data import load_pairs
from course_utils.core.model import ModelConfig, build_model, parameter_counts
from course_utils.core.precision import DTYPE, default_dtype
from course_utils.trace.tracing import record
from course_utils.training.train import TrainConfig, make_batches
from course_utils.training.zoo import course_model

# course/torch per-step ratios at the same dtype; float64/float32 per course step; seconds for the full training
GOALS = {"off": 1.2, "on": 1.5, "float64": 1.3, "full": 10.0}
OFF, ON, TORCH = "course, tracing off", "course, tracing on", "torch.nn.Transformer"


class TorchTranslator(nn.Module):
    """torch.nn.Transformer with the course model's sizes, token + learned position embeddings and a generator."""

    def __init__(self, cfg: ModelConfig, n_src: int, n_tgt: int):
        super().__init__()
        d = cfg.d_model
        self.scale = math.sqrt(d)
        self.src_tok, self.tgt_tok = nn.Embedding(n_src, d, padding_idx=0), nn.Embedding(n_tgt, d, padding_idx=0)
        self.src_pos, self.tgt_pos = nn.Embedding(cfg.max_len, d), nn.Embedding(cfg.max_len, d)
        self.transformer = nn.Transformer(
            d_model=d,
            nhead=cfg.n_heads,
            num_encoder_layers=cfg.n_layers,
            num_decoder_layers=cfg.n_layers,
            dim_feedforward=cfg.d_ff,
            dropout=0.0,
            batch_first=True,
        )
        self.generator = nn.Linear(d, n_tgt)

    def forward(self, src, tgt_in):
        Ts, Tt = src.shape[1], tgt_in.shape[1]
        s = self.src_tok(src) * self.scale + self.src_pos.weight[:Ts]
        t = self.tgt_tok(tgt_in) * self.scale + self.tgt_pos.weight[:Tt]
        not_allowed = torch.ones(Tt, Tt, dtype=torch.bool).triu(1)  # torch's convention: True = may NOT attend
        y = self.transformer(
            s,
            t,
            tgt_mask=not_allowed,
            src_key_padding_mask=src == 0,
            tgt_key_padding_mask=tgt_in == 0,
            memory_key_padding_mask=src == 0,
        )
        return self.generator(y)


class Trainer:
    """One model + its optimizer; `steps(n)` runs n training steps over the shared batches."""

    def __init__(self, model, batches, lr, traced=False):
        self.model, self.batches, self.traced = model.train(), batches, traced
        self.opt = torch.optim.Adam(model.parameters(), lr=lr)
        self.loss_fn = nn.CrossEntropyLoss(ignore_index=0)
        self.i = 0

    def step(self):
        src, tgt = self.batches[self.i % len(self.batches)]
        self.i += 1
        logits = self.model(src, tgt[:, :-1])
        loss = self.loss_fn(logits.reshape(-1, logits.shape[-1]), tgt[:, 1:].reshape(-1))
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()

    def steps(self, n: int) -> tuple[float, float]:
        """Run n steps; returns (CPU seconds, wall seconds)."""
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(n):
            if self.traced:
                with record(self.model):
                    self.step()
            else:
                self.step()
        return time.process_time() - cpu, time.perf_counter() - wall


def verdict(value: float, goal: float) -> str:
    return "met" if value <= goal else "NOT met"


def measure(dtype: torch.dtype, cfg: ModelConfig, batches, lr: float, args) -> tuple[dict, dict]:
    """Per-step CPU and wall ms of every variant, all in `dtype`, over interleaved rounds."""
    course_off, course_on = build_model(cfg, seed=0).to(dtype), build_model(cfg, seed=0).to(dtype)
    with default_dtype(dtype):
        torch.manual_seed(0)
        reference = TorchTranslator(cfg, len(course_off.src_vocab), len(course_off.tgt_vocab))
    trainers = {
        OFF: Trainer(course_off, batches, lr),
        TORCH: Trainer(reference, batches, lr),
        ON: Trainer(course_on, batches, lr, traced=True),
    }
    for t in trainers.values():
        t.steps(args.warmup)
    cpu_ms = {name: [] for name in trainers}
    wall_ms = {name: [] for name in trainers}
    for _ in range(args.rounds):
        for name, t in trainers.items():
            cpu, wall = t.steps(args.steps)
            cpu_ms[name].append(1000 * cpu / args.steps)
            wall_ms[name].append(1000 * wall / args.steps)
    return cpu_ms, wall_ms


med = statistics.median


def paired(a: list[float], b: list[float]) -> float:
    """Median of the per-round ratios a / b (paired: load that drifts between rounds cancels out)."""
    return med([x / y for x, y in zip(a, b)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=6, help="training steps per variant per round (6 = one epoch)")
    ap.add_argument("--rounds", type=int, default=25)
    ap.add_argument("--warmup", type=int, default=12, help="untimed steps per variant first")
    ap.add_argument("--full-runs", type=int, default=1, help="full course_model() trainings to time (median)")
    args = ap.parse_args()

    threads_before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        cfg, tcfg = ModelConfig(), TrainConfig()
        pairs = load_pairs("train")
        model = build_model(cfg, seed=0)
        batches = list(make_batches(model, pairs, tcfg.batch_size, torch.Generator().manual_seed(tcfg.seed)))
        n_course = parameter_counts(model)["total"]
        with default_dtype(DTYPE):
            n_torch = sum(
                p.numel() for p in TorchTranslator(cfg, len(model.src_vocab), len(model.tgt_vocab)).parameters()
            )
        print(
            f"torch {torch.__version__}, {torch.get_num_threads()} thread, CPU kernels {torch.backends.cpu.get_cpu_capability()}"
        )
        print(f"ModelConfig {cfg.to_dict()}")
        print(
            f"{len(pairs)} training pairs in {len(batches)} batches of <= {tcfg.batch_size}; parameters: "
            f"course {n_course:,}, torch {n_torch:,} (nn.Transformer adds a final LayerNorm to encoder and decoder)"
        )
        print(f"{args.warmup} warm-up steps, then {args.rounds} interleaved rounds x {args.steps} steps per variant")
        results = {dtype: measure(dtype, cfg, batches, tcfg.lr, args) for dtype in (DTYPE, torch.float32)}

        full, full_cpu = [], []
        for _ in range(args.full_runs):
            cpu, start = time.process_time(), time.perf_counter()
            result = course_model()
            full.append(time.perf_counter() - start)
            full_cpu.append(time.process_time() - cpu)
    finally:
        torch.set_num_threads(threads_before)

    for dtype, (cpu_ms, wall_ms) in results.items():
        print(f"\n{str(dtype).removeprefix('torch.')}: every model in this dtype")
        print(
            f"{'variant':<22}{'CPU ms/step':>12}{'wall ms/step':>13}{'CPU ratio':>11}{'wall ratio':>11}{'goal':>9}   result"
        )
        print("-" * 90)
        print(f"{TORCH:<22}{med(cpu_ms[TORCH]):>12.2f}{med(wall_ms[TORCH]):>13.2f}{'1.00':>11}{'1.00':>11}")
        for name, goal in ((OFF, GOALS["off"]), (ON, GOALS["on"])):
            r = paired(cpu_ms[name], cpu_ms[TORCH])
            print(
                f"{name:<22}{med(cpu_ms[name]):>12.2f}{med(wall_ms[name]):>13.2f}{r:>11.2f}"
                f"{paired(wall_ms[name], wall_ms[TORCH]):>11.2f}{f'<= {goal:.1f}':>9}   {verdict(r, goal)}"
            )
        print("-" * 90)

    (cpu64, _), (cpu32, _) = results[DTYPE], results[torch.float32]
    print("\nfloat64 / float32, per training step (CPU time, paired by round):")
    for name in (OFF, TORCH):
        r = paired(cpu64[name], cpu32[name])
        goal = f"<= {GOALS['float64']:.1f}   {verdict(r, GOALS['float64'])}" if name == OFF else ""
        print(f"  {name:<22}{med(cpu64[name]):>8.2f} ms vs {med(cpu32[name]):>6.2f} ms   ratio {r:.2f}   {goal}")

    full_s = med(full)
    runs = f", median of {len(full)} runs" if len(full) > 1 else ""
    full_goal = f"<= {GOALS['full']:.0f} s"
    print(
        f"\n{'full course_model()':<22}{full_s:>8.2f} s wall (float64){'':>8}{full_goal:>9}   {verdict(full_s, GOALS['full'])}"
    )
    print(
        f"  (30 epochs incl. exact-match evaluations and snapshots, CPU time {med(full_cpu):.2f} s; "
        f"{result.history[-1]['train_exact']:.0%} train exact match{runs})"
    )
    if full_s > 1.3 * med(full_cpu):
        print("  note: wall time well above CPU time: other processes were competing for the CPU")


if __name__ == "__main__":
    main()
