"""Measure the learned facelet detector on the rendered corpus and on real face photos.

    python -m judgecam.models.evaluate [--corpus tests/images] [--photos DIR] [--geometry]

Corpus, per view: is the puzzle found (at least 3 detections on true facelet centres, most
detections true), how far detected centres and corners are from the truth (pixels at
1280x720), recall of clearly visible facelets, false detections on empty mats. With
`--geometry`, also whether `fit_geometry` finds the puzzle from the learned facelets versus the
classical stages 1-2. Face photos: is the N x N face grid found (N x N facelets in the main
group, its N x N strongest, have the expected RGB in some rotation of the grid), learned versus
classical (its three best regions' N x N most confident facelets).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.models.data import view_truth
from judgecam.vision.detector_onnx import DEFAULT_MODEL, Detection, FaceletDetector

logger = logging.getLogger(__name__)

REFERENCE_WIDTH = 1280.0
#: A detection is on a true facelet if its centre is within this fraction of the facelet size.
MATCH_FRACTION = 0.35
#: Face photos: mean absolute RGB difference (0..255) below which a grid's colours agree. The
#: expected RGB were measured on these very photos, so the right grid agrees within a few units.
COLOR_AGREEMENT = 15.0


@dataclass
class ViewScore:
    """One corpus view compared with its truth."""

    image: str
    puzzle: str
    found: bool
    detections: int
    matched: int
    positives: int
    positives_found: int
    center_errors: list[float] = field(default_factory=list)  # at 1280 wide
    corner_errors: list[float] = field(default_factory=list)
    milliseconds: float = 0.0
    learned_fit: bool | None = None  # fit_geometry found the puzzle from the learned facelets
    classical_fit: bool | None = None  # stages 1-3 of the classical pipeline found it


def polygon_size(polygon: NDArray[np.float64]) -> float:
    return float(np.sqrt(abs(cv2.contourArea(polygon.astype(np.float32)))))


def best_roll_error(found: NDArray[np.float64], truth: NDArray[np.float64]) -> NDArray[np.float64]:
    """Per-corner distances for the cyclic corner order that fits best."""
    if len(found) != len(truth):
        return np.full(len(truth), np.inf)
    options = [np.linalg.norm(np.roll(found, r, axis=0) - truth, axis=1) for r in range(len(truth))]
    return options[int(np.argmin([o.mean() for o in options]))]


def score_view(
    detection: Detection, truth_view: dict[str, Any], root: Path, puzzle: str
) -> ViewScore:
    """Compare one detection with the truth of its view."""
    from judgecam.vision.detector_post import sort_clockwise

    view = view_truth(root, puzzle, truth_view)
    factor = REFERENCE_WIDTH / float(truth_view["image_size"][0])
    score = ViewScore(
        truth_view["image"], puzzle, False, detection.count, 0, int(view.positive.sum()), 0
    )
    if len(view.centers) == 0:
        score.found = detection.found  # on an empty mat "found" is a false alarm
        return score
    sizes = np.array([polygon_size(p) for p in view.polygons])
    used: set[int] = set()
    for center, polygon in zip(detection.centers_px, detection.polygons_px, strict=True):
        gaps = np.linalg.norm(view.centers - center, axis=1)
        nearest = int(np.argmin(gaps))
        if gaps[nearest] > MATCH_FRACTION * sizes[nearest] or nearest in used:
            continue
        used.add(nearest)
        score.matched += 1
        if view.positive[nearest]:
            score.positives_found += 1
            score.center_errors.append(float(gaps[nearest]) * factor)
            truth_polygon = sort_clockwise(view.polygons[nearest])
            errors = best_roll_error(sort_clockwise(polygon), truth_polygon)
            score.corner_errors.extend(float(e) * factor for e in errors)
    score.found = bool(
        detection.found and score.matched >= 3 and score.matched >= 0.5 * detection.count
    )
    return score


def geometry_found(
    image: NDArray[np.uint8], detection: Detection, puzzle: str, truth_view: dict[str, Any]
) -> tuple[bool, bool]:
    """(learned, classical): does stage 3 find the puzzle from each path's facelets?"""
    from judgecam.vision.detector_onnx import to_facelets
    from judgecam.vision.evaluate import intrinsics_from_truth
    from judgecam.vision.geometry import fit_geometry
    from judgecam.vision.model import puzzle_model
    from judgecam.vision.pipeline import analyse_view

    model = puzzle_model(puzzle)
    intrinsics = intrinsics_from_truth(truth_view)
    learned = bool(
        detection.found and fit_geometry(to_facelets(image, detection), model, intrinsics).found
    )
    classical = analyse_view(image, model, intrinsics).fit
    return learned, bool(classical is not None and classical.found)


def evaluate_corpus(
    detector: FaceletDetector, corpus: Path, limit: int | None, geometry: bool = False
) -> list[ViewScore]:
    manifest_path = corpus / "manifest.json"
    if manifest_path.is_file():
        names = [e["truth"] for e in json.loads(manifest_path.read_text())["captures"]]
    else:  # a corpus being rendered: every truth file written so far
        names = sorted(p.name for p in corpus.glob("c*.json"))
    scores = []
    for name in names[:limit]:
        truth = json.loads((corpus / name).read_text())
        sides = 3 if truth["puzzle"] == "pyram" else 4
        for view in truth["views"]:
            image = cv2.imread(str(corpus / view["image"]), cv2.IMREAD_COLOR)
            if image is None:
                raise FileNotFoundError(corpus / view["image"])
            start = time.perf_counter()
            detection = detector.detect(np.asarray(image, np.uint8), sides)
            elapsed = (time.perf_counter() - start) * 1000.0
            score = score_view(detection, view, corpus, truth["puzzle"])
            score.milliseconds = elapsed
            if geometry and truth["puzzle"] != "none":
                score.learned_fit, score.classical_fit = geometry_found(
                    np.asarray(image, np.uint8), detection, truth["puzzle"], view
                )
            scores.append(score)
    return scores


def summarise_corpus(scores: list[ViewScore]) -> dict[str, Any]:
    puzzle_views = [s for s in scores if s.puzzle != "none"]
    empty_views = [s for s in scores if s.puzzle == "none"]
    centers = [e for s in puzzle_views for e in s.center_errors]
    corners = [e for s in puzzle_views for e in s.corner_errors]
    by_puzzle: dict[str, Any] = {}
    for puzzle in sorted({s.puzzle for s in puzzle_views}):
        group = [s for s in puzzle_views if s.puzzle == puzzle]
        errors = [e for s in group for e in s.center_errors]
        by_puzzle[puzzle] = {
            "views": len(group),
            "found": sum(s.found for s in group),
            "median_center_px": round(float(np.median(errors)), 2) if errors else None,
        }
    return {
        "puzzle_views": len(puzzle_views),
        "found": sum(s.found for s in puzzle_views),
        "found_rate": round(sum(s.found for s in puzzle_views) / max(1, len(puzzle_views)), 4),
        "not_found": [s.image for s in puzzle_views if not s.found],
        "recall_clear_facelets": round(
            sum(s.positives_found for s in puzzle_views)
            / max(1, sum(s.positives for s in puzzle_views)),
            4,
        ),
        "false_detections": sum(s.detections - s.matched for s in puzzle_views),
        "median_center_px_1280": round(float(np.median(centers)), 3) if centers else None,
        "p90_center_px_1280": round(float(np.percentile(centers, 90)), 3) if centers else None,
        "median_corner_px_1280": round(float(np.median(corners)), 3) if corners else None,
        "empty_views": len(empty_views),
        "empty_false_alarms": sum(s.found for s in empty_views),
        "median_ms_per_view": round(float(np.median([s.milliseconds for s in scores])), 2),
        "by_puzzle": by_puzzle,
        "geometry_found_learned": sum(bool(s.learned_fit) for s in puzzle_views),
        "geometry_found_classical": sum(bool(s.classical_fit) for s in puzzle_views),
        "geometry_only_learned": [
            s.image for s in puzzle_views if s.learned_fit and not s.classical_fit
        ],
        "geometry_only_classical": [
            s.image for s in puzzle_views if s.classical_fit and not s.learned_fit
        ],
    }


def grid_order(centers: NDArray[np.float64], n: int) -> NDArray[np.int64]:
    """Indices of n*n centres row by row (top row first, left to right), from a roughly
    frontal view."""
    by_row = np.argsort(centers[:, 1], kind="stable")
    rows = [by_row[i * n : (i + 1) * n] for i in range(n)]
    return np.concatenate([row[np.argsort(centers[row, 0], kind="stable")] for row in rows])


def grid_matches_colors(
    image: NDArray[np.uint8],
    polygons: NDArray[np.float64],
    expected_rgb: NDArray[np.float64],
    n: int,
) -> tuple[bool, float]:
    """Do the facelets (n*n polygons) have the expected colours in some rotation of the grid?"""
    from judgecam.vision.segment import sample_color

    centers = polygons.mean(axis=1)
    order = grid_order(centers, n)
    rgb = np.array([sample_color(image, polygons[i])[0][::-1] for i in order]).reshape(n, n, 3)
    target = expected_rgb.reshape(n, n, 3)
    best = min(float(np.abs(np.rot90(rgb, k) - target).mean()) for k in range(4))
    return best < COLOR_AGREEMENT, best


def classical_facelets(image: NDArray[np.uint8], n: int) -> NDArray[np.float64]:
    """The classical stages 1-2 on a face photo: the n*n most confident facelets of its three
    best candidate regions (the same rule as for the learned detections)."""
    from judgecam.vision.locate import find_puzzles
    from judgecam.vision.segment import segment_facelets

    polygons, confidences = [], []
    for region in find_puzzles(image).candidates[:3]:
        for facelet in segment_facelets(image, region).facelets:
            if len(facelet.corners_px) == 4:
                polygons.append(facelet.corners_px)
                confidences.append(facelet.confidence)
    if not polygons:
        return np.zeros((0, 4, 2))
    order = np.argsort(-np.array(confidences), kind="stable")[: n * n]
    return np.array([polygons[i] for i in order], np.float64).reshape(-1, 4, 2)


def evaluate_photos(detector: FaceletDetector, photos: Path) -> dict[str, Any]:
    """Face-grid detection on the real face photos, learned versus classical."""
    faces = "ULFRBD"
    rows = []
    for case in sorted(p for p in photos.iterdir() if p.is_dir()):
        n = 2 if case.name.startswith("2x2x2") else 3
        expected = json.loads((case / "expected-rgb.json").read_text())
        for side_path in sorted(case.glob("rubiks-side-*.jpg")):
            face = side_path.stem[-1]
            first = faces.index(face) * n * n + 1
            rgb = np.array([expected[str(first + k)] for k in range(n * n)], np.float64)
            image = np.asarray(cv2.imread(str(side_path), cv2.IMREAD_COLOR), np.uint8)
            row: dict[str, Any] = {"photo": f"{case.name}/{side_path.name}", "n": n}
            detection = detector.detect(image, 4)
            strongest = detection.polygons_px[np.argsort(-detection.confidences)[: n * n]]
            for name, polygons in (
                ("learned", strongest),
                ("classical", classical_facelets(image, n)),
            ):
                found, error = False, None
                if len(polygons) == n * n:
                    found, error = grid_matches_colors(image, polygons, rgb, n)
                row[name] = {
                    "facelets": detection.count if name == "learned" else len(polygons),
                    "grid_found": found,
                    "color_error": None if error is None else round(error, 1),
                }
            rows.append(row)
    return {
        "photos": len(rows),
        "learned_grid_found": sum(r["learned"]["grid_found"] for r in rows),
        "classical_grid_found": sum(r["classical"]["grid_found"] for r in rows),
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m judgecam.models.evaluate",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument(
        "--corpus", type=Path, default=Path(__file__).resolve().parents[1] / "tests" / "images"
    )
    parser.add_argument("--photos", type=Path, default=Path("/work/shared/data/face-photos"))
    parser.add_argument("--limit", type=int, default=None, help="first N captures only")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--geometry",
        action="store_true",
        help="also fit stage 3 to learned and classical facelets (slow)",
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    detector = FaceletDetector(args.model, threads=args.threads)
    report: dict[str, Any] = {"model": str(args.model)}
    report["corpus"] = summarise_corpus(
        evaluate_corpus(detector, args.corpus, args.limit, args.geometry)
    )
    if args.photos.is_dir():
        report["face_photos"] = evaluate_photos(detector, args.photos)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
