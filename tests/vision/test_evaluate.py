"""The corpus evaluation's bound on what the cameras allow (`perfect_vision_verdict`)."""

from __future__ import annotations

import json
from pathlib import Path

from judgecam.vision.evaluate import perfect_vision_verdict


def _truth(corpus_dir: Path, capture: str) -> dict:
    return json.loads((corpus_dir / f"{capture}.json").read_text(encoding="utf-8"))


def test_a_fully_seen_capture_gets_its_true_verdict(corpus_dir: Path) -> None:
    # c0021: a solved 3x3x3 whose five upper faces the two rig cameras see whole.
    truth = _truth(corpus_dir, "c0021")
    assert truth["verdict"] == "solved"
    assert perfect_vision_verdict(truth) == "solved"


def test_what_no_camera_sees_leaves_the_verdict_open(corpus_dir: Path) -> None:
    truth = _truth(corpus_dir, "c0021")
    for view in truth["views"]:
        for facelet in view["facelets"]:
            facelet["visibility"] = 0.2  # every facelet mostly hidden
    assert perfect_vision_verdict(truth) == "review"


def test_the_bound_agrees_with_every_truth_it_decides(corpus_dir: Path) -> None:
    manifest = json.loads((corpus_dir / "manifest.json").read_text(encoding="utf-8"))
    decided = 0
    for entry in manifest["captures"]:
        truth = json.loads((corpus_dir / entry["truth"]).read_text(encoding="utf-8"))
        verdict = perfect_vision_verdict(truth)
        if verdict != "review":
            decided += 1
            assert verdict == truth["verdict"], entry["id"]
    assert decided > len(manifest["captures"]) // 2
