"""Observation files: round trip, the schema, the bundled examples and clear errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from judgecam.puzzle import get_puzzle
from judgecam.puzzle.observation import (
    SCHEMA_PATH,
    Observation,
    ObservationError,
    PairObservation,
    load_observation,
    save_observation,
)
from judgecam.puzzle.verdict import judge


def _valid() -> dict[str, Any]:
    spec = get_puzzle("333")
    return {
        "puzzle": "333",
        "facelets": list(spec.solved_state().colors),
        "pairs": [
            {"axis": p.axis, "parts": list(p.parts), "angle_deg": 2.0, "uncertainty_deg": 1.0}
            for p in spec.pairs()
        ],
    }


def _write(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "observation.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_round_trip(tmp_path: Path) -> None:
    observation = Observation.from_dict(_valid())
    path = tmp_path / "saved.json"
    save_observation(observation, path)
    assert load_observation(path) == observation
    assert observation.pairs[0] == PairObservation("x", (0, 1), 2.0, 1.0)


def test_alias_is_stored_as_the_canonical_name() -> None:
    observation = Observation.from_dict(_with({"puzzle": "3x3x3"}))
    assert observation.puzzle == "333"
    with pytest.raises(ValueError, match="cannot be judged as 222"):
        judge(get_puzzle("222"), observation)


def test_schema_documents_every_field() -> None:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert set(schema["required"]) == {"puzzle", "facelets"}
    assert set(Observation.from_dict(_valid()).to_dict()) <= set(schema["properties"])
    pair_schema = schema["properties"]["pairs"]["items"]
    assert set(_valid()["pairs"][0]) <= set(pair_schema["properties"])
    for prop in [*schema["properties"].values(), *pair_schema["properties"].values()]:
        assert prop["description"]


EXAMPLES = {
    "observation-solved-333.json": "solved",
    "observation-plus2-333.json": "+2",
    "observation-hidden-bottom-333.json": "solved",
    "observation-dnf-333.json": "DNF",
    "observation-twisted-corner-333.json": "review",
    "observation-tip-pyram.json": "+2",
    "observation-uncertain-222.json": "review",
}


@pytest.mark.parametrize(("name", "expected"), EXAMPLES.items())
def test_bundled_examples(repo_root: Path, name: str, expected: str) -> None:
    observation = load_observation(repo_root / "examples" / name)
    assert judge(get_puzzle(observation.puzzle), observation).verdict == expected


def test_every_bundled_example_is_listed(repo_root: Path) -> None:
    assert {p.name for p in (repo_root / "examples").glob("observation-*.json")} == set(EXAMPLES)


def _with(change: dict[str, Any]) -> dict[str, Any]:
    data = _valid()
    data.update(change)
    return data


def _with_pair(**change: Any) -> dict[str, Any]:
    data = _valid()
    data["pairs"][1].update(change)
    return data


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([], "JSON object"),
        (_with({"puzzle": "444"}), "unknown puzzle '444'"),
        (_with({"puzzle": 333}), '"puzzle" must be'),
        (_with({"facelets": ["white"] * 53}), "has 54 facelets, the observation lists 53"),
        (_with({"facelets": "white"}), '"facelets" must be a list'),
        (_with({"facelets": ["white"] * 53 + [""]}), "facelet 53 has an empty colour label"),
        (_with({"extra": 1}), "unknown field"),
        (_with({"pairs": {}}), '"pairs" must be a list'),
        (_with_pair(axis="q"), "pairs[1]: 3x3x3 Cube has no axis 'q'"),
        (_with_pair(parts=[0, 2]), "pairs[1]: parts must be adjacent"),
        (_with_pair(parts=[2, 3]), "pairs[1]: parts must be adjacent"),
        (_with_pair(parts=[0]), "pairs[1].parts must be two"),
        (_with_pair(angle_deg=50.0), "pairs[1]: angle_deg 50.0 is not a residual in [-45, 45]"),
        (_with_pair(angle_deg="5"), "pairs[1].angle_deg must be a number"),
        (_with_pair(uncertainty_deg=-1), "uncertainty_deg must be a number >= 0"),
        (_with_pair(axis="x", parts=[0, 1]), "listed twice"),
        (_with_pair(colour="red"), "pairs[1] has unknown field"),
    ],
)
def test_bad_observations_say_what_is_wrong(tmp_path: Path, data: object, message: str) -> None:
    with pytest.raises(ObservationError) as caught:
        load_observation(_write(tmp_path, data))
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_unreadable_files(tmp_path: Path) -> None:
    with pytest.raises(ObservationError, match="no observation file"):
        load_observation(tmp_path / "absent.json")
    broken = tmp_path / "broken.json"
    broken.write_text('{"puzzle": "333",', encoding="utf-8")
    with pytest.raises(ObservationError, match=r"not valid JSON \(line 1"):
        load_observation(broken)
