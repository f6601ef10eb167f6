"""Train the facelet detector from scratch, export it to ONNX and write its SHA-256.

    python -m judgecam.models.train --data /work/scratch/train --captures 300 --steps 3000

Renders any of the first `--captures` training captures that are missing in `--data` (the
corpus planner with its own seed, so never the test corpus), then trains with a fixed seed on
one process (`--threads` torch threads) and prints progress. The same arguments give the same
model.
"""

from __future__ import annotations

import argparse
import hashlib
import logging
import math
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import cv2
import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    import torch

logger = logging.getLogger(__name__)

MODELS_DIR = Path(__file__).resolve().parent
DEFAULT_ONNX = MODELS_DIR / "facelets.onnx"
#: Seed of the training captures' plan (the committed test corpus uses 2026).
RENDER_SEED = 9001


def ensure_rendered(data: Path, captures: int, seed: int, workers: int) -> list[str]:
    """Render the first `captures` planned training captures that are not in `data` yet;
    return the ids of all of them."""
    from judgecam.render.corpus import _run, plan_corpus

    planned = plan_corpus(seed, captures)
    ids = [p.capture_id for p in planned]
    plans = [p for p in planned if not (data / f"{p.capture_id}.json").exists()]
    if not plans:
        return ids
    print(f"rendering {len(plans)} training captures into {data}", flush=True)
    start = time.monotonic()
    for done, _entry in enumerate(_run([(p, str(data)) for p in plans], workers), start=1):
        if done % 10 == 0 or done == len(plans):
            print(f"  rendered {done}/{len(plans)} ({time.monotonic() - start:.0f} s)", flush=True)
    return ids


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def write_hash(onnx_path: Path) -> Path:
    """Write `<model>.sha256` (sha256sum format) beside the model; return its path."""
    target = onnx_path.with_suffix(".sha256")
    target.write_text(f"{sha256_of(onnx_path)}  {onnx_path.name}\n")
    return target


def _losses(
    logits: object, heatmap: object, weight: object, offsets: object, mask: object
) -> tuple[object, object]:
    """Focal-weighted BCE on the heatmap; L1 on corner offsets, best cyclic corner order."""
    import torch
    from torch.nn import functional

    from judgecam.vision.detector_post import QUAD_CHANNELS, TRIANGLE_CHANNELS

    assert isinstance(logits, torch.Tensor)
    assert isinstance(heatmap, torch.Tensor) and isinstance(weight, torch.Tensor)
    assert isinstance(offsets, torch.Tensor) and isinstance(mask, torch.Tensor)
    heat_logit = logits[:, 0]
    prob = torch.sigmoid(heat_logit)
    bce = functional.binary_cross_entropy_with_logits(heat_logit, heatmap, reduction="none")
    heat_loss = (bce * (prob - heatmap).abs().pow(2) * weight).sum() / (heatmap.sum() / 6.0 + 1.0)
    offset_loss = logits.new_zeros(())
    for channels, sides in ((QUAD_CHANNELS, 4), (TRIANGLE_CHANNELS, 3)):
        first = channels.start
        pred = logits[:, first : first + 2 * sides].unflatten(1, (sides, 2))
        target = offsets[:, first - 1 : first - 1 + 2 * sides].unflatten(1, (sides, 2))
        where = mask[:, first - 1]
        errors = torch.stack(
            [(pred.roll(r, dims=1) - target).abs().sum(dim=(1, 2)) for r in range(sides)]
        )
        best = errors.min(dim=0).values
        offset_loss = offset_loss + (best * where).sum() / (where.sum() + 1.0)
    return heat_loss, offset_loss


def load_frames(paths: list[Path]) -> list[NDArray[np.uint8]]:
    frames = []
    for path in paths:
        frame = cv2.imread(str(path), cv2.IMREAD_COLOR)
        if frame is None:
            raise FileNotFoundError(f"cannot read {path}")
        frames.append(np.asarray(frame, np.uint8))
    return frames


def make_batch_stream(
    frames: list[NDArray[np.uint8]], views: list[object], batch: int, size: int, seed: int
) -> torch.utils.data.IterableDataset[list[torch.Tensor]]:
    """An endless torch IterableDataset of training batches from one seeded generator."""
    import torch

    from judgecam.models.data import ViewTruth, make_sample

    class _Stream(torch.utils.data.IterableDataset[list[torch.Tensor]]):
        def __iter__(self) -> Iterator[list[torch.Tensor]]:
            rng = np.random.default_rng(seed)
            cv2.setNumThreads(1)
            while True:
                picks = rng.integers(0, len(views), batch)
                samples = []
                for i in picks:
                    view = views[i]
                    assert isinstance(view, ViewTruth)
                    samples.append(make_sample(rng, frames[i], view, size))
                yield [
                    torch.from_numpy(np.stack([getattr(s, name) for s in samples]))
                    for name in ("image", "heatmap", "weight", "offsets", "mask")
                ]

    return _Stream()


def train(args: argparse.Namespace) -> int:
    import torch

    from judgecam.models.data import load_views
    from judgecam.models.export import export_onnx
    from judgecam.models.net import FaceletNet, parameter_count

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True)
    cv2.setNumThreads(1)
    ids = ensure_rendered(args.data, args.captures, args.render_seed, args.render_jobs)
    views = load_views(args.data, ids)
    print(f"{len(views)} views from {args.captures} captures; decoding", flush=True)
    frames = load_frames([v.image_path for v in views])
    model = FaceletNet(args.width)
    print(f"FaceletNet(width={args.width}): {parameter_count(model)} parameters", flush=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-4)
    warmup = max(1, args.steps // 30)

    def lr_at(step: int) -> float:
        if step < warmup:
            return args.lr * (step + 1) / warmup
        progress = (step - warmup) / max(1, args.steps - warmup)
        return args.lr * (0.02 + 0.98 * 0.5 * (1.0 + math.cos(math.pi * progress)))

    # One worker process makes the batches (its own seeded generator, so the sequence is the
    # same every run) while this process trains.
    stream = make_batch_stream(frames, list(views), args.batch, args.size, args.seed)
    loader: torch.utils.data.DataLoader[list[torch.Tensor]] = torch.utils.data.DataLoader(
        stream, batch_size=None, num_workers=1, prefetch_factor=4
    )
    start = time.monotonic()
    running: list[float] = []
    model.train()
    for step, batch in zip(range(args.steps), loader, strict=False):
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step)
        logits = model.logits(batch[0])
        heat_loss, offset_loss = _losses(logits, *batch[1:])
        assert isinstance(heat_loss, torch.Tensor) and isinstance(offset_loss, torch.Tensor)
        loss = heat_loss + offset_loss
        optimizer.zero_grad()
        loss.backward()  # type: ignore[no-untyped-call]
        optimizer.step()
        running.append(float(loss.detach()))
        if (step + 1) % args.log_every == 0 or step + 1 == args.steps:
            elapsed = time.monotonic() - start
            eta = elapsed / (step + 1) * (args.steps - step - 1)
            print(
                f"step {step + 1}/{args.steps} loss {np.mean(running):.4f} "
                f"(heat {float(heat_loss.detach()):.4f} offsets {float(offset_loss.detach()):.4f}) "
                f"lr {lr_at(step):.2e} {elapsed:.0f} s, ~{eta:.0f} s left",
                flush=True,
            )
            running = []
        if args.checkpoint and (step + 1) % 500 == 0:
            torch.save(model.state_dict(), args.checkpoint)
    print(f"trained in {time.monotonic() - start:.0f} s", flush=True)
    if args.checkpoint:
        torch.save(model.state_dict(), args.checkpoint)
    model.eval()
    export_onnx(model, args.out)
    hash_path = write_hash(args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size} bytes) and {hash_path}", flush=True)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m judgecam.models.train",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=Path("/work/scratch/train"),
        help="scratch folder for the rendered training captures (not committed)",
    )
    parser.add_argument("--captures", type=int, default=300, help="training captures to use")
    parser.add_argument("--render-seed", type=int, default=RENDER_SEED)
    parser.add_argument("--render-jobs", type=int, default=2, help="parallel render processes")
    parser.add_argument("--seed", type=int, default=0, help="training seed")
    parser.add_argument("--steps", type=int, default=3000)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--size", type=int, default=192, help="training window side (pixels)")
    parser.add_argument("--width", type=int, default=24, help="network width")
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--threads", type=int, default=2, help="torch threads")
    parser.add_argument("--log-every", type=int, default=50)
    parser.add_argument("--checkpoint", type=Path, default=None, help="torch state_dict to save")
    parser.add_argument("--out", type=Path, default=DEFAULT_ONNX, help="ONNX file to write")
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    return train(build_parser().parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
