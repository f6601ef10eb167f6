"""Ring buffer, capture window and motion / at-rest detection."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from judgecam.device.capture import (
    CaptureWindow,
    FrameRing,
    MotionDetector,
    Region,
    RestTracker,
)
from judgecam.device.sources import Frame

MS = 1_000_000


def frame(index: int, t_ms: int, camera: str = "cam0", image: np.ndarray | None = None) -> Frame:
    if image is None:
        image = np.zeros((4, 4, 3), np.uint8)
    return Frame(camera, index, t_ms * MS, image)


def scene(rng: np.random.Generator, sigma: float, square_at: int | None = None) -> np.ndarray:
    """A textured table with sensor noise, and optionally a 12x12 dark square (a hand)."""
    base = np.tile(np.linspace(60, 200, 160, dtype=np.float64), (120, 1))
    base[40:80, 60:100] = 120.0  # the puzzle
    if square_at is not None:
        base[50:62, square_at : square_at + 12] = 20.0
    noisy = base + rng.normal(0.0, sigma, base.shape)
    grey = np.clip(noisy, 0, 255).astype(np.uint8)
    return np.repeat(grey[:, :, None], 3, axis=2)


def test_ring_keeps_its_span_at_the_evidence_rate() -> None:
    ring = FrameRing(span_s=1.0, rate_hz=5.0, max_frames=100)
    kept = [ring.add(frame(i, i * 33)) for i in range(100)]  # 30 fps for 3.3 s
    assert sum(kept) == pytest.approx(100 * 33 / 200, abs=2)  # about one frame in six
    stamps = [f.timestamp_ns // MS for f in ring.since(0)]
    assert stamps[-1] - stamps[0] <= 1_000
    assert all(b - a >= 200 for a, b in itertools.pairwise(stamps))


def test_ring_never_exceeds_max_frames() -> None:
    ring = FrameRing(span_s=100.0, rate_hz=1000.0, max_frames=8)
    for i in range(50):
        ring.add(frame(i, i))
    assert len(ring) == 8


def test_noise_alone_is_not_motion_at_any_noise_level() -> None:
    rng = np.random.default_rng(0)
    for sigma in (0.5, 3.0, 8.0):
        detector = MotionDetector()
        samples = [detector.update(frame(i, i * 100, image=scene(rng, sigma))) for i in range(6)]
        assert samples[0].moving  # nothing to compare with yet
        assert not any(s.moving for s in samples[1:]), sigma
        # The noise estimate follows the real noise (blurred 3x3, so below sigma * sqrt(2));
        # sub-grey-level noise quantises away.
        assert 0.2 * sigma - 0.5 < samples[-1].noise_sigma < 1.5 * sigma + 1.0


def test_a_small_moving_object_is_motion_even_in_noise() -> None:
    rng = np.random.default_rng(1)
    detector = MotionDetector()
    detector.update(frame(0, 0, image=scene(rng, 6.0, square_at=20)))
    sample = detector.update(frame(1, 100, image=scene(rng, 6.0, square_at=40)))
    assert sample.moving
    assert sample.changed_fraction > 0.01


def test_region_limits_where_motion_counts() -> None:
    rng = np.random.default_rng(2)
    detector = MotionDetector(region=Region(100, 0, 60, 120))  # the square moves elsewhere
    detector.update(frame(0, 0, image=scene(rng, 2.0, square_at=10)))
    assert not detector.update(frame(1, 100, image=scene(rng, 2.0, square_at=40))).moving


def test_rest_needs_every_camera_still_for_n_frames() -> None:
    rest = RestTracker(still_frames=3)
    detector = MotionDetector()
    rng = np.random.default_rng(3)
    for i in range(4):
        for camera in ("a", "b"):
            moving_b = camera == "b" and i == 2
            image = scene(rng, 2.0, square_at=30 + 10 * i if moving_b else None)
            rest.update(detector.update(frame(i, i * 100, camera, image)))
    assert rest.counts()["a"] == 3
    assert not rest.at_rest(["a", "b"])  # b moved at frame 2
    assert rest.at_rest(["a"])
    assert not rest.at_rest([])


def test_window_keeps_before_after_and_judged_views() -> None:
    before = [frame(i, i * 250) for i in range(8)]  # 0 .. 1.75 s
    window = CaptureWindow(2_000 * MS, before, post_s=1.0, rate_hz=4.0, max_frames=100)
    offered = [window.offer(frame(100 + i, 2_000 + i * 100)) for i in range(15)]  # to 3.4 s
    kept_after = [f.timestamp_ns // MS for f in window.frames if f.timestamp_ns >= 2_000 * MS]
    assert kept_after == [2_000, 2_300, 2_600, 2_900]  # 4 Hz, up to trigger + 1 s
    assert sum(offered) == 4
    late = frame(999, 5_000)
    window.mark_verdict([late])  # judged after the window: kept anyway, flagged
    assert window.is_verdict_frame(late)
    assert late in window.frames
    assert not window.is_verdict_frame(before[0])


def test_window_is_bounded() -> None:
    window = CaptureWindow(0, [], post_s=100.0, rate_hz=1000.0, max_frames=10)
    for i in range(100):
        window.offer(frame(i, i))
    assert len(window) == 10
