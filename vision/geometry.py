"""Stage 3: fit the puzzle model to the segmented facelets and measure every part's rotation.

1. Body pose. Every facelet is a known planar polygon, so one detected sticker hypothesised to
   be one model sticker gives a pose (IPPE, two solutions). The puzzle's own symmetry makes the
   choice of model sticker matter only up to its orbit, so a few seeds x a few orbit
   representatives x corner rolls are tried; each pose is scored by how many detected facelets
   land on projected model facelets, and the best is refined with PnP on all its inliers.
   The stickers' size relative to the cell is first read off the image (`_image_fraction`):
   a single sticker's pose is only as far away as the guess says.
2. Parts. For every axis and every part along it, a 1-DoF search over the part's rotation
   about the axis (within half a turning step: the part's facelet set repeats every step), then
   Gauss-Newton on the matched sticker corners. The residuals give each angle's standard error.
3. Assignment. The axis whose part rotations explain the most facelets decides which model
   facelet each detection is, in the SNAPPED state (each part at its nearest aligned position).
   The body pose is re-fitted with the parts turned, and the parts again (two rounds).
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.vision.camera import Intrinsics, project, rotation_matrix, to_pixels
from judgecam.vision.model import AxisModel, PuzzleModel, rotation_about
from judgecam.vision.segment import Facelet
from judgecam.vision.stats import median

if TYPE_CHECKING:
    from cv2.typing import MatLike

logger = logging.getLogger(__name__)

FloatArray = NDArray[np.float64]

#: A detection matches a projected model facelet within this fraction of its size.
MATCH_TOLERANCE = 0.4
#: A detection matches a facelet only if its size is within this ratio of the projected one.
SIZE_RATIO_RANGE = (0.6, 1.6)
#: A body pose whose best axis fit explains this fraction of the facelets is taken at once.
EXPLAINED_ENOUGH = 0.9
#: A detection a trial fit places within this fraction of its size (RMS corner error) counts
#: as explained tightly when the turning axes are compared (`_trial_fit`).
TIGHT_STICKER_ERROR = 0.15
#: Fewest matched facelets that measure one part's angle.
MIN_PART_FACELETS = 2
#: A part is measured only if at least this fraction of its clearly visible facelets matched.
MIN_PART_COVERAGE = 0.5
#: Facelets facing the camera at least this much (cosine) should be detected if not hidden.
CLEARLY_VISIBLE = 0.35
#: Fewest matched facelets for a pose to count as "the puzzle was found".
MIN_INLIERS = 4
#: Angle search grid (degrees) before the least-squares refinement.
GRID_STEP_DEG = 5.0
#: Coarser grid for the quick first look at every axis.
QUICK_GRID_STEP_DEG = 9.0
#: A tip turned further than this (degrees) is left out of the body's second fit.
TIP_OFF_BODY_DEG = 2.0


#: Stated uncertainty = COVERAGE_FACTOR x standard error + UNCERTAINTY_FLOOR_DEG. The factor is
#: above the Gaussian 1.96 because corner residuals within one sticker are correlated and the
#: model (flat stickers, exact dimensions) is only approximately true.
COVERAGE_FACTOR = 2.5
UNCERTAINTY_FLOOR_DEG = 0.5


def stated_uncertainty(sigma_deg: float) -> float:
    """The uncertainty reported for an angle with the fit's standard error `sigma_deg`."""
    return COVERAGE_FACTOR * sigma_deg + UNCERTAINTY_FLOOR_DEG


@dataclass(frozen=True, eq=False)
class PartAngle:
    """One part's rotation about its axis relative to the body: near (-step/2, step/2], its
    matched facelets snapped to match; whole steps beyond that where an adjacent pair needs it
    (see `_snap_pairs_consistently`)."""

    angle_deg: float
    sigma_deg: float  # standard error from the fit residuals
    facelets: int  # matched facelets that measured it


@dataclass(frozen=True, eq=False)
class PairAngle:
    """Relative rotation of parts[1] with respect to parts[0] about the axis direction."""

    axis: str
    parts: tuple[str, str]
    angle_deg: float  # wrapped to [-step/2, step/2]
    sigma_deg: float
    facelets: int  # facelets behind the weaker of the two part measurements


@dataclass(frozen=True, eq=False)
class GeometryFit:
    """Stage 3 result for one view."""

    found: bool
    rvec: FloatArray  # (3,) model -> camera
    tvec: FloatArray  # (3,)
    assignment: NDArray[np.int64]  # per detected facelet: snapped model facelet index or -1
    part_angles: tuple[tuple[PartAngle | None, ...], ...]  # per axis, per part
    pairs: tuple[PairAngle, ...]
    active_axis: int  # axis whose part rotations were used for the assignment
    reprojection_px: float  # median per-facelet RMS corner residual of the final fit
    inlier_fraction: float  # matched detections / detections on the puzzle or of its size
    confidence: float
    problems: tuple[str, ...]
    #: The same, counting as matched the detections set aside on parts whose angle was not
    #: measured (`_drop_unmeasured_placements`): the pose explains them, the angle does not.
    pose_inlier_fraction: float = 0.0
    #: Per detected facelet: the RMS distance of its outline's corners from its cell's, as a
    #: fraction of its size (NaN where not placed; empty where the fit was not fitted to the
    #: outlines, e.g. placed by the rig's poses). See `loose_placed.py`.
    placement_errors: FloatArray = field(default_factory=lambda: np.zeros(0))
    #: Per axis: the parts measured on another group of the active axis's parts, for tips
    #: only that group shows (`_tips_on_other_groups`); () where none.
    tips_elsewhere: tuple[tuple[PartAngle | None, ...], ...] = ()

    def visible_facelets(self) -> NDArray[np.int64]:
        """Model facelet indices seen in this view."""
        return np.unique(self.assignment[self.assignment >= 0])


def _oriented_corners(model: PuzzleModel) -> FloatArray:
    """Model sticker corners ordered clockwise as seen from outside (matches screen order)."""
    return _oriented_corners_of(model.name, model)


@functools.lru_cache(maxsize=8)
def _oriented_corners_of(name: str, model: PuzzleModel) -> FloatArray:
    corners = model.facelet_corners.copy()
    for index in range(len(corners)):
        c = corners[index]
        turn = np.cross(c[1] - c[0], c[2] - c[1])
        if np.dot(turn, model.facelet_normals[index]) > 0:
            corners[index] = c[::-1]
    return corners


@functools.cache
def _orbit_representatives(model: PuzzleModel) -> tuple[int, ...]:
    """One facelet per orbit of the puzzle's rotation group (a per-model constant, cached)."""
    seen: set[int] = set()
    representatives = []
    permutations = [model.facelet_permutation(rotation) for rotation in model.symmetries]
    for index in range(model.facelet_count):
        if index in seen:
            continue
        representatives.append(index)
        seen.update(int(p[index]) for p in permutations)
    return tuple(representatives)


def _facing(
    normals: FloatArray,
    points: FloatArray,
    rotation: FloatArray,
    translation: FloatArray,
    min_cosine: float = 0.12,
) -> NDArray[np.bool_]:
    """Which model facelets (rotated normals/centres) face the camera, not at grazing angles."""
    # Rotation preserves dot products: n_cam . p_cam = n . (p + R^T t), |p_cam| = |p + R^T t|.
    offset = points + translation @ rotation
    dot = np.einsum("...i,...i->...", normals, offset)
    squared = np.einsum("...i,...i->...", offset, offset)
    return np.asarray(-dot > min_cosine * np.sqrt(squared))


def _match(
    predicted: FloatArray,
    detected: FloatArray,
    sizes: FloatArray,
    tolerance: float,
    compatible: NDArray[np.bool_] | None = None,
) -> tuple[NDArray[np.int64], FloatArray]:
    """One-to-one nearest matches: for each detection, a predicted index or -1, and distances."""
    if len(predicted) == 0 or len(detected) == 0:
        return np.full(len(detected), -1, dtype=np.int64), np.full(len(detected), np.inf)
    along_x = detected[:, :1] - predicted[:, 0]
    along_y = detected[:, 1:] - predicted[:, 1]
    gap = np.sqrt(along_x * along_x + along_y * along_y)
    limit = tolerance * sizes[:, None]
    close = gap < limit
    if compatible is not None:
        close &= compatible
    rows, cols = np.nonzero(close)
    gaps = gap[rows, cols]
    order = np.argsort(gaps)
    # The greedy pass on Python lists (no NumPy scalar indexing in the loop).
    matches = [-1] * len(detected)
    matched_gaps = [np.inf] * len(detected)
    used: set[int] = set()
    for row, col, distance in zip(
        rows[order].tolist(), cols[order].tolist(), gaps[order].tolist(), strict=True
    ):
        if matches[row] >= 0 or col in used:
            continue
        matches[row] = col
        matched_gaps[row] = distance
        used.add(col)
    return np.array(matches, dtype=np.int64), np.array(matched_gaps, dtype=np.float64)


@dataclass
class _Problem:
    """Everything the fit needs, precomputed once per view."""

    model: PuzzleModel
    matrix: FloatArray
    corners: FloatArray  # (n, K, 2) undistorted detection corners
    centers: FloatArray  # (n, 2)
    sizes: FloatArray  # (n,)
    model_corners: FloatArray  # (F, K, 3) sticker corners, oriented like the detections
    sticker_area_mm2: float = 0.0  # area of one sticker at the current sticker fraction
    #: `_match_axis` results with every part aligned, by pose, pool and sticker area (see there).
    aligned_matches: dict[bytes, tuple[NDArray[np.int64], NDArray[np.int64]]] = field(
        default_factory=dict
    )
    #: `_aligned_projection` results, by pose.
    aligned_projections: dict[bytes, tuple[NDArray[np.bool_], FloatArray]] = field(
        default_factory=dict
    )


def _sticker_corners(model: PuzzleModel, fraction: float) -> FloatArray:
    """Cell corners shrunk about each facelet centre to the sticker's size."""
    cells = _oriented_corners(model)
    centers = model.facelet_centers[:, None, :]
    return np.asarray(centers + (cells - centers) * fraction, dtype=np.float64)


def _sticker_area(model: PuzzleModel, fraction: float) -> float:
    """Mean sticker area (mm^2): the cell polygon's area scaled by fraction squared."""
    return float(_mean_cell_area(model) * fraction**2)


@functools.cache
def _mean_cell_area(model: PuzzleModel) -> np.float64:
    """Mean area (mm^2) of the facelet cell polygons (a per-model constant)."""
    cells = model.facelet_corners
    edges1 = cells[:, 1:-1] - cells[:, :1]
    edges2 = cells[:, 2:] - cells[:, :1]
    areas = 0.5 * np.linalg.norm(np.cross(edges1, edges2), axis=-1).sum(axis=1)
    return np.float64(np.mean(areas))


#: Predictions are compared with the detections in batches of at most this many distances:
#: (B, n, m) temporaries that stay in the CPU cache (all body poses at once do not, and take
#: three times as long).
CHUNK_DISTANCES = 32768


def _nearest_squared(
    predicted: FloatArray, valid: NDArray[np.bool_] | None, detected: FloatArray
) -> FloatArray:
    """Squared distance (B, n) from each detection to its nearest valid prediction (B, m, 2);
    `valid` None: every prediction."""
    if valid is not None and predicted.size // 2 * len(detected) > CHUNK_DISTANCES:
        predicted, valid = _valid_first(predicted, valid)
    step = max(1, CHUNK_DISTANCES // max(predicted.shape[1] * len(detected), 1))
    if len(predicted) <= step:
        return _nearest_squared_batch(predicted, valid, detected)
    return np.concatenate(
        [
            _nearest_squared_batch(
                predicted[start : start + step],
                None if valid is None else valid[start : start + step],
                detected,
            )
            for start in range(0, len(predicted), step)
        ]
    )


def _valid_first(
    predicted: FloatArray, valid: NDArray[np.bool_]
) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Each batch member's valid predictions moved first (in order) and the columns beyond the
    most any member has dropped: the same nearest distances from fewer. Worth it for large
    batches: a body pose sees at most half of a cube's facelets (`_score_poses`: 144 poses,
    a quarter less time)."""
    width = int(np.count_nonzero(valid, axis=1).max()) if len(valid) else 0
    order = np.argsort(~valid, axis=1, kind="stable")[:, :width]
    return (
        np.take_along_axis(predicted, order[..., None], axis=1),
        np.take_along_axis(valid, order, axis=1),
    )


def _nearest_squared_batch(
    predicted: FloatArray, valid: NDArray[np.bool_] | None, detected: FloatArray
) -> FloatArray:
    """`_nearest_squared` of one batch."""
    # Invalid predictions are moved infinitely far away (before differencing: (B, m) values
    # instead of (B, n, m)), then the coordinates are differenced one at a time: (B, n, m)
    # temporaries instead of (B, n, m, 2) and no einsum set-up.
    predicted_x, predicted_y = predicted[..., 0], predicted[..., 1]
    if valid is not None:
        predicted_x = np.where(valid, predicted_x, np.inf)
        predicted_y = np.where(valid, predicted_y, np.inf)
    along_x = predicted_x[:, None, :] - detected[None, :, None, 0]
    along_y = predicted_y[:, None, :] - detected[None, :, None, 1]
    np.multiply(along_x, along_x, out=along_x)
    np.multiply(along_y, along_y, out=along_y)
    along_x += along_y
    if along_x.shape[2] == 0:
        return np.full(along_x.shape[:2], np.inf)
    return np.asarray(along_x.min(axis=2), dtype=np.float64)


def _nearest_counts(
    predicted: FloatArray,
    valid: NDArray[np.bool_],
    detected: FloatArray,
    sizes: FloatArray,
) -> tuple[FloatArray, FloatArray]:
    """For a batch of predictions (B, m, 2): a soft inlier count and the mean inlier residual.

    Each detection scores 1 - (d / tolerance)^2 for its nearest prediction at distance d (in
    sticker sizes), 0 beyond the tolerance: tight fits beat loose ones that merely land near
    facelets (a pose shifted by one layer). Not one-to-one (cheap, for ranking hypotheses); the
    final matches are one-to-one.
    """
    return _squared_counts(_nearest_squared(predicted, valid, detected), sizes)


def _squared_counts(
    squared: FloatArray, sizes: FloatArray, floor: FloatArray | None = None
) -> tuple[FloatArray, FloatArray]:
    """`_nearest_counts` from the squared nearest distances (B, n) it computes; `floor` (n,):
    squared distances to predictions shared by the whole batch, computed once by the caller
    instead of once per batch member."""
    if floor is not None:
        squared = np.minimum(squared, floor[None, :])
    nearest = np.sqrt(squared) / sizes[None, :]  # (B, n)
    inside = nearest < MATCH_TOLERANCE
    counts = inside.sum(axis=1)
    residual = np.where(inside, nearest, 0.0).sum(axis=1) / np.maximum(counts, 1)
    soft = np.maximum(1.0 - (nearest / MATCH_TOLERANCE) ** 2, 0.0).sum(axis=1)
    return np.asarray(soft, dtype=np.float64), np.asarray(residual, dtype=np.float64)


def _rotated(rotations: FloatArray, points: FloatArray) -> tuple[FloatArray, ...]:
    """The x, y and z planes (B, n) of every rotation (B, 3, 3) applied to every point (n, 3).

    Each is summed as np.einsum("bij,nj->bni") sums its three products, (r0 p0 + r2 p2) + r1 p1,
    so the values have the same bits as that einsum's; coordinate planes keep the arrays
    contiguous, which makes this several times faster on a batch of body poses.
    """
    p0, p1, p2 = points[:, 0], points[:, 1], points[:, 2]
    return tuple(
        (rotations[:, row, 0:1] * p0 + rotations[:, row, 2:3] * p2) + rotations[:, row, 1:2] * p1
        for row in range(3)
    )


def _score_poses(
    problem: _Problem, rotations: FloatArray, translations: FloatArray
) -> tuple[FloatArray, FloatArray]:
    """Soft inlier counts and mean residuals of a batch of body poses (B, 3, 3), (B, 3).

    Computed per coordinate plane (B, n), with each sum in the order np.einsum and
    np.linalg.norm use over an axis of three ((a + c) + b and (a + b) + c): the same values as
    the (B, n, 3) arrays would give.
    """
    model = problem.model
    x, y, z = _rotated(rotations, model.facelet_centers)
    x, y, z = x + translations[:, 0:1], y + translations[:, 1:2], z + translations[:, 2:3]
    normal_x, normal_y, normal_z = _rotated(rotations, model.facelet_normals)
    distance = np.sqrt((x * x + y * y) + z * z)
    facing = -((normal_x * x + normal_z * z) + normal_y * y) / distance > 0.12
    depth = np.maximum(z, 1e-6)
    matrix = problem.matrix
    predicted = np.stack(
        [x / depth * matrix[0, 0] + matrix[0, 2], y / depth * matrix[1, 1] + matrix[1, 2]], axis=-1
    )
    counts, residual = _nearest_counts(predicted, facing, problem.centers, problem.sizes)
    behind = z.min(axis=1) <= 0
    counts[behind] = 0
    residual[behind] = np.inf
    return counts, residual


def _score_pose(
    problem: _Problem, rotation: FloatArray, translation: FloatArray
) -> tuple[float, float]:
    model = problem.model
    if (model.facelet_centers @ rotation.T + translation)[:, 2].min() <= 0:
        return 0, np.inf
    facing = _facing(model.facelet_normals, model.facelet_centers, rotation, translation)
    predicted = project(model.facelet_centers, rotation, translation, problem.matrix)
    counts, residual = _nearest_counts(
        predicted[None], facing[None], problem.centers, problem.sizes
    )
    return float(counts[0]), float(residual[0])


@functools.cache
def _roll_index(sides: int) -> NDArray[np.intp]:
    """(roll, corner) -> corner index of every cyclic roll of `sides` corners (a constant)."""
    index = (np.arange(sides)[None, :] + np.arange(sides)[:, None]) % sides
    index.flags.writeable = False
    return index


def _best_rolls(projected: FloatArray, detected: FloatArray) -> FloatArray:
    """Detected corners (m, K, 2) cyclically rolled to best match projected corners (m, K, 2)."""
    rolls = detected[:, _roll_index(detected.shape[1])]  # (m, roll, K, 2)
    costs = np.sum((rolls - projected[:, None]) ** 2, axis=(2, 3))
    best = np.argmin(costs, axis=1)
    return np.asarray(rolls[np.arange(len(detected)), best], dtype=np.float64)


def _correspondences(
    problem: _Problem,
    model_normals: FloatArray,
    model_centers: FloatArray,
    rotation: FloatArray,
    translation: FloatArray,
    candidates: NDArray[np.int64] | None = None,
    detections: NDArray[np.int64] | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """One-to-one (detection, model facelet) matches among candidate facelets (None: all) and
    detections (None: all)."""
    if candidates is None:
        visible = np.flatnonzero(_facing(model_normals, model_centers, rotation, translation))
    else:
        facing = _facing(
            model_normals[candidates], model_centers[candidates], rotation, translation
        )
        visible = candidates[facing]
    pool = np.arange(len(problem.centers)) if detections is None else detections
    centers = model_centers[visible]
    in_camera = centers @ rotation.T + translation
    predicted = to_pixels(in_camera, problem.matrix)
    expected = _expected_sizes(
        problem, model_normals[visible], centers, rotation, translation, in_camera
    )
    ratio = problem.sizes[pool][:, None] / np.maximum(expected[None, :], 1e-6)
    compatible = (ratio > SIZE_RATIO_RANGE[0]) & (ratio < SIZE_RATIO_RANGE[1])
    matched, _ = _match(
        predicted, problem.centers[pool], problem.sizes[pool], MATCH_TOLERANCE, compatible
    )
    hit = np.nonzero(matched >= 0)[0]
    return pool[hit].astype(np.int64), visible[matched[hit]].astype(np.int64)


def _expected_sizes(
    problem: _Problem,
    normals: FloatArray,
    centers: FloatArray,
    rotation: FloatArray,
    translation: FloatArray,
    in_camera: FloatArray | None = None,
) -> FloatArray:
    """Expected edge length (pixels, square root of area) of each facelet's projected sticker.

    A small planar patch of area A at camera position r, tilted by theta from the line of sight,
    covers A cos(theta) f^2 |r| / z^3 pixels. `in_camera`: the centres in the camera frame, if
    the caller has them.
    """
    if in_camera is None:
        in_camera = centers @ rotation.T + translation
    # np.linalg.norm(in_camera, axis=1) without its overhead: the same squares, sums and roots.
    distance = np.sqrt(np.add.reduce(in_camera * in_camera, axis=1))
    cosine = -np.einsum("ij,ij->i", normals @ rotation.T, in_camera) / distance
    cosine = np.minimum(np.maximum(cosine, 0.0), 1.0)
    focal2 = problem.matrix[0, 0] * problem.matrix[1, 1]
    area = (
        problem.sticker_area_mm2
        * cosine
        * focal2
        * distance
        / np.maximum(in_camera[:, 2], 1e-6) ** 3
    )
    return np.asarray(np.sqrt(area), dtype=np.float64)


def _pnp(
    problem: _Problem,
    detections: NDArray[np.int64],
    facelets: NDArray[np.int64],
    model_corners: FloatArray,
    rvec: FloatArray,
    tvec: FloatArray,
    rotation: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Refine a pose with every matched sticker corner (iterative PnP from the current pose;
    `rotation`: its matrix, if the caller has it)."""
    if rotation is None:
        rotation = rotation_matrix(rvec)
    object_points = model_corners[facelets].reshape(-1, 3)
    projected = project(model_corners[facelets], rotation, tvec, problem.matrix)
    image_points = _best_rolls(projected, problem.corners[detections]).reshape(-1, 2)
    rvec_new, tvec_new = cv2.solvePnPRefineLM(
        object_points,
        image_points,
        problem.matrix,
        None,
        rvec.copy().reshape(3, 1),
        tvec.copy().reshape(3, 1),
    )
    return np.asarray(rvec_new, np.float64).reshape(3), np.asarray(tvec_new, np.float64).reshape(3)


def _refine_body(
    problem: _Problem, rvec: FloatArray, tvec: FloatArray, rounds: int = 3
) -> tuple[FloatArray, FloatArray]:
    model = problem.model
    for _ in range(rounds):
        rotation = rotation_matrix(rvec)
        detections, facelets = _correspondences(
            problem, model.facelet_normals, model.facelet_centers, rotation, tvec
        )
        if len(detections) < 2:
            break
        rvec, tvec = _pnp(
            problem, detections, facelets, problem.model_corners, rvec, tvec, rotation
        )
    return rvec, tvec


def _body_poses(
    problem: _Problem, seeds: int = 3, count: int = 2
) -> list[tuple[FloatArray, FloatArray, float]]:
    """The most promising distinct body poses (from seed-sticker hypotheses), refined.

    Several are kept because with a part turned, the facelets of the rest of the body can fit
    a pose shifted by one layer almost as well; only fitting the parts tells them apart.
    """
    model = problem.model
    # Seeds: the largest patches (the most accurate single-sticker poses) and the patches most
    # like a typical sticker (the largest ones are sometimes clutter).
    typical = np.abs(np.log(problem.sizes / median(problem.sizes)))
    order = list(dict.fromkeys([*np.argsort(-problem.sizes)[:seeds], *np.argsort(typical)[:seeds]]))
    representatives = _orbit_representatives(model)
    # The solvers' (3, 1) vectors as they come, stacked once below (not converted one by one:
    # ~150 solutions a view).
    rvecs_found: list[MatLike] = []
    tvecs_found: list[MatLike] = []
    for seed in order:
        image_corners = problem.corners[seed]
        rolls = image_corners[_roll_index(len(image_corners))]
        for facelet in representatives:
            object_corners = problem.model_corners[facelet]
            for rolled in rolls:
                try:
                    if len(rolled) == 3:
                        # A triangle sticker: the perspective-3-point solutions (up to four).
                        solutions, rvecs, tvecs = cv2.solveP3P(
                            object_corners, rolled, problem.matrix, None, flags=cv2.SOLVEPNP_P3P
                        )
                    else:
                        solutions, rvecs, tvecs, _ = cv2.solvePnPGeneric(
                            object_corners, rolled, problem.matrix, None, flags=cv2.SOLVEPNP_IPPE
                        )
                except cv2.error:
                    continue
                rvecs_found.extend(rvecs[:solutions])
                tvecs_found.extend(tvecs[:solutions])
    if not rvecs_found:
        return []
    # cv2.Rodrigues directly: `rotation_matrix` without its argument checks, ~150 times a view.
    rotations = np.asarray(np.stack([cv2.Rodrigues(rvec)[0] for rvec in rvecs_found]), np.float64)
    rvecs_all = np.asarray(np.stack(rvecs_found), np.float64).reshape(-1, 3)
    tvecs_all = np.asarray(np.stack(tvecs_found), np.float64).reshape(-1, 3)
    counts, residuals = _score_poses(problem, rotations, tvecs_all)
    ranked = np.lexsort((residuals, -counts))
    hypotheses = [
        (float(counts[k]), float(residuals[k]), rvecs_all[k], tvecs_all[k]) for k in ranked
    ]
    refined: list[tuple[float, float, FloatArray, FloatArray]] = []
    for score, _, rvec, tvec in hypotheses[:4]:
        if score < 2:
            break
        rvec, tvec = _refine_body(problem, rvec, tvec, rounds=2)
        rotation = rotation_matrix(rvec)
        if any(_same_pose(model, rotation, tvec, other[2], other[3]) for other in refined):
            continue
        refined_score, refined_residual = _score_pose(problem, rotation, tvec)
        refined.append((refined_score, refined_residual, rvec, tvec))
    refined.sort(key=lambda item: (-item[0], item[1]))
    return [(rvec, tvec, score) for score, _, rvec, tvec in refined[:count]]


def _same_pose(
    model: PuzzleModel,
    rotation: FloatArray,
    tvec: FloatArray,
    other_rvec: FloatArray,
    other_tvec: FloatArray,
) -> bool:
    """Whether two body poses place the puzzle alike (up to its own symmetry)."""
    offset = tvec - other_tvec
    if math.sqrt(float(offset.dot(offset))) > 0.1 * model.radius:  # = np.linalg.norm(offset)
        return False
    other = rotation_matrix(other_rvec)
    relative = rotation.T @ other
    return bool(np.any(np.abs(relative - _stacked_symmetries(model)).max(axis=(1, 2)) < 0.1))


@functools.cache
def _stacked_symmetries(model: PuzzleModel) -> FloatArray:
    """The puzzle's symmetries as one (S, 3, 3) array (a per-model constant)."""
    return np.stack(model.symmetries)


@functools.cache
def _grid_rotations(
    direction: tuple[float, float, float], step_deg: float, grid_deg: float = GRID_STEP_DEG
) -> tuple[FloatArray, FloatArray]:
    """Search angles in [-step/2, step/2) and their rotation matrices about `direction`."""
    half = step_deg / 2.0
    angles = np.arange(-half, half, grid_deg)
    matrices = np.stack([rotation_about(np.asarray(direction), float(a)) for a in angles])
    return angles, matrices


@functools.cache
def _part_facelets(model: PuzzleModel, axis_index: int) -> tuple[NDArray[np.int64], ...]:
    """Per part of one axis, the indices of its facelets (a per-model constant)."""
    axis = model.axes[axis_index]
    return tuple(
        np.flatnonzero(axis.facelet_part == part).astype(np.int64)
        for part in range(len(axis.part_names))
    )


def _turned_model(
    model: PuzzleModel, axis_index: int, angles: Sequence[float]
) -> tuple[FloatArray, FloatArray]:
    """Facelet centres and normals with every part of one axis turned by its angle."""
    axis = model.axes[axis_index]
    centers = model.facelet_centers.copy()
    normals = model.facelet_normals.copy()
    part_facelets = _part_facelets(model, axis_index)
    for part, angle in enumerate(angles):
        if angle == 0.0:
            continue
        selected = part_facelets[part]
        turn = rotation_about(axis.direction, angle)
        centers[selected] = centers[selected] @ turn.T
        normals[selected] = normals[selected] @ turn.T
    return centers, normals


@functools.cache
def _part_on_grid(
    model: PuzzleModel, axis_index: int, part: int, grid_deg: float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Grid angles and one part's facelet centres and normals turned to each (a constant)."""
    axis = model.axes[axis_index]
    mine = axis.facelet_part == part
    grid, matrices = _grid_rotations(
        tuple(float(v) for v in axis.direction), axis.step_deg, grid_deg
    )
    centers = np.einsum("aij,nj->ani", matrices, model.facelet_centers[mine])
    normals = np.einsum("aij,nj->ani", matrices, model.facelet_normals[mine])
    centers.flags.writeable = False  # shared by every call: read only
    normals.flags.writeable = False
    return grid, centers, normals


def _grid_distances(
    problem: _Problem,
    rotation: FloatArray,
    translation: FloatArray,
    axis_index: int,
    part: int,
    pool: NDArray[np.int64],
    grid_deg: float = GRID_STEP_DEG,
) -> tuple[FloatArray, FloatArray] | None:
    """Grid angles of one part and the squared distance (A, n) of each pool detection to the
    part's nearest facelet facing the camera at each; None if none faces it at any angle.

    They depend on the pose, the part and the pool only, not on the other parts' angles: a
    fit's sweeps compute them once (`_fit_axis`).
    """
    grid, own_centers, own_normals = _part_on_grid(problem.model, axis_index, part, grid_deg)
    facing = _facing(own_normals, own_centers, rotation, translation)
    if not facing.any():
        return None
    predicted = project(own_centers, rotation, translation, problem.matrix)
    return grid, _nearest_squared(predicted, facing, problem.centers[pool])


def _grid_search_part(
    problem: _Problem,
    on_grid: tuple[FloatArray, FloatArray] | None,
    floor: FloatArray | None,
    pool: NDArray[np.int64],
) -> tuple[float, FloatArray] | None:
    """Best grid angle of one part with the others fixed, scoring all parts together, and the
    squared distance of each pool detection to the part's nearest facelet at that angle.

    `on_grid`: the part's `_grid_distances`. Scoring the union means a part cannot gain by
    covering detections its neighbours already explain: only its own facelets raise the score.
    `floor`: the squared distances of the pool detections to the other parts' nearest facelets
    (`_part_distances`), which do not move over the grid.
    """
    if on_grid is None:
        return None
    grid, squared = on_grid
    counts, residual = _squared_counts(squared, problem.sizes[pool], floor)
    best = int(np.lexsort((residual, -counts))[0])
    return float(grid[best]), squared[best]


def _part_distances(
    problem: _Problem,
    rotation: FloatArray,
    translation: FloatArray,
    axis_index: int,
    angles: Sequence[float],
    pool: NDArray[np.int64],
) -> list[FloatArray]:
    """Per part of one axis at its angle, the squared distance (n,) of each pool detection to
    the part's nearest facelet facing the camera (inf if none does).

    Computed once for all parts; a part's grid search (`_grid_search_part`) then takes its
    floor, the other parts' minimum, instead of projecting the other parts again.
    """
    model = problem.model
    if any(angles):
        centers, normals = _turned_model(model, axis_index, angles)
        facing = _facing(normals, centers, rotation, translation)
        predicted = project(centers[facing], rotation, translation, problem.matrix)
    else:
        facing, predicted = _aligned_projection(problem, rotation, translation)
    owner = model.axes[axis_index].facelet_part[facing]
    # One batch, a member per part: the facing facelets, each part's own valid.
    parts = np.arange(len(angles))
    mine = owner[None, :] == parts[:, None]
    batch = np.broadcast_to(predicted, (len(parts), *predicted.shape))
    return list(_nearest_squared(batch, mine, problem.centers[pool]))


def _aligned_projection(
    problem: _Problem, rotation: FloatArray, translation: FloatArray
) -> tuple[NDArray[np.bool_], FloatArray]:
    """Which facelets of the untouched model face the camera under a pose, and their projected
    centres: the same for every axis with its parts aligned (the quick look at each axis of a
    body pose), so computed once per pose (remembered in `problem`)."""
    key = rotation.tobytes() + translation.tobytes()
    if key not in problem.aligned_projections:
        model = problem.model
        facing = _facing(model.facelet_normals, model.facelet_centers, rotation, translation)
        predicted = project(model.facelet_centers[facing], rotation, translation, problem.matrix)
        problem.aligned_projections[key] = (facing, predicted)
    return problem.aligned_projections[key]


def _floor(distances: list[FloatArray], part: int) -> FloatArray | None:
    """The elementwise minimum of every other part's distances (None if there is none)."""
    others = [d for index, d in enumerate(distances) if index != part]
    return functools.reduce(np.minimum, others) if others else None


def _match_axis(
    problem: _Problem,
    rotation: FloatArray,
    translation: FloatArray,
    axis_index: int,
    angles: Sequence[float],
    pool: NDArray[np.int64],
    turned: tuple[FloatArray, FloatArray] | None = None,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """One-to-one matches of pool detections to facelets with the axis's parts turned
    (`turned`: the turned centres and normals, if the caller has them).

    With every part aligned, the model is the same whatever the axis: the quick look at every
    axis of a body pose (`fit_geometry`) starts each with that match, which is computed once.
    """
    if any(angles):
        centers, normals = turned or _turned_model(problem.model, axis_index, angles)
        return _correspondences(problem, normals, centers, rotation, translation, None, pool)
    # Everything the match depends on that changes within one fit.
    area = np.float64(problem.sticker_area_mm2)
    key = b"".join(array.tobytes() for array in (area, rotation, translation, pool))
    if key not in problem.aligned_matches:
        model = problem.model
        problem.aligned_matches[key] = _correspondences(
            problem, model.facelet_normals, model.facelet_centers, rotation, translation, None, pool
        )
    return problem.aligned_matches[key]


def _fit_axis(
    problem: _Problem,
    rotation: FloatArray,
    translation: FloatArray,
    axis_index: int,
    pool: NDArray[np.int64] | None,
    sweeps: int = 2,
    eligible: NDArray[np.bool_] | None = None,
) -> tuple[list[PartAngle | None], NDArray[np.int64]]:
    """Every part of one axis: angles and the snapped model facelet of each detection.

    Coordinate descent from the body pose (every part at 0): each part's angle is searched on a
    grid with the others fixed, then all detections are matched at once and each part's angle is
    refined by least squares on its own matches. With a `pool` (detections on the active axis's
    reference-aligned parts), `eligible` marks the model facelets on those parts: only they
    count as facelets a part should have shown.
    """
    model = problem.model
    axis = model.axes[axis_index]
    parts = len(axis.part_names)
    detections_pool = np.arange(len(problem.centers)) if pool is None else pool
    assignment = np.full(len(problem.centers), -1, np.int64)
    if len(detections_pool) == 0:
        return [None] * parts, assignment
    angles = [0.0] * parts
    sigmas = [np.inf] * parts
    counts = [0] * parts
    searched: list[float] | None = None  # the angles the last sweep's grid searches gave
    grid_deg = GRID_STEP_DEG if sweeps > 1 else QUICK_GRID_STEP_DEG
    on_grid = [
        _grid_distances(problem, rotation, translation, axis_index, part, detections_pool, grid_deg)
        for part in range(parts)
    ]
    for _sweep in range(sweeps):
        settled = list(angles)
        distances = _part_distances(
            problem, rotation, translation, axis_index, angles, detections_pool
        )
        for part in range(parts):
            found = _grid_search_part(
                problem, on_grid[part], _floor(distances, part), detections_pool
            )
            if found is not None:
                angles[part], distances[part] = found
        if angles == searched:
            # The grid searches gave what the last sweep's did: its matches and refinements
            # would repeat exactly, and so would every later sweep's (the second sweep of all
            # 82 fits of the corpus's first 40 captures ends here).
            angles = settled
            break
        searched = list(angles)
        detections, facelets = _match_axis(
            problem, rotation, translation, axis_index, angles, detections_pool
        )
        owner = axis.facelet_part[facelets]
        for part in range(parts):
            mine = owner == part
            counts[part] = int(mine.sum())
            if counts[part] == 0:
                continue
            angles[part], sigmas[part] = _refine_angle(
                problem,
                rotation,
                translation,
                axis.direction,
                angles[part],
                detections[mine],
                facelets[mine],
            )
    centers, normals = _turned_model(model, axis_index, angles)
    detections, facelets = _match_axis(
        problem, rotation, translation, axis_index, angles, detections_pool, (centers, normals)
    )
    owner = axis.facelet_part[facelets]
    half = axis.step_deg / 2.0
    in_view = _facing(normals, centers, rotation, translation, CLEARLY_VISIBLE)
    if eligible is not None:
        in_view = in_view & eligible
    result: list[PartAngle | None] = []
    for part in range(parts):
        mine = owner == part
        matched = int(np.count_nonzero(mine))
        expected = int(np.count_nonzero(in_view[_part_facelets(model, axis_index)[part]]))
        # A tiny part (a Pyraminx tip: three facelets, one per face) may show only one; its
        # corners alone fix its angle. Larger parts need two.
        needed = 1 if len(_part_facelets(model, axis_index)[part]) <= 3 else MIN_PART_FACELETS
        if matched < needed or matched < MIN_PART_COVERAGE * expected:
            # One facelet is no evidence of a layer's angle (it may be clutter next to it), and
            # a part whose facelets mostly are not where its angle puts them is not measured:
            # its real facelets are hidden or missed, and what matched may be something else.
            result.append(None)
            continue
        angle = angles[part]
        snapped = facelets[mine]
        steps = int(np.floor((angle + half) / axis.step_deg))
        if steps:
            # Report the angle within half a step of aligned; the matched facelets then snap
            # to the positions that many steps along (the part's nearest aligned position).
            angle -= steps * axis.step_deg
            snapped = model.facelet_permutation(
                rotation_about(axis.direction, steps * axis.step_deg)
            )[snapped]
        assignment[detections[mine]] = snapped
        result.append(PartAngle(float(angle), float(sigmas[part]), matched))
    _snap_pairs_consistently(model, axis, result, assignment)
    return result, assignment


def _snap_pairs_consistently(
    model: PuzzleModel,
    axis: AxisModel,
    angles: list[PartAngle | None],
    assignment: NDArray[np.int64],
) -> None:
    """Re-snap parts (in place) so that every adjacent pair's colours and angle agree.

    Each part is snapped to its nearest aligned position relative to the body, but a pair is
    judged on the parts' difference: two parts at +23 and -22.5 degrees are each snapped to 0,
    while their pair is -45.5 degrees apart, which the verdict is told as +44.5 (within half a
    step). The colours must then show the pair a step turned, or the rules engine judges the
    right angle on colours a quarter turn off. Walking outwards from the best-measured part,
    each part whose difference to its measured neighbour leaves half a step is re-snapped by
    whole steps (its facelets move with it; where it physically is does not change).
    """
    measured = [(a.facelets, index) for index, a in enumerate(angles) if a is not None]
    if len(measured) < 2:
        return
    step = axis.step_deg
    reference = max(measured)[1]
    order = [*range(reference + 1, len(angles)), *range(reference - 1, -1, -1)]
    for part in order:
        neighbour = part - 1 if part > reference else part + 1
        current, previous = angles[part], angles[neighbour]
        if current is None or previous is None:
            continue
        steps = int(np.round((current.angle_deg - previous.angle_deg) / step))
        if steps == 0:
            continue
        mine = np.nonzero(assignment >= 0)[0]
        mine = mine[axis.facelet_part[assignment[mine]] == part]
        assignment[mine] = model.facelet_permutation(rotation_about(axis.direction, steps * step))[
            assignment[mine]
        ]
        angles[part] = replace(current, angle_deg=current.angle_deg - steps * step)


def _refine_angle(
    problem: _Problem,
    rotation: FloatArray,
    translation: FloatArray,
    direction: FloatArray,
    angle: float,
    detections: NDArray[np.int64],
    facelets: NDArray[np.int64],
) -> tuple[float, float]:
    """Gauss-Newton on the corner reprojection error over one rotation angle (degrees)."""
    base = problem.model_corners[facelets].reshape(-1, 3)  # (m * K, 3)
    turn = rotation_about(direction, angle)  # also the first step's
    first = project(base @ turn.T, rotation, translation, problem.matrix).reshape(
        len(facelets), -1, 2
    )
    targets = _best_rolls(first, problem.corners[detections]).reshape(-1, 2)
    target_x, target_y = targets[:, 0], targets[:, 1]
    fx, fy = float(problem.matrix[0, 0]), float(problem.matrix[1, 1])
    cx, cy = float(problem.matrix[0, 2]), float(problem.matrix[1, 2])
    tx, ty, tz = translation.tolist()
    ax, ay, az = ((rotation @ direction) * (np.pi / 180.0)).tolist()
    dof = max(2 * len(base) - 1, 1)
    # The standard error is that of the last step taken: its residuals are kept and it is
    # computed once after the loop, not at every step.
    last: tuple[FloatArray, FloatArray, float] | None = None
    for step in range(4):
        # Camera-frame points and their derivative: d/dtheta (R_turn X) = axis x (R_turn X),
        # written per coordinate (no (N, 3) temporaries: this runs ~20 times per view).
        if step:
            turn = rotation_about(direction, angle)
        turned = base @ (rotation @ turn).T
        px, py, pz = turned[:, 0], turned[:, 1], turned[:, 2]
        inverse_depth = 1.0 / (pz + tz)
        ux, uy = (px + tx) * inverse_depth, (py + ty) * inverse_depth
        moving_z = ax * py - ay * px
        residual_x = ux * fx + cx - target_x
        residual_y = uy * fy + cy - target_y
        jacobian_x = (ay * pz - az * py - ux * moving_z) * inverse_depth * fx
        jacobian_y = (az * px - ax * pz - uy * moving_z) * inverse_depth * fy
        normal = float(jacobian_x @ jacobian_x + jacobian_y @ jacobian_y)
        if normal <= 1e-12:
            break
        delta = -float(jacobian_x @ residual_x + jacobian_y @ residual_y) / normal
        angle += min(max(delta, -5.0), 5.0)
        last = (residual_x, residual_y, normal)
        if abs(delta) < 1e-3:
            break
    if last is None:
        return angle, np.inf
    residual_x, residual_y, normal = last
    variance = float(residual_x @ residual_x + residual_y @ residual_y) / dof
    return angle, float(np.sqrt(variance / normal))


def _wrap(angle: float, step: float) -> float:
    half = step / 2.0
    return float((angle + half) % step - half)


#: Starting guess of sticker size / cell size (refined per view from the detections).
STICKER_FRACTION = 0.86
#: Two detected triangles are taken as neighbouring stickers when their centres are at most
#: this many sticker sizes apart (edge-sharing neighbours on one face, or the two stickers of
#: an edge piece, are about 1.0 apart; the nearest others, same-way-up neighbours, about 1.8).
NEIGHBOUR_DISTANCE = 1.4
#: Sticker-to-cell size ratios outside this range are not taken from a pair of detections.
FRACTION_RANGE = (0.5, 1.0)


def _nearest_corners(corners: FloatArray, other_centers: FloatArray) -> FloatArray:
    """Each sticker's (P, K, 2) two corners nearest its neighbour's centre (P, 2), in their
    cyclic order: those of the side facing it (a triangle's all but the one opposite; a
    square's shared side)."""
    distances = np.sum((corners - other_centers[:, None]) ** 2, axis=-1)
    nearest = np.sort(np.argsort(distances, axis=1, kind="stable")[:, :2], axis=1)
    # The last and the first corner: cyclically, the last comes first.
    wrapped = nearest[:, 1] - nearest[:, 0] != 1
    nearest[wrapped] = nearest[wrapped, ::-1]
    return np.asarray(np.take_along_axis(corners, nearest[:, :, None], axis=1), np.float64)


def _neighbour_pairs(
    centers: FloatArray, sizes: FloatArray
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Detected patches close and alike enough in size to be neighbouring stickers."""
    gaps = np.sqrt(np.sum((centers[:, None] - centers[None]) ** 2, axis=-1))
    ratio = sizes[:, None] / sizes[None, :]
    close = gaps < NEIGHBOUR_DISTANCE * 0.5 * (sizes[:, None] + sizes[None, :])
    close &= (ratio > SIZE_RATIO_RANGE[0]) & (ratio < SIZE_RATIO_RANGE[1])
    first, second = np.nonzero(np.triu(close, 1))
    return first, second


def _pair_fractions(
    corners: FloatArray, centers: FloatArray, first: NDArray[np.intp], second: NDArray[np.intp]
) -> FloatArray:
    """Sticker size relative to its cell from pairs of neighbouring stickers: four estimates
    (a row) a pair, none for a pair that does not look like neighbours.

    A sticker is its cell shrunk about the centre, so the line from a sticker's centre through
    a corner passes through the cell's corner, and two neighbours (on one face, or the two
    faces of an edge piece) share two cell corners, where their lines meet. A ratio of
    distances along a line is unchanged by an affine map (a small patch's projection): it is
    the fraction seen in the image from any view, including what segmentation trims off.
    """
    own = _nearest_corners(corners[first], centers[second])
    other = _nearest_corners(corners[second], centers[first])
    # Pair the corners by proximity.
    swap = np.sum((own[:, 0] - other[:, 0]) ** 2, axis=1) > np.sum(
        (own[:, 0] - other[:, 1]) ** 2, axis=1
    )
    other[swap] = other[swap, ::-1]
    toward_mine = own - centers[first][:, None]  # (P, 2 corners, 2)
    toward_theirs = other - centers[second][:, None]
    # Where the lines meet: centers[first] + a toward_mine = centers[second] + b toward_theirs.
    systems = np.stack([toward_mine, -toward_theirs], axis=-1)  # (P, 2 corners, 2, 2)
    lengths = np.sum(toward_mine * toward_mine, axis=-1)
    # (Nearly) parallel lines: not neighbours.
    meet = np.abs(np.linalg.det(systems)) >= 1e-3 * lengths
    meet = meet.all(axis=1)
    offsets = np.broadcast_to((centers[second] - centers[first])[:, None], toward_mine.shape)
    steps = np.linalg.solve(systems[meet], offsets[meet][..., None])[..., 0]  # (P', 2, 2)
    steps = steps.reshape(len(steps), 4)
    steps = steps[(steps > 0).all(axis=1)]
    fractions = 1.0 / steps
    inside = (fractions >= FRACTION_RANGE[0]).all(axis=1) & (fractions <= FRACTION_RANGE[1]).all(
        axis=1
    )
    return np.asarray(fractions[inside], np.float64)


def _image_fraction(corners: FloatArray, centers: FloatArray, sizes: FloatArray) -> float | None:
    """Sticker size relative to its cell as seen in the image: the median over neighbouring
    detected stickers (None if no pair gives one).

    The detected patches are smaller than the stickers by what segmentation trims off their
    edges (a pixel or two, so a larger share of small stickers: about 0.76 of a Pyraminx cell
    and 0.78 of a cube's against the starting guess). A single sticker's pose (P3P or IPPE)
    with too large model stickers puts the puzzle too far away, by about as much as the ratio
    is off: far enough that the scoring misses the right pose when a layer is turned.
    """
    found = _pair_fractions(corners, centers, *_neighbour_pairs(centers, sizes))
    return median(found) if found.size else None


def _estimate_fraction(problem: _Problem, rvec: FloatArray, tvec: FloatArray) -> float | None:
    """Sticker size relative to its cell, from detected vs projected cell areas."""
    model = problem.model
    rotation = rotation_matrix(rvec)
    detections, facelets = _correspondences(
        problem, model.facelet_normals, model.facelet_centers, rotation, tvec
    )
    if len(detections) < 3:
        return None
    cells = project(_oriented_corners(model)[facelets], rotation, tvec, problem.matrix)
    cell_areas = np.abs([cv2.contourArea(c.astype(np.float32)) for c in cells])
    ratios = problem.sizes[detections] ** 2 / np.maximum(cell_areas, 1e-6)
    return float(np.clip(np.sqrt(median(ratios)), 0.5, 1.0))


#: Parts of the active axis within this angle of each other are in line (one body).
REFERENCE_TOLERANCE_DEG = 4.0


@dataclass(frozen=True)
class _Reference:
    """A group of the active axis's parts in line with each other, on which the other axes are
    measured: its angle, the detections placed on it, and the model facelets on its parts."""

    angle_deg: float
    pool: NDArray[np.int64]
    eligible: NDArray[np.bool_]


def _references(
    problem: _Problem,
    axis_index: int,
    angles: list[PartAngle | None],
    assignment: NDArray[np.int64],
) -> list[_Reference]:
    """Each group of the active axis's measured parts in line with each other, the group of
    the best-seen part first.

    The other axes are measured only on one group's detections, with the body turned by its
    angle: a part turned on the active axis carries its facelets away from where the other
    axes' parts would put them. Which group shows more of the other axes depends on the
    puzzle and the view: a 3x3x3's turned layer may carry most of the stickers seen, a
    Pyraminx's turned layer and tip hide the other axes' tips, which lie on its base.
    """
    axis = problem.model.axes[axis_index]
    measured = sorted(
        ((a.facelets, a.angle_deg, part) for part, a in enumerate(angles) if a is not None),
        reverse=True,
    )
    if not measured:
        everything = np.ones(len(axis.facelet_part), dtype=bool)
        return [_Reference(0.0, np.nonzero(assignment >= 0)[0], everything)]
    matched = np.nonzero(assignment >= 0)[0]
    owners = axis.facelet_part[assignment[matched]]
    references: list[_Reference] = []
    grouped: set[int] = set()
    for _count, angle, part in measured:
        if part in grouped:
            continue
        # Within half a step of the body: a part re-snapped by whole steps (see
        # `_snap_pairs_consistently`) has the same shape there, and the other axes keep their
        # names.
        reference = _wrap(angle, axis.step_deg)
        aligned = [
            other
            for _c, other_angle, other in measured
            if abs(_wrap(other_angle - reference, axis.step_deg)) < REFERENCE_TOLERANCE_DEG
        ]
        grouped.update(aligned)
        references.append(
            _Reference(
                reference,
                matched[np.isin(owners, aligned)],
                np.isin(axis.facelet_part, aligned),
            )
        )
    return references


def _measure_other_axes(
    problem: _Problem,
    rotation: FloatArray,
    translation: FloatArray,
    active_axis: int,
    reference: _Reference,
    to_beat: tuple[int, int] | None = None,
) -> dict[int, list[PartAngle | None]] | None:
    """Every axis but the active one, measured on the reference group (see `_references`).

    None, with the axes left unmeasured, once the group provably cannot measure more than
    `to_beat` (`_measured_well` of the best group so far, which only a better one replaces):
    what is measured plus the most the axes left could add (`_most_measured`) is no more.
    """
    model = problem.model
    turned = rotation @ rotation_about(model.axes[active_axis].direction, reference.angle_deg)
    axes = [axis_index for axis_index in range(len(model.axes)) if axis_index != active_axis]
    measured: dict[int, list[PartAngle | None]] = {}
    for position, axis_index in enumerate(axes):
        if to_beat is not None:
            pairs, facelets = _measured_well(measured)
            most_pairs, most_facelets = _most_measured(model, axes[position:], len(reference.pool))
            if (pairs + most_pairs, facelets + most_facelets) <= to_beat:
                return None
        measured[axis_index] = _fit_axis(
            problem,
            turned,
            translation,
            axis_index,
            reference.pool,
            sweeps=1,
            eligible=reference.eligible,
        )[0]
    return measured


@dataclass(frozen=True, eq=False)
class _Measured:
    """The body pose and every part measured from it (`_measure_all`)."""

    rvec: FloatArray
    tvec: FloatArray
    rotation: FloatArray
    part_angles: list[list[PartAngle | None]]
    assignment: NDArray[np.int64]  # per detection: the active axis's snapped model facelet
    chosen: _Reference  # the group the other axes were measured on
    #: Every group's measurement that ran to the end, for `_tips_on_other_groups`.
    measured_on: list[tuple[_Reference, dict[int, list[PartAngle | None]] | None]]


def _measure_all(
    problem: _Problem,
    rvec: FloatArray,
    tvec: FloatArray,
    active_axis: int,
    active_angles: list[PartAngle | None],
    assignment: NDArray[np.int64],
    off_body: NDArray[np.bool_] | None,
) -> _Measured:
    """The body fitted (PnP, the active axis's parts at `active_angles`) on the placed
    detections but those on `off_body` facelets, then the active axis and, on the group of its
    parts that measures most (`_references`), every other axis."""
    model = problem.model
    part_angles: list[list[PartAngle | None]] = [[] for _ in model.axes]
    part_angles[active_axis] = active_angles
    turned = _turned_corners(problem, part_angles, active_axis)
    detections = np.nonzero(assignment >= 0)[0]
    if off_body is not None:
        detections = detections[~off_body[assignment[detections]]]
    if len(detections) >= MIN_INLIERS:
        rvec, tvec = _pnp(problem, detections, assignment[detections], turned, rvec, tvec)
    rotation = rotation_matrix(rvec)
    part_angles[active_axis], assignment = _fit_axis(problem, rotation, tvec, active_axis, None)
    best_others: dict[int, list[PartAngle | None]] | None = None
    chosen: _Reference | None = None
    measured_on: list[tuple[_Reference, dict[int, list[PartAngle | None]] | None]] = []
    for candidate in _references(problem, active_axis, part_angles[active_axis], assignment):
        to_beat = None if best_others is None else _measured_well(best_others)
        others = _measure_other_axes(problem, rotation, tvec, active_axis, candidate, to_beat)
        measured_on.append((candidate, others))
        if others is not None and (to_beat is None or _measured_well(others) > to_beat):
            best_others, chosen = others, candidate
    assert best_others is not None and chosen is not None
    for axis_index, angles in best_others.items():
        part_angles[axis_index] = angles
    return _Measured(rvec, tvec, rotation, part_angles, assignment, chosen, measured_on)


def _same_active_pairs(model: PuzzleModel, first: _Measured, again: _Measured, active: int) -> bool:
    """Whether a refit measures every adjacent pair of the active axis that the first fit did,
    each within the first's stated uncertainty: the refit corrects the body's lean, it must not
    find another reading of the turned layer."""
    axis = model.axes[active]
    for lower, upper in axis.pairs:
        a, b = first.part_angles[active][lower], first.part_angles[active][upper]
        c, d = again.part_angles[active][lower], again.part_angles[active][upper]
        if a is None or b is None:
            continue
        if c is None or d is None:
            return False
        change = _wrap((d.angle_deg - c.angle_deg) - (b.angle_deg - a.angle_deg), axis.step_deg)
        if abs(change) > stated_uncertainty(float(np.hypot(a.sigma_deg, b.sigma_deg))):
            return False
    return True


def _placed_on_body(measured: _Measured, off_body: NDArray[np.bool_]) -> int:
    """Detections the active axis's fit places on facelets not `off_body`."""
    placed = measured.assignment[measured.assignment >= 0]
    return int(np.count_nonzero(~off_body[placed]))


def _measured_well(others: dict[int, list[PartAngle | None]]) -> tuple[int, int]:
    """How much a reference group let the other axes measure: adjacent pairs with both parts
    measured, then facelets matched."""
    pairs = sum(
        a is not None and b is not None
        for angles in others.values()
        for a, b in itertools.pairwise(angles)
    )
    facelets = sum(a.facelets for angles in others.values() for a in angles if a is not None)
    return pairs, facelets


def _most_measured(model: PuzzleModel, axes: Sequence[int], detections: int) -> tuple[int, int]:
    """An upper bound of what `_measured_well` can count on these axes from a pool of this
    many detections: each measured part holds at least one of them (so an axis measures at
    most that many parts, adjacent pairs one fewer), and an axis's matches are one-to-one
    (at most every detection)."""
    pairs = sum(max(min(len(model.axes[a].part_names), detections) - 1, 0) for a in axes)
    return pairs, detections * len(axes)


def fit_geometry(
    facelets: tuple[Facelet, ...], model: PuzzleModel, intrinsics: Intrinsics
) -> GeometryFit:
    """Stage 3: body pose, every part's angle, and the snapped model facelet of each detection."""
    count = len(facelets)
    empty = GeometryFit(
        found=False,
        rvec=np.zeros(3),
        tvec=np.zeros(3),
        assignment=np.full(count, -1, np.int64),
        part_angles=tuple(tuple(None for _ in axis.part_names) for axis in model.axes),
        pairs=(),
        active_axis=-1,
        reprojection_px=np.inf,
        inlier_fraction=0.0,
        confidence=0.0,
        problems=(),
    )
    sides = model.facelet_corners.shape[1]
    usable = np.array(
        [i for i, f in enumerate(facelets) if f.corners_px.shape[0] == sides], np.int64
    )
    if len(usable) < MIN_INLIERS:
        return replace(empty, problems=(f"only {len(usable)} facelet-like patches found",))
    corners = intrinsics.undistort(np.stack([facelets[i].corners_px for i in usable]))
    centers = corners.mean(axis=1)
    sizes = np.sqrt(np.abs([cv2.contourArea(c.astype(np.float32)) for c in corners]))
    # The single-sticker seeds need the fraction right (see `_image_fraction`).
    seed_fraction = _image_fraction(corners, centers, sizes) or STICKER_FRACTION
    problem = _Problem(
        model=model,
        matrix=intrinsics.camera_matrix,
        corners=corners,
        centers=centers,
        sizes=sizes,
        model_corners=_sticker_corners(model, seed_fraction),
        sticker_area_mm2=_sticker_area(model, seed_fraction),
    )
    bodies = _body_poses(problem)
    if not bodies or bodies[0][2] < MIN_INLIERS * 0.5:
        return replace(empty, problems=("facelets do not fit the puzzle's shape",))
    fraction = _estimate_fraction(problem, bodies[0][0], bodies[0][1])
    if fraction is not None:
        problem.model_corners = _sticker_corners(model, fraction)
        problem.sticker_area_mm2 = _sticker_area(model, fraction)
    best: (
        tuple[
            tuple[int, int, float],
            FloatArray,
            FloatArray,
            int,
            list[PartAngle | None],
            NDArray[np.int64],
        ]
        | None
    ) = None
    for rvec, tvec, _ in bodies:
        if best is not None and best[0][0] >= EXPLAINED_ENOUGH * len(usable) and sides != 3:
            # The first pose explains (nearly) everything tightly (`_trial_fit`): no other is
            # worth trying. Not so with triangles: a wrong pose can explain a few small ones
            # loosely (a Pyraminx at half resolution, 7 of 7 at 8 % of a sticker against the
            # true pose's 6 at 1 %).
            break
        rvec, tvec = _refine_body(problem, rvec, tvec, rounds=1)
        rotation = rotation_matrix(rvec)
        # A quick look at every axis picks the one whose parts explain the facelets best:
        # most placed tightly, then most placed, then the smallest median error.
        for axis_index in range(len(model.axes)):
            angles, axis_assignment = _fit_axis(problem, rotation, tvec, axis_index, None, sweeps=1)
            trial: list[list[PartAngle | None]] = [[] for _ in model.axes]
            trial[axis_index] = angles
            tight, error = _trial_fit(
                problem,
                rotation,
                tvec,
                _turned_corners(problem, trial, axis_index),
                axis_assignment,
            )
            key = (tight, int((axis_assignment >= 0).sum()), -error)
            if best is None or key > best[0]:
                best = (key, rvec, tvec, axis_index, angles, axis_assignment)
    assert best is not None
    _, rvec, tvec, active_axis, active_angles, assignment = best
    # The body is fitted on every placed sticker; a tip of another axis then measured turned
    # out of line has pulled the body towards it (by about 1/20 of its angle in a Pyraminx
    # view, so that its angle read short), and the body is fitted again without it. The second
    # fit is kept if it places as many of the other stickers and reads the active axis's pairs
    # as the first did, within their uncertainty: a tip read turned by mistake (noisy outlines)
    # must not send the fit astray (corpus c0118 under JPEG 30: the refit read a layer at -56°
    # as +40°).
    measured = _measure_all(problem, rvec, tvec, active_axis, active_angles, assignment, None)
    off_body = np.logical_or.reduce(
        [_turned_tips(model, others) for _, others in measured.measured_on if others is not None]
    )
    if np.any(off_body):
        again = _measure_all(
            problem,
            measured.rvec,
            measured.tvec,
            active_axis,
            measured.part_angles[active_axis],
            measured.assignment,
            off_body,
        )
        if _placed_on_body(again, off_body) >= _placed_on_body(
            measured, off_body
        ) and _same_active_pairs(model, measured, again, active_axis):
            measured = again
    rvec, tvec, rotation = measured.rvec, measured.tvec, measured.rotation
    part_angles, assignment = measured.part_angles, measured.assignment
    chosen, measured_on = measured.chosen, measured.measured_on
    eligible = chosen.eligible

    turned = _turned_corners(problem, part_angles, active_axis)
    # The median, because a few stickers cut by a turned layer's overhang fit badly however good
    # the fit is; a wrong fit misses most of them.
    placed, errors = _corner_errors(problem, rotation, tvec, turned, assignment)
    rms = median(errors) if len(placed) else float("inf")
    assignment = _drop_doubtful_placements(
        problem, rotation, tvec, active_axis, part_angles, assignment
    )
    # Both fractions count the patches on the same outline (the second's matches are a subset
    # of the first's: none there, none here).
    on_puzzle = _on_puzzle(problem, rotation, tvec, turned) if np.any(assignment >= 0) else None
    pose_inlier_fraction = _inlier_fraction(problem, assignment, on_puzzle)
    assignment = _drop_unmeasured_placements(
        problem, rotation, tvec, active_axis, part_angles, assignment, eligible
    )
    # The drops above only unplace detections: the errors of those still placed stand.
    kept = assignment[placed] >= 0
    placement_errors = np.full(count, np.nan)
    placement_errors[usable[placed[kept]]] = errors[kept] / np.maximum(
        problem.sizes[placed[kept]], 1e-6
    )
    detections = np.nonzero(assignment >= 0)[0]
    full_assignment = np.full(count, -1, np.int64)
    full_assignment[usable] = assignment
    inlier_fraction = _inlier_fraction(problem, assignment, on_puzzle)
    found = len(detections) >= MIN_INLIERS
    confidence = float(
        np.clip(inlier_fraction, 0, 1) * np.exp(-rms / max(median(problem.sizes) * 0.1, 1e-6))
    )
    problems: tuple[str, ...] = () if found else ("too few facelets match the puzzle's shape",)
    kept_angles = _angles_on_placed_stickers(model, part_angles, assignment)
    tips = _tips_on_other_groups(
        problem,
        rotation,
        tvec,
        active_axis,
        [(candidate, others) for candidate, others in measured_on if candidate is not chosen],
        kept_angles,
        assignment,
    )
    return GeometryFit(
        found=found,
        rvec=rvec,
        tvec=tvec,
        assignment=full_assignment,
        part_angles=tuple(tuple(angles) for angles in part_angles),
        pairs=_pairs(model, kept_angles) + _tip_pairs(model, tips),
        tips_elsewhere=tips,
        active_axis=active_axis,
        reprojection_px=rms,
        inlier_fraction=inlier_fraction,
        pose_inlier_fraction=pose_inlier_fraction,
        confidence=confidence,
        problems=problems,
        placement_errors=placement_errors,
    )


#: A placed detection must sit this close (in sticker sizes) to its facelet's predicted centre,
PLACEMENT_TOLERANCE = 0.3
#: and this much closer to it than to any other visible facelet's, and have about its size (a
#: sticker half hidden under a turned layer has its centre displaced).
PLACEMENT_MARGIN = 0.5
PLACEMENT_SIZE_RANGE = (0.6, 1.5)


def _active_model(
    model: PuzzleModel, active_axis: int, part_angles: list[list[PartAngle | None]]
) -> tuple[FloatArray, FloatArray]:
    """Facelet centres and normals with the active axis's parts at their measured angles
    (unmeasured ones aligned); the untouched model without an active axis."""
    if active_axis < 0:
        return model.facelet_centers, model.facelet_normals
    angles = [a.angle_deg if a is not None else 0.0 for a in part_angles[active_axis]]
    return _turned_model(model, active_axis, angles)


def _drop_doubtful_placements(
    problem: _Problem,
    rotation: FloatArray,
    translation: FloatArray,
    active_axis: int,
    part_angles: list[list[PartAngle | None]],
    assignment: NDArray[np.int64],
) -> NDArray[np.int64]:
    """Unplace detections that could as well be a neighbouring facelet.

    One facelet read at the wrong place can turn a solved puzzle into "two moves away"; a
    facelet left unseen only widens what the rules engine considers.
    """
    centers, normals = _active_model(problem.model, active_axis, part_angles)
    visible = _facing(normals, centers, rotation, translation)
    predicted = project(centers, rotation, translation, problem.matrix)
    expected = _expected_sizes(problem, normals, centers, rotation, translation)
    result = assignment.copy()
    placed = np.nonzero(assignment >= 0)[0]
    # Distances (placed detection, facelet) and the tests on them, for every placed detection
    # at once: the same values and comparisons as one detection at a time.
    offset_x = predicted[None, :, 0] - problem.centers[placed, 0:1]
    offset_y = predicted[None, :, 1] - problem.centers[placed, 1:2]
    all_gaps = np.sqrt(offset_x * offset_x + offset_y * offset_y)
    rows = np.arange(len(placed))
    facelets = assignment[placed]
    own = all_gaps[rows, facelets]
    others = np.where(visible, all_gaps, np.inf)
    others[rows, facelets] = np.inf
    sizes = problem.sizes[placed]
    ratio = sizes / np.maximum(expected[facelets], 1e-6)
    low, high = PLACEMENT_SIZE_RANGE
    doubtful = (
        (own > PLACEMENT_TOLERANCE * sizes)
        | (own > PLACEMENT_MARGIN * others.min(axis=1))
        | ~((low <= ratio) & (ratio <= high))
    )
    result[placed[doubtful]] = -1
    return result


def _drop_unmeasured_placements(
    problem: _Problem,
    rotation: FloatArray,
    translation: FloatArray,
    active_axis: int,
    part_angles: list[list[PartAngle | None]],
    assignment: NDArray[np.int64],
    eligible: NDArray[np.bool_] | None = None,
) -> NDArray[np.int64]:
    """Unplace detections on a part that shows clearly but mostly does not match, about an
    axis whose angle for it was not measured.

    Such a part may be turned (a layer at 43 degrees whose one outlined sticker matched the
    cell of the aligned layer, read yellow where the cell is blue); placing its stickers as if
    it were aligned is a guess. A part unmeasured only because little of it shows keeps its
    placements. The second look (`second_look.py`) samples the part at another view's angle.
    Only `eligible` facelets (on the active axis's parts the other axes were measured on, see
    `_reference`) are judged: the others were placed by the active axis's own angles.
    """
    model = problem.model
    if active_axis < 0:
        return assignment
    centers, normals = _active_model(model, active_axis, part_angles)
    in_view = _facing(normals, centers, rotation, translation, CLEARLY_VISIBLE)
    placed = assignment >= 0
    on = np.zeros(model.facelet_count, dtype=bool)
    on[assignment[placed]] = True
    result = assignment.copy()
    for axis_index, (axis, parts) in enumerate(zip(model.axes, part_angles, strict=True)):
        if axis_index == active_axis or not parts:
            continue
        for part, angle in enumerate(parts):
            if angle is not None:
                continue
            cells = axis.facelet_part == part
            if eligible is not None:
                cells = cells & eligible
            if np.sum(on & cells) < MIN_PART_COVERAGE * np.sum(in_view & cells):
                result[placed & cells[np.maximum(assignment, 0)]] = -1
    return result


def _angles_on_placed_stickers(
    model: PuzzleModel, part_angles: list[list[PartAngle | None]], assignment: NDArray[np.int64]
) -> list[list[PartAngle | None]]:
    """Every part angle a pair may be reported on: those of parts none of whose stickers is
    still placed are left out.

    A part's angle is measured on the stickers matched to it; where the checks after the fit
    unplace every one of them (each could as well be a neighbouring facelet), the angle rests
    on stickers the fit itself does not trust. Corpus c0115 cam1: a Pyraminx tip measured at
    -15.6 degrees on its one sticker, then unplaced, is aligned; a top view of c0118 measured
    a layer 30 degrees off on a base whose stickers were all unplaced. Their pairs are not
    reported. The part keeps its angle for sampling its cells (`projected`), where a sticker
    must then be seen where the angle puts it: dropping it there cost corpus c0180 a right
    facelet and its verdict.
    """
    placed = assignment[assignment >= 0]
    kept: list[list[PartAngle | None]] = []
    for axis, angles in zip(model.axes, part_angles, strict=True):
        shown = np.bincount(axis.facelet_part[placed], minlength=len(axis.part_names))
        kept.append([a if a is None or shown[part] else None for part, a in enumerate(angles)])
    return kept


def _tips_on_other_groups(
    problem: _Problem,
    rotation: FloatArray,
    translation: FloatArray,
    active_axis: int,
    others: Sequence[tuple[_Reference, dict[int, list[PartAngle | None]] | None]],
    kept_angles: list[list[PartAngle | None]],
    assignment: NDArray[np.int64],
) -> tuple[tuple[PartAngle | None, ...], ...]:
    """Per axis whose tip the chosen group did not measure: its parts measured on another
    group of the active axis's parts, where that group shows the tip; () elsewhere.

    A Pyraminx layer turned out of line splits the puzzle in two: the turned layer with its
    tip, and the base, which carries the other three tips. The other axes are measured on the
    group that lets them measure most (`_references`), usually the turned layer, which holds
    none of their tips. A tip is one piece and turns freely whatever the layers do, so on the
    base it is measured as on any puzzle: from its own triangle and its layer's (or, the layer
    held in line by the turned one, its base's) stickers there (`fuse.held_layer_tip_pairs`).
    Corpus rig3 c0156, a solved Pyraminx with a layer at 55 degrees: every camera measured its
    three other tips only this way. A part is kept only if a sticker of it is still placed (as
    `_angles_on_placed_stickers`). `others`: each other group with what the search over the
    groups measured on it (None where it stopped early, see `_measure_other_axes`).
    """
    model = problem.model
    found: list[tuple[PartAngle | None, ...]] = [() for _ in model.axes]
    wanted = [
        axis_index
        for axis_index, (axis, angles) in enumerate(zip(model.axes, kept_angles, strict=True))
        if axis_index != active_axis
        and axis.part_names[-1] == "tip"
        and angles
        and angles[-1] is None
    ]
    if not wanted or not others:
        return tuple(found)
    for reference, known in others:
        measured = (
            known
            if known is not None
            else _measure_other_axes(problem, rotation, translation, active_axis, reference)
        )
        assert measured is not None
        on_placed = _angles_on_placed_stickers(
            model,
            [measured.get(axis_index, []) for axis_index in range(len(model.axes))],
            assignment,
        )
        for axis_index in wanted:
            angles = on_placed[axis_index]
            if not found[axis_index] and angles[-1] is not None:
                found[axis_index] = tuple(angles)
    return tuple(found)


def _tip_pairs(
    model: PuzzleModel, tips: tuple[tuple[PartAngle | None, ...], ...]
) -> tuple[PairAngle, ...]:
    """The layer|tip pairs of `_tips_on_other_groups`'s parts, where both are measured."""
    pairs = _pairs(
        model,
        [
            list(angles) if angles else [None] * len(axis.part_names)
            for axis, angles in zip(model.axes, tips, strict=True)
        ],
    )
    return tuple(pair for pair in pairs if pair.parts[-1] == "tip")


def _trial_fit(
    problem: _Problem,
    rotation: FloatArray,
    translation: FloatArray,
    turned: FloatArray,
    assignment: NDArray[np.int64],
) -> tuple[int, float]:
    """How well a fit explains the detections: how many it places within TIGHT_STICKER_ERROR of
    their size, and the median of their RMS corner errors (pixels).

    Axis trials are compared by the count first: an axis left in line can still place every
    sticker of a layer turned near 45 degrees, each loosely between two cells, and the median
    of the rest hides them (4242 rig3 c0036 cam0: a 2x2x2 layer at -42.5 degrees, the in-line
    axis at 2.1 px against the turned one's 2.2)."""
    detections, per_detection = _corner_errors(problem, rotation, translation, turned, assignment)
    if len(detections) == 0:
        return 0, float("inf")
    tight = int(np.count_nonzero(per_detection <= TIGHT_STICKER_ERROR * problem.sizes[detections]))
    return tight, median(per_detection)


def _corner_errors(
    problem: _Problem,
    rotation: FloatArray,
    translation: FloatArray,
    turned: FloatArray,
    assignment: NDArray[np.int64],
) -> tuple[NDArray[np.int64], FloatArray]:
    """The assigned detections and each one's RMS corner reprojection error (pixels)."""
    detections = np.nonzero(assignment >= 0)[0]
    if len(detections) == 0:
        return detections, np.zeros(0)
    projected = project(turned[assignment[detections]], rotation, translation, problem.matrix)
    residuals = _best_rolls(projected, problem.corners[detections]) - projected
    return detections, np.sqrt(np.mean(np.square(residuals), axis=(1, 2)))


def _on_puzzle(
    problem: _Problem, rotation: FloatArray, tvec: FloatArray, turned: FloatArray
) -> NDArray[np.bool_]:
    """Which detections' centres lie on the fitted puzzle's outline (the convex hull of its
    projected stickers, `turned`)."""
    pixels = project(turned.reshape(-1, 3), rotation, tvec, problem.matrix)
    outline = cv2.convexHull(pixels.astype(np.float32))
    return np.array(
        [
            cv2.pointPolygonTest(outline, (float(x), float(y)), False) >= 0
            for x, y in problem.centers
        ],
        dtype=bool,
    )


def _inlier_fraction(
    problem: _Problem, assignment: NDArray[np.int64], on_puzzle: NDArray[np.bool_] | None
) -> float:
    """Matched detections / detections that a right fit should have explained.

    An unmatched patch counts against the fit if it lies on the fitted puzzle's outline
    (`on_puzzle`, see there; needed only if something matched) or is the size of the matched
    stickers. Clutter at a station (a robot holding the cube, a timer, a mat's pattern) has
    sticker-like patches beside the puzzle, of other sizes, that no fit should explain.
    """
    matched = assignment >= 0
    if not np.any(matched):
        return 0.0
    assert on_puzzle is not None
    sticker = median(problem.sizes[matched])
    low, high = SIZE_RATIO_RANGE
    sized = (problem.sizes > low * sticker) & (problem.sizes < high * sticker)
    return float(np.sum(matched) / np.sum(matched | sized | on_puzzle))


def _turned_tips(
    model: PuzzleModel, others: dict[int, list[PartAngle | None]]
) -> NDArray[np.bool_]:
    """Per model facelet: whether it is on a tip (of the axes in `others`) measured clearly
    turned out of line, by more than twice its standard error and TIP_OFF_BODY_DEG."""
    turned = np.zeros(model.facelet_count, dtype=bool)
    for axis_index, angles in others.items():
        tip = angles[-1] if angles else None
        if tip is None or model.axes[axis_index].part_names[-1] != "tip":
            continue
        if abs(tip.angle_deg) > max(2.0 * tip.sigma_deg, TIP_OFF_BODY_DEG):
            turned[_part_facelets(model, axis_index)[-1]] = True
    return turned


def _turned_corners(
    problem: _Problem, part_angles: list[list[PartAngle | None]], axis_index: int
) -> FloatArray:
    turned = problem.model_corners.copy()
    if axis_index < 0:
        return turned
    axis = problem.model.axes[axis_index]
    for part, measured in enumerate(part_angles[axis_index]):
        if measured is None:
            continue
        selected = axis.facelet_part == part
        turned[selected] = turned[selected] @ rotation_about(axis.direction, measured.angle_deg).T
    return turned


def _pairs(model: PuzzleModel, part_angles: list[list[PartAngle | None]]) -> tuple[PairAngle, ...]:
    pairs = []
    for axis, angles in zip(model.axes, part_angles, strict=True):
        for lower, upper in axis.pairs:
            first, second = angles[lower], angles[upper]
            if first is None or second is None:
                continue
            pairs.append(
                PairAngle(
                    axis=axis.name,
                    parts=(axis.part_names[lower], axis.part_names[upper]),
                    angle_deg=_wrap(second.angle_deg - first.angle_deg, axis.step_deg),
                    sigma_deg=float(np.hypot(first.sigma_deg, second.sigma_deg)),
                    facelets=min(first.facelets, second.facelets),
                )
            )
    return tuple(pairs)
