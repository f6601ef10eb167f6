"""`check` on another renderer's captures (`judgecam.vision.evaluate_synthetic`)."""

from __future__ import annotations

import numpy as np

from judgecam.vision.evaluate_synthetic import draw_capture, evaluate_synthetic, main


def test_the_truth_is_the_rules_engines_verdict_on_the_drawn_state() -> None:
    rng = np.random.default_rng(5)
    for index in range(8):
        capture = draw_capture(index, rng)
        assert capture.puzzle == ("222", "333")[index % 2]
        assert len(capture.images) == 3 and capture.images[0].shape == (720, 1280, 3)
        assert max(abs(a) for a in capture.turn.part_angles) <= 44.0
        if not capture.moves:
            assert capture.truth == "solved"
        elif " " not in capture.moves:
            assert capture.truth == "+2"


def test_another_renderers_captures_are_judged_right_or_sent_to_a_judge() -> None:
    scores = evaluate_synthetic(6, seed=3, rig_poses=True)
    assert [s.outcome for s in scores].count("wrong") == 0
    assert [s.outcome for s in scores].count("right") >= 4


def test_the_command_prints_the_tally(capsys) -> None:
    assert main(["2", "--seed", "1", "--details"]) == 0
    out = capsys.readouterr().out
    assert "captures: 2" in out and "s000" in out
