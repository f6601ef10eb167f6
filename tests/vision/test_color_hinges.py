"""Face lights that hinge on one group of facelets (`judgecam.vision.color_hinges`)."""

from __future__ import annotations

from judgecam.vision.color_hinges import hinge_groups, hinged_readings
from judgecam.vision.color_model import FaceletSample
from judgecam.vision.color_pieces import piece_model
from judgecam.vision.colors import classify_colors

#: Stage 4's input on c0046 at 1.5x (a +2; corpus capture rescaled, rig poses), fused from both
#: views: CIELAB per facelet (Kociemba order) and the true colour. Face R (9-17) is turned from
#: the lamp: its whites read L* 47, and the two red facelets a turned layer brought there (11,
#: 14) read L* 21-26, darker than the oranges of face L (36, 39, 42).
C0046_BIG = {
    0: ((74.5, 1.1, 73.0), "yellow"),
    1: ((74.8, 0.8, 73.2), "yellow"),
    2: ((75.0, 0.8, 73.3), "yellow"),
    3: ((39.5, 56.4, 39.3), "red"),
    4: ((39.9, 56.0, 39.8), "red"),
    5: ((40.0, 55.7, 39.1), "red"),
    6: ((39.4, 56.1, 39.2), "red"),
    7: ((39.8, 55.9, 38.8), "red"),
    8: ((40.0, 55.5, 37.3), "red"),
    9: ((47.2, 0.5, 10.7), "white"),
    10: ((47.3, 0.7, 10.8), "white"),
    11: ((20.7, 37.5, 24.9), "red"),
    12: ((47.3, 0.6, 11.1), "white"),
    13: ((47.3, 0.7, 10.8), "white"),
    14: ((25.5, 30.6, 18.9), "red"),
    15: ((49.6, 0.4, 11.5), "white"),
    18: ((21.6, 12.7, -34.1), "blue"),
    19: ((22.0, 12.8, -34.3), "blue"),
    20: ((22.2, 12.1, -32.4), "blue"),
    21: ((21.8, 12.6, -34.2), "blue"),
    22: ((21.8, 12.4, -33.1), "blue"),
    23: ((22.6, 12.0, -32.7), "blue"),
    36: ((30.2, 31.2, 36.2), "orange"),
    37: ((42.1, -0.3, 45.7), "yellow"),
    38: ((41.8, -0.5, 45.7), "yellow"),
    39: ((30.0, 31.3, 35.6), "orange"),
    40: ((41.9, 0.0, 45.4), "yellow"),
    41: ((42.0, -0.6, 45.9), "yellow"),
    42: ((34.8, 33.8, 41.0), "orange"),
    44: ((48.4, -0.5, 51.2), "yellow"),
    53: ((32.4, -23.6, 18.3), "green"),
}


def _c0046() -> tuple[list[FaceletSample | None], list[str | None]]:
    samples: list[FaceletSample | None] = [None] * 54
    truth: list[str | None] = [None] * 54
    for index, (lab, color) in C0046_BIG.items():
        samples[index] = FaceletSample(lab, 1.0, 1000)
        truth[index] = color
    return samples, truth


def test_a_face_whose_light_rests_on_one_group_is_found() -> None:
    model = piece_model("333")
    _, truth = _c0046()
    misread = list(truth)
    misread[11] = misread[14] = "orange"
    face_r = model.faces.index("R")
    groups = dict(hinge_groups(model.face_of_facelet, misread))
    # Face R's whites are seen nowhere else: its light rests on 11 and 14 alone.
    assert groups[face_r] == (11, 14)
    # Face L shares yellow (with U) and orange (with R): two groups, no hinge.
    assert model.faces.index("L") not in groups
    readings = hinged_readings(model.face_of_facelet, _c0046()[0], misread, per_color=9)
    assert any(r.face == face_r and r.as_color == "red" for r in readings)
    # Read as red, the group would make 8 reds: allowed; as yellow it would make 10: not tried.
    assert not any(r.face == face_r and r.as_color == "yellow" for r in readings)


def test_a_group_read_to_suit_the_light_fitted_to_it_is_read_again() -> None:
    samples, truth = _c0046()
    result = classify_colors(samples, "333")
    wrong = [i for i, label in enumerate(result.labels) if label != truth[i]]
    # Before the hinge check: 11 and 14 read orange, 11 at confidence 1.00 (a +2 read DNF).
    assert wrong == []
