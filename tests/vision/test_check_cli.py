"""`judgecam check` on the command line: exit codes, JSON fields, overlays."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from judgecam.cli import main
from judgecam.vision.model import puzzle_model
from judgecam.vision.synthetic import Turn, default_camera, render_view, solved_colors


@pytest.fixture(scope="module")
def cube_image(tmp_path_factory) -> Path:
    model = puzzle_model("333")
    view = render_view(
        model, solved_colors(model), (210.0, 190.0, 230.0), turn=Turn(1, (0.0, 0.0, 15.0))
    )
    path = tmp_path_factory.mktemp("check") / "cube.png"
    cv2.imwrite(str(path), view.image)
    return path


def _intrinsics_file(folder: Path, width: int = 1280, height: int = 720) -> Path:
    path = folder / "camera.yml"
    storage = cv2.FileStorage(str(path), cv2.FILE_STORAGE_WRITE)
    storage.write("camera_matrix", default_camera(width, height))
    storage.write("dist_coeffs", np.zeros((1, 5)))
    storage.write("image_width", width)
    storage.write("image_height", height)
    storage.release()
    return path


def test_json_answer_has_the_issue_fields(cube_image, tmp_path, capsys) -> None:
    code = main(
        [
            "check",
            str(cube_image),
            "--puzzle",
            "333",
            "--json",
            "--intrinsics",
            str(_intrinsics_file(tmp_path)),
        ]
    )
    assert code == 0
    answer = json.loads(capsys.readouterr().out)
    assert set(answer) >= {
        "puzzle",
        "verdict",
        "moves_from_solved",
        "reasons",
        "pairs",
        "hidden",
        "views",
        "timings_ms",
    }
    assert answer["puzzle"] == "333"
    assert answer["verdict"] in ("solved", "+2", "DNF", "review")
    assert answer["intrinsics_assumed"] is False
    view = answer["views"][0]
    assert view["puzzle_found"] is True
    facelets = [f for face in view["faces"] for f in face["facelets"]]
    assert len(facelets) >= 15
    assert all(0.0 <= f["confidence"] <= 1.0 for f in facelets)
    assert len(answer["pairs"]) == 6
    for pair in answer["pairs"]:
        assert set(pair) == {
            "axis",
            "parts",
            "angle_deg",
            "uncertainty_deg",
            "limit_deg",
            "beyond_limit",
        }
        assert pair["limit_deg"] == 45.0
    measured = [p for p in answer["pairs"] if p["angle_deg"] is not None]
    assert len(measured) >= 4
    assert all(p["uncertainty_deg"] > 0 for p in measured)
    assert len(answer["hidden"]) >= 1  # one camera sees at most three faces


def test_without_intrinsics_it_says_so(cube_image, capsys) -> None:
    assert main(["check", str(cube_image), "--puzzle", "333"]) == 0
    out = capsys.readouterr().out
    assert "assumed a Pi Camera Module 3" in out


def test_a_review_says_first_what_made_it_one(cube_image, tmp_path, capsys) -> None:
    """One camera sees three faces at most: the unseen ones could change the result. That is
    the line a judge reads first ("why: ..."), before the notes (assumed intrinsics); the JSON
    gives it as `review_because`, and as a reason too."""
    assert main(["check", str(cube_image), "--puzzle", "333"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "review"
    assert lines[1].startswith("why: ") and "could change the result" in lines[1]
    notes = [line for line in lines if line.startswith("- ")]
    assert any("assumed a Pi Camera Module 3" in note for note in notes)
    assert all(note[2:] != lines[1][5:] for note in notes)  # said once
    assert main(["check", str(cube_image), "--puzzle", "333", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["review_because"] == [lines[1][5:]]
    assert answer["review_because"][0] in answer["reasons"]


def test_a_frame_without_a_puzzle_says_so_as_its_why(tmp_path, capsys) -> None:
    """No view usable: the views' problems are why; assumed intrinsics stay a note."""
    blank = tmp_path / "mat.png"
    cv2.imwrite(str(blank), np.full((720, 1280, 3), (60, 120, 60), np.uint8))
    assert main(["check", str(blank), "--puzzle", "333"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "review"
    assert lines[1].startswith("why: ") and "no puzzle found" in lines[1]
    assert not any(line.startswith("why: ") and "intrinsics" in line for line in lines)
    assert any(line.startswith("- ") and "assumed a Pi Camera Module 3" in line for line in lines)


def test_overlay_is_written(cube_image, tmp_path, capsys) -> None:
    assert (
        main(["check", str(cube_image), "--puzzle", "333", "--overlay", str(tmp_path / "out")]) == 0
    )
    written = list((tmp_path / "out").glob("*.png"))
    assert len(written) == 1
    assert cv2.imread(str(written[0])).shape == (720, 1280, 3)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["missing.jpg", "--puzzle", "333"], "no such image"),
        (["CORRUPT", "--puzzle", "333"], "cannot read"),
        (["CUT", "--puzzle", "333"], "is cut short (a JPEG without its end marker)"),
        (["IMAGE", "--puzzle", "333", "--intrinsics", "nothing.yml"], "no such intrinsics file"),
        (["IMAGE", "--puzzle", "333", "--intrinsics", "BADYAML"], ""),
        (
            ["IMAGE", "--puzzle", "333", "--intrinsics", "FOUR_BY_THREE"],
            "intrinsics for 1280x960 do not fit a 1280x720 image (another aspect ratio)",
        ),
    ],
)
def test_unusable_input_exits_2_with_one_line(
    cube_image, tmp_path, capsys, arguments, message
) -> None:
    corrupt = tmp_path / "corrupt.jpg"
    corrupt.write_bytes(b"not an image at all")
    cut = tmp_path / "cut.jpg"
    jpeg = cv2.imencode(".jpg", cv2.imread(str(cube_image)))[1].tobytes()
    cut.write_bytes(jpeg[: len(jpeg) // 2])
    bad = tmp_path / "bad.yml"
    bad.write_text("%YAML:1.0\ncamera_matrix: [1, 2\n", encoding="utf-8")
    replaced = [
        str(_intrinsics_file(tmp_path, 1280, 960))
        if a == "FOUR_BY_THREE"
        else str(corrupt)
        if a == "CORRUPT"
        else str(cut)
        if a == "CUT"
        else str(cube_image)
        if a == "IMAGE"
        else str(bad)
        if a == "BADYAML"
        else a
        for a in arguments
    ]
    assert main(["check", *replaced]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("judgecam check:")
    assert len(err.splitlines()) == 1
    assert message in err


def test_intrinsics_of_another_resolution_and_the_same_aspect_are_scaled(
    cube_image, tmp_path, capsys
) -> None:
    """A 16:9 calibration at 1920x1080 fits the 1280x720 view, scaled as one field of view:
    the same answer as its own resolution's intrinsics."""
    answers = []
    for width, height in ((1280, 720), (1920, 1080)):
        folder = tmp_path / f"{width}"
        folder.mkdir()
        file = _intrinsics_file(folder, width, height)
        assert (
            main(["check", str(cube_image), "--puzzle", "333", "--json", "--intrinsics", str(file)])
            == 0
        )
        answers.append(json.loads(capsys.readouterr().out))
    assert answers[0]["verdict"] == answers[1]["verdict"]
    assert [p["angle_deg"] for p in answers[0]["pairs"]] == pytest.approx(
        [p["angle_deg"] for p in answers[1]["pairs"]], abs=0.05
    )


def test_unknown_puzzle_is_a_usage_error(cube_image) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["check", str(cube_image), "--puzzle", "444"])
    assert exit_info.value.code == 2


def _station_for(capture: dict, corpus_dir: Path, folder: Path) -> Path:
    """A station config whose cameras are the capture's, with their intrinsics and poses."""
    import tomli_w

    cameras = []
    for view in capture["views"]:
        intrinsics = folder / f"{view['camera']}.yml"
        storage = cv2.FileStorage(str(intrinsics), cv2.FILE_STORAGE_WRITE)
        storage.write("camera_matrix", np.asarray(view["camera_matrix"], dtype=np.float64))
        storage.write("dist_coeffs", np.asarray(view["dist_coeffs"], dtype=np.float64))
        storage.write("image_width", int(view["image_size"][0]))
        storage.write("image_height", int(view["image_size"][1]))
        storage.release()
        cameras.append(
            {
                "name": view["camera"],
                "backend": "replay",
                "source": str(corpus_dir / view["image"]),
                "resolution": list(view["image_size"]),
                "analysis_resolution": list(view["image_size"]),
                "intrinsics": intrinsics.name,
                "pose": view["world_from_camera"],
            }
        )
    config = {
        "station": {"name": "test", "puzzle": capture["puzzle"], "evidence_dir": str(folder)},
        "cameras": cameras,
    }
    path = folder / "station.toml"
    path.write_bytes(tomli_w.dumps(config).encode("utf-8"))
    return path


def test_a_station_config_gives_the_cameras_intrinsics_and_rig_poses(
    corpus_dir, tmp_path, capsys
) -> None:
    capture = json.loads((corpus_dir / "c0021.json").read_text(encoding="utf-8"))
    station = _station_for(capture, corpus_dir, tmp_path)
    images = [str(corpus_dir / view["image"]) for view in capture["views"]]
    code = main(["check", *images, "--puzzle", "333", "--station", str(station), "--json"])
    assert code == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["verdict"] == capture["verdict"] == "solved"
    assert not any("intrinsics" in reason for reason in answer["reasons"])
    # One image for a two-camera station is unusable input.
    assert main(["check", images[0], "--puzzle", "333", "--station", str(station)]) == 2
    assert "2 camera(s)" in capsys.readouterr().err


def test_an_overlay_says_what_the_verdict_made_of_its_view() -> None:
    """A view left out as a loose fit is drawn under the verdict too: its overlay must say it was
    left out (c0188's cam1: 'only 33% of the sticker-like patches fit the puzzle; view left
    out'), and only the remarks about that view, not the other cameras'."""
    from types import SimpleNamespace

    from judgecam.vision.overlay import view_remarks

    view = SimpleNamespace(name="cam1.jpg", problems=())
    reasons = (
        "cam0.jpg: 2 facelet(s) sampled on parts placed by the other views' angles",
        "cam1.jpg: only 33% of the sticker-like patches fit the puzzle; view left out",
        "28 facelet(s) not seen: every legal filling gives the same verdict",
    )
    assert view_remarks(view, reasons) == [  # type: ignore[arg-type]
        "only 33% of the sticker-like patches fit the puzzle; view left out"
    ]
    lost = SimpleNamespace(name="cam2.jpg", problems=("no puzzle found (no group of patches)",))
    assert view_remarks(lost, ()) == ["no puzzle found (no group of patches)"]  # type: ignore[arg-type]


def test_an_overlay_says_why_it_is_a_review_first_and_once() -> None:
    """A judge holding the picture in a dispute sees the review's cause under the verdict; a
    remark about this view that is the cause itself is not written twice."""
    from types import SimpleNamespace

    from judgecam.vision.overlay import header_lines

    view = SimpleNamespace(name="/station/cam1.jpg", problems=())
    left_out = (
        "/station/cam1.jpg: only 33% of the sticker-like patches fit the puzzle; view left out"
    )
    unseen = "28 facelet(s) not seen: they could change the result (DNF or solved)"
    assert header_lines(view, "review", (left_out, unseen), (unseen,)) == [  # type: ignore[arg-type]
        "review: cam1.jpg",
        f"why: {unseen}",
        "only 33% of the sticker-like patches fit the puzzle; view left out",
    ]
    assert header_lines(view, "review", (left_out, unseen), (left_out,)) == [  # type: ignore[arg-type]
        "review: cam1.jpg",
        f"why: {left_out}",
    ]
    assert header_lines(view, "DNF", (unseen,)) == ["DNF: cam1.jpg"]  # type: ignore[arg-type]


def test_a_long_remark_is_wrapped_to_the_overlay_not_cut_at_its_edge() -> None:
    import cv2

    from judgecam.vision.overlay import wrapped

    reason = (
        "a slice it did not measure, placed by the other views' angle between two layers it "
        "did, puts 6 stickers in plain sight here and none is seen: that angle is in doubt"
    )
    lines = wrapped(reason, 600, 0.6, 1)
    assert len(lines) > 1 and " ".join(lines) == reason
    for line in lines:
        width = cv2.getTextSize(line, cv2.FONT_HERSHEY_SIMPLEX, 0.6, 3)[0][0]
        assert width <= 600
    assert wrapped("x L|M: +0.1 +- 0.8 deg (within 45)", 600, 0.6, 1) == [
        "x L|M: +0.1 +- 0.8 deg (within 45)"
    ]


def test_an_overlay_writes_what_its_font_cannot_draw_in_ascii() -> None:
    # The Hershey font draws any non-ASCII character as "?": a review's cause read
    # "+56.3??4.5 degrees" on a Pyraminx overlay (corpus c0153).
    from judgecam.vision.overlay import wrapped

    reason = "the B:layer|tip angle +56.3±4.5 degrees: it could be on either side of the limit"
    assert " ".join(wrapped(reason, 2000, 0.6, 1)) == (
        "the B:layer|tip angle +56.3+-4.5 degrees: it could be on either side of the limit"
    )
    assert wrapped("a 45° turn — café", 2000, 0.6, 1) == ["a 45 deg turn - caf?"]


def test_overlay_names_each_pair_with_its_layers_and_limit(cube_image) -> None:
    """The overlay's angle list names layers as the reasons do (`y E|U`), not axis indices, and
    says where each angle stands against its limit (the fixture turns one layer 15 degrees; which
    axis it is called depends on how the view is oriented)."""
    from judgecam.vision.camera import Intrinsics
    from judgecam.vision.check_cli import overlay_pair_lines
    from judgecam.vision.pipeline import check

    image = cv2.imread(str(cube_image))
    result = check([("cube", image)], "333", [Intrinsics.assumed_for(1280, 720)])
    lines = overlay_pair_lines(result)
    assert len(lines) == 6
    turned = [line for line in lines if "15." in line or "14." in line]
    assert len(turned) == 1, lines
    assert turned[0].endswith("deg (within 45)")
    assert all(line[0] in "xyz" and "|" in line.split(":")[0] for line in lines)


def test_an_overlay_crosses_the_cell_that_looks_bare(corpus_dir: Path) -> None:
    """Corpus c0087 cam0: D8's sticker is off and its cell is seen at a slant (`bare`). A
    judge reading "look like bare plastic" must find the cell on the picture: it is crossed in
    cyan, whose centre the crossing lines cover; drawn without it, that pixel is not cyan."""
    from dataclasses import replace

    from judgecam.vision.camera import project, rotation_matrix
    from judgecam.vision.evaluate import intrinsics_from_truth
    from judgecam.vision.overlay import BARE_BGR, draw_view
    from judgecam.vision.pipeline import analyse_view

    truth = json.loads((corpus_dir / "c0087.json").read_text(encoding="utf-8"))
    view_truth = truth["views"][0]
    image = np.asarray(cv2.imread(str(corpus_dir / view_truth["image"])), dtype=np.uint8)
    intrinsics = intrinsics_from_truth(view_truth)
    model = puzzle_model("333")
    view = analyse_view(image, model, intrinsics, view_truth["image"])
    assert view.fit is not None and len(view.bare) == 1
    rotation = rotation_matrix(view.fit.rvec)
    centre = project(
        model.facelet_centers[list(view.bare)], rotation, view.fit.tvec, intrinsics.camera_matrix
    )
    x, y = np.rint(intrinsics.distort(centre)[0]).astype(int)
    assert tuple(draw_view(image, view, model)[y, x]) == BARE_BGR
    assert tuple(draw_view(image, replace(view, bare=()), model)[y, x]) != BARE_BGR
