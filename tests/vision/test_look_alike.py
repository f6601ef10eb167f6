"""Two colours of a reading that look like one scheme colour (`judgecam.vision.look_alike`)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np

from judgecam.calibration.scheme import builtin_scheme
from judgecam.puzzle.observation import UNKNOWN, Observation, PairObservation
from judgecam.puzzle.registry import get_puzzle
from judgecam.puzzle.verdict import judge, judge_unseen
from judgecam.vision.color_model import ColorClassification, ColorCluster, FaceletSample
from judgecam.vision.fuse import Fusion
from judgecam.vision.look_alike import (
    lone_decides,
    lone_facelets,
    look_alike_decides,
    misnamed_clusters,
    misnamed_decides,
    shaded_decides,
    shaded_facelets,
)

DATA = Path(__file__).parent / "data"

#: As on c0019 of the seed-7777 render (a +2 under glare): F's greens in shadow, two of them
#: lit (CIELAB), and R's red face not seen at all.
SHADED_GREEN = (28.4, -31.0, 21.1)
LIT_GREEN = (59.1, -43.9, 29.7)


def _fusion(
    labels: list[str],
    lab_of: dict[str, tuple[float, float, float]],
    gains: tuple[float, float, float] = (1.0, 1.0, 1.0),
    puzzle: str = "333",
) -> Fusion:
    """A fusion of `labels` (a cube, every pair in line) with one cluster per colour read,
    under a light of von Kries `gains`."""
    spec = get_puzzle(puzzle)
    pairs = tuple(PairObservation(pair.axis, pair.parts, 0.0, 0.5) for pair in spec.pairs())
    observation = Observation(puzzle, tuple(labels), pairs)
    clusters = tuple(
        ColorCluster(name, None, None, lab_of[name], 1.0, labels.count(name), 0.0)
        for name in sorted(set(labels) - {UNKNOWN})
    )
    classification = ColorClassification(
        puzzle,
        tuple(None if label == UNKNOWN else label for label in labels),
        tuple(0.0 if label == UNKNOWN else 1.0 for label in labels),
        clusters,
        (),
        gains,
    )
    verdict = judge(spec, observation)
    return Fusion(observation, verdict, classification, (), (), (), (), False)


def _c0019_like(misread: bool) -> Fusion:
    """One R turn from solved, the R face unseen; two of F's greens lit (and, if `misread`,
    named red: the colour no camera saw, so the name was free)."""
    labels = list(get_puzzle("333").solved_state().apply("R").colors)
    for index in range(9, 18):
        labels[index] = UNKNOWN
    if misread:
        labels[19] = labels[25] = "red"
    lab_of = {color.name: color.lab for color in builtin_scheme("333").colors}
    lab_of["green"] = SHADED_GREEN
    lab_of["red"] = LIT_GREEN
    return _fusion(labels, lab_of)


def test_a_cluster_that_looks_like_another_clusters_colour_is_found() -> None:
    assert misnamed_clusters(_c0019_like(misread=True)) == [("red", "green")]
    assert misnamed_clusters(_c0019_like(misread=False)) == []


def test_a_penalty_that_rests_on_a_misnamed_cluster_goes_to_a_judge() -> None:
    misread = _c0019_like(misread=True)
    assert misread.verdict.verdict == "DNF"
    reason = misnamed_decides(misread)
    assert reason is not None and "2 facelet(s) read red that look green" in reason
    right = _c0019_like(misread=False)
    assert right.verdict.verdict == "+2"
    assert misnamed_decides(right) is None


def test_a_penalty_that_rests_on_several_misnamed_colours_together_goes_to_a_judge() -> None:
    # Corpus c0154 (a +2, stickerless) under a warm cast: whites in shade named red and greens
    # split into green and yellow. The DNF holds without either misnamed colour alone, not
    # without all of them.
    misread = _fused("corpus-warm-c0154", "read")
    assert misread.verdict.verdict == "DNF"
    spec, observation = get_puzzle("333"), misread.observation
    for name in ("red", "yellow"):
        alone = [i for i, label in enumerate(observation.facelets) if label == name]
        assert judge_unseen(spec, observation, alone).verdict == "DNF"
    assert misnamed_decides(misread) is None  # each alone leaves the DNF standing
    reason = look_alike_decides(misread)
    assert reason is not None and "taken together" in reason
    # Read right, the colours seen do not make it a DNF.
    assert _fused("corpus-warm-c0154", "truth").verdict.verdict != "DNF"


def test_two_clusters_with_more_facelets_than_one_colour_has_are_two_colours() -> None:
    """A solved cube whose whole red face looks like the (shaded) greens: nine reds and nine
    greens cannot be one colour, so nothing is doubted."""
    labels = list(get_puzzle("333").solved_state().colors)
    lab_of = {color.name: color.lab for color in builtin_scheme("333").colors}
    lab_of["green"] = SHADED_GREEN
    lab_of["red"] = LIT_GREEN
    assert misnamed_clusters(_fusion(labels, lab_of)) == []


def _fused(capture: str, labels_key: str) -> Fusion:
    """A capture's fusion with rig poses from its fixture (`data/CAPTURE-fused.json`): its
    fused samples, with the colours stage 4 read (`read`) or the true ones (`truth`), each
    colour's cluster at its samples' mean, the light stage 4 estimated, every pair in line."""
    data = json.loads((DATA / f"{capture}-fused.json").read_text(encoding="utf-8"))
    samples = tuple(
        None if row is None else FaceletSample((row[0], row[1], row[2]), row[3], int(row[4]))
        for row in data["samples"]
    )
    labels = [UNKNOWN if label is None else label for label in data[labels_key]]
    lab_of = {
        name: tuple(
            np.mean(
                [
                    row[:3]
                    for row, label in zip(data["samples"], labels, strict=True)
                    if label == name
                ],
                axis=0,
            )
        )
        for name in set(labels) - {UNKNOWN}
    }
    gains = tuple(data["gains"])
    fusion = _fusion(labels, lab_of, gains, data["puzzle"])  # type: ignore[arg-type]
    return replace(fusion, samples=samples)


def test_a_penalty_that_rests_on_a_shaded_facelet_read_as_another_colour_goes_to_a_judge() -> None:
    # An orange sticker in a shadow, L 40 beside the face's oranges at L 58 (the same hue), was
    # nearer red in CIEDE2000 and read red with confidence 1.0: a +2 (F') read DNF.
    misread = _fused("seed4646-rig3-c0028", "read")
    assert misread.verdict.verdict == "DNF"
    reason = shaded_decides(misread)
    assert reason is not None and "the DNF rests on" in reason
    right = _fused("seed4646-rig3-c0028", "truth")
    assert right.verdict.verdict == "+2"
    assert shaded_decides(right) is None


def test_shaded_facelets_of_one_face_do_not_vouch_for_each_other() -> None:
    # Two neon greens in a face's shade (L 26-27 beside the face's lit greens at L 45, the same
    # hue) read yellow, the colour of one facelet elsewhere: against yellow's mean including
    # each other they looked yellow; against the yellow on another face their hue is green's
    # (corpus c0016 rendered darker, as by an underexposed camera; a +2 read DNF). The true
    # yellow (11) is doubted too: the yellows on other faces than its own are the two greens.
    misread = _fused("corpus-dark-c0016", "read")
    assert misread.verdict.verdict == "DNF"
    assert shaded_facelets(misread) == [1, 3, 11]
    right = _fused("corpus-dark-c0016", "truth")
    assert right.verdict.verdict == "+2"
    assert shaded_facelets(right) == []


def test_a_penalty_that_rests_on_a_cluster_coloured_like_another_goes_to_a_judge() -> None:
    # Seed 1357 rig2 --hands c0014 (a +2): U's right column of whites in shadow (L 50-65, a
    # little warm) beside whites blown out to L 100, a cluster of their own and named green (the
    # colour no camera saw; nearest orange in CIEDE2000, a seen colour with too many facelets to
    # share): DNF. Brightness aside it is white's colour, far from green's under the light.
    misread = _fused("seed1357-rig2-hands-c0014", "read")
    assert misread.verdict.verdict == "DNF"
    assert ("green", "white") in misnamed_clusters(misread)
    reason = misnamed_decides(misread)
    assert reason is not None and "read green that look white" in reason


def test_a_lone_facelet_merged_into_another_colour_is_doubted() -> None:
    # Corpus c0016 darker: the neon pink B1 (20), the scheme's red, seen nowhere else, read
    # orange 25 CIEDE2000 from the two oranges; red is then unused.
    misread = _fused("corpus-dark-c0016", "read")
    assert lone_facelets(misread) == [20]
    # Read right, every colour of the scheme is used: nothing is lone.
    assert lone_facelets(_fused("corpus-dark-c0016", "truth")) == []


def test_a_penalty_resting_on_all_look_alike_doubts_together_goes_to_a_judge() -> None:
    # c0016 darker: the shaded greens read yellow make the DNF without the lone pink, and the
    # pink read orange makes it without the greens; each check alone lets it stand.
    misread = _fused("corpus-dark-c0016", "read")
    assert misread.verdict.verdict == "DNF"
    assert misnamed_decides(misread) is None
    assert shaded_decides(misread) is None
    assert lone_decides(misread) is None
    reason = look_alike_decides(misread)
    assert reason is not None and "taken together" in reason
    right = _fused("corpus-dark-c0016", "truth")
    assert right.verdict.verdict == "+2"
    assert look_alike_decides(right) is None
