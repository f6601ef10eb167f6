"""Training code: the network's output layout and the losses (needs torch, a training-only
dependency: skipped without it)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from judgecam.models.data import render_targets  # noqa: E402
from judgecam.models.net import FaceletNet, parameter_count  # noqa: E402
from judgecam.models.train import _losses  # noqa: E402
from judgecam.vision.detector_post import OUTPUT_CHANNELS, QUAD_CHANNELS  # noqa: E402


def test_output_layout() -> None:
    torch.manual_seed(0)
    model = FaceletNet(8).eval()
    with torch.no_grad():
        out = model(torch.rand(1, 3, 64, 64))
    assert out.shape == (1, OUTPUT_CHANNELS, 16, 16)
    assert float(out[:, 0].min()) >= 0.0 and float(out[:, 0].max()) <= 1.0
    assert parameter_count(FaceletNet(24)) < 500_000


def _targets() -> tuple[torch.Tensor, ...]:
    square = np.array([[20.0, 20.0], [36.0, 20.0], [36.0, 36.0], [20.0, 36.0]])
    heat, weight, offsets, mask = render_targets(
        square.mean(axis=0)[None], [square], np.array([True]), 64
    )
    return tuple(torch.from_numpy(a[None]) for a in (heat, weight, offsets, mask))


def test_offset_loss_ignores_which_corner_comes_first() -> None:
    heat, weight, offsets, mask = _targets()
    logits = torch.zeros(1, OUTPUT_CHANNELS, 16, 16)
    logits[:, 0] = torch.logit(heat.clamp(1e-4, 1 - 1e-4))
    quad = offsets[:, QUAD_CHANNELS.start - 1 : QUAD_CHANNELS.stop - 1].unflatten(1, (4, 2))
    logits[:, QUAD_CHANNELS] = quad.roll(1, dims=1).flatten(1, 2)
    heat_loss, offset_loss = _losses(logits, heat, weight, offsets, mask)
    assert float(offset_loss) == pytest.approx(0.0, abs=1e-6)
    assert float(heat_loss) < 1e-3
    logits[:, QUAD_CHANNELS] += 0.5
    assert float(_losses(logits, heat, weight, offsets, mask)[1]) > 1.0
