"""A view whose own fit was left out, placed where the rig's other cameras put the puzzle.

A camera whose fit is loose (corners off by a tenth of a sticker) or explains too few of the
sticker-like patches it found (a hand, a cup, a timer's coloured buttons beside the puzzle)
is left out: which patch is which facelet is in doubt there. With a calibrated rig the other
cameras say where the puzzle is: their lines of sight to its centre meet where it stands
(`puzzle_position`), and a tight view's rotation, carried into this camera by the two
cameras' poses (world_from_camera), turns it. That places every facelet in this image without
asking this view which patch is which. Its patches that sit on their cells (within
`MAX_CENTER_ERROR` of a sticker) are then its stickers, and the cells no patch sits on are
sampled as any projected facelet is (`projected`: own pixels, uniform, set off from the border
like the placed stickers, and only on parts where those stickers sit where the pose puts them).

One camera alone says less well how far away the puzzle is than in which direction: seen from
another camera its distance error is a sideways offset (a third of a sticker on a rig3 render).
With two other cameras or more their lines of sight fix the centre. With one, the position is
slid along its line of sight, by at most half a sticker in this image and 5 % of the distance,
to where the most patches sit on cells (`_slid_along_sight`); a face's worth must, and most of
those over the puzzle. In either case nothing is placed where the cells shifted by up to a
cell and a half in the image fit as many patches (`_shifted_grid_fits`): a grid a cell off
fits its own stickers nearly as well, and which patch is which facelet would be a guess.

Nothing here measures an angle: the view's part angles are the other views' (its pairs are
left empty), so it adds colours, never a misalignment.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.vision.camera import Intrinsics, rotation_matrix, to_pixels
from judgecam.vision.geometry import CLEARLY_VISIBLE, GeometryFit, _facing, _turned_model
from judgecam.vision.locate import PuzzleRegion
from judgecam.vision.model import PuzzleModel
from judgecam.vision.segment import Facelet

logger = logging.getLogger(__name__)

FloatArray = NDArray[np.float64]

#: A patch is taken for the sticker of the cell the carried pose puts nearest it when its centre
#: lies within this fraction of a sticker of the cell's (`projected.MAX_PART_CENTER_ERROR` was
#: the same bar, 0.1, for a part's stickers to vouch for the fit there until session 32; a pose
#: carried from another camera is weaker evidence, and this one is left at 0.1).
MAX_CENTER_ERROR = 0.1
#: With one other camera, its distance to the puzzle may be off by this fraction (PnP on one
#: view: its size in the image) ...
MAX_DEPTH_ERROR = 0.05
#: ... and the position is slid along its line of sight at most this many stickers in this
#: image (under half a cell: a grid a cell off is out of reach), in steps of SLIDE_STEP;
#: another slide MIN_SLIDE_APART stickers away that places as many patches is a tie.
MAX_SLIDE = 0.45
SLIDE_STEP = 0.03
MIN_SLIDE_APART = 0.2
#: Slides up to this many stickers are counted too, so that a grid a cell off, which a slide
#: within reach can half meet, is seen to fit as well or better.
ALIAS_CHECK = 1.6
#: Image shifts counted at once (`_on_cells`).
SHIFT_BLOCK = 128
#: A slide must put at least this share of the patches over the visible cells' area on cells.
MIN_EXPLAINED = 0.5
#: Fewest patches on their cells for the carried pose to stand for this view (also the fewest
#: stickers `projected` needs to know what a sticker looks like here).
MIN_PLACED_STICKERS = 3


def line_of_sight(fit: GeometryFit, world_from_camera: NDArray[np.float64]) -> FloatArray:
    """The world direction (unit) from a calibrated camera to the puzzle it fitted."""
    ray = np.asarray(world_from_camera, dtype=np.float64)[:3, :3] @ np.asarray(fit.tvec)
    return np.asarray(ray / np.linalg.norm(ray))


def puzzle_position(
    fits: Sequence[GeometryFit], world_from_cameras: Sequence[NDArray[np.float64]]
) -> FloatArray:
    """The puzzle's centre in the world (mm) from tight fits of calibrated cameras.

    A fit says well in which direction the puzzle lies and less well how far (its size in the
    image): one camera's distance error is another's sideways error. With two cameras or more
    the centre is where their lines of sight to it meet (least squares); with one, its fit's
    distance is taken as it is.
    """
    centres = [np.asarray(pose, dtype=np.float64)[:3, 3] for pose in world_from_cameras]
    directions = [
        line_of_sight(fit, pose) for fit, pose in zip(fits, world_from_cameras, strict=True)
    ]
    if len(fits) == 1:
        world = np.asarray(world_from_cameras[0], dtype=np.float64)
        return np.asarray(world[:3, :3] @ np.asarray(fits[0].tvec) + world[:3, 3])
    normal = np.zeros((3, 3))
    right = np.zeros(3)
    for centre, direction in zip(centres, directions, strict=True):
        across = np.eye(3) - np.outer(direction, direction)
        normal += across
        right += across @ centre
    return np.asarray(np.linalg.solve(normal, right))


def carried_pose(
    fit: GeometryFit,
    world_from_fitted: NDArray[np.float64],
    world_from_this: NDArray[np.float64],
    position: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """(rotation, translation) of the puzzle in this camera: `fit`'s rotation carried by the two
    cameras' poses (4x4 world_from_camera, mm), at `position` in the world (`puzzle_position`;
    without it, where `fit` alone puts the puzzle)."""
    fitted = np.asarray(world_from_fitted, dtype=np.float64)
    this = np.asarray(world_from_this, dtype=np.float64)
    rotation = this[:3, :3].T @ fitted[:3, :3] @ rotation_matrix(fit.rvec)
    if position is None:
        position = puzzle_position([fit], [fitted])
    return rotation, this[:3, :3].T @ (np.asarray(position) - this[:3, 3])


def rig_region(
    model: PuzzleModel,
    rotation: FloatArray,
    translation: FloatArray,
    intrinsics: Intrinsics,
    shape: tuple[int, ...],
) -> PuzzleRegion | None:
    """Where stage 2 should look for the puzzle's stickers in a frame of `shape` when the rig
    says where the puzzle is (`carried_pose`): its silhouette and the size of the stickers that
    face this camera; None if it is not in front of the camera or not in the frame."""
    corners = model.facelet_corners @ rotation.T + translation  # (N, K, 3)
    if np.any(corners[..., 2] <= 1e-3):
        return None
    pixels = _pixels(corners.reshape(-1, 3), intrinsics).reshape((*corners.shape[:2], 2))
    facing = _facing(
        model.facelet_normals, model.facelet_centers, rotation, translation, CLEARLY_VISIBLE
    )
    if not np.any(facing):
        return None
    areas = [abs(cv2.contourArea(cell.astype(np.float32))) for cell in pixels[facing]]
    sticker = float(np.sqrt(np.median(areas)))
    height, width = shape[:2]
    outline = cv2.convexHull(pixels.reshape(-1, 2).astype(np.float32)).reshape(-1, 2)
    inside = np.clip(outline, 0.0, [width - 1.0, height - 1.0])
    if cv2.contourArea(inside.astype(np.float32)) < sticker * sticker:
        return None
    return PuzzleRegion(
        patches=(),
        outline_px=inside.astype(np.float64),
        sticker_px=sticker,
        touches_border=bool(np.any(outline != inside)),
        confidence=0.0,
    )


def rig_placed_fit(
    model: PuzzleModel,
    fit: GeometryFit,
    world_from_fitted: NDArray[np.float64],
    world_from_this: NDArray[np.float64],
    detected: Sequence[Facelet],
    intrinsics: Intrinsics,
    position: FloatArray | None = None,
    sight: FloatArray | None = None,
) -> GeometryFit | None:
    """This view's fit with the pose of another camera's tight `fit` carried here by the rig
    (`carried_pose`), its part angles, no pairs of its own, and its patches assigned to the
    cells they sit on; None if fewer than MIN_PLACED_STICKERS do (the rig does not explain
    this view) or if the cells shifted by about a cell fit as many (`_shifted_grid_fits`).
    `sight`: the world direction along which `position` is unsure (one camera's line of
    sight, when no other camera's meets it): the position is slid along it to where the
    patches sit on their cells (`_slid_along_sight`)."""
    rotation, translation = carried_pose(fit, world_from_fitted, world_from_this, position)
    axis_angles = fit.part_angles[fit.active_axis] if fit.active_axis >= 0 else ()
    angles = [0.0 if angle is None else angle.angle_deg for angle in axis_angles]
    centers, normals = (
        _turned_model(model, fit.active_axis, angles)
        if angles
        else (model.facelet_centers, model.facelet_normals)
    )
    in_camera = centers @ rotation.T + translation
    if np.any(in_camera[:, 2] <= 1e-3) or not detected:
        return None
    visible = np.flatnonzero(_facing(normals, centers, rotation, translation, CLEARLY_VISIBLE))
    if len(visible) == 0:
        return None
    patches = np.array([facelet.center_px for facelet in detected], dtype=np.float64)
    sizes = np.array([max(facelet.size_px, 1e-6) for facelet in detected], dtype=np.float64)
    if sight is not None:
        this = np.asarray(world_from_this, dtype=np.float64)
        slid = _slid_along_sight(
            centers[visible],
            rotation,
            translation,
            this[:3, :3].T @ sight,
            patches,
            sizes,
            intrinsics,
            model.facelet_count // len(model.face_names),
        )
        if slid is None:
            return None
        translation = slid
        in_camera = centers @ rotation.T + translation
    cells = _pixels(in_camera[visible], intrinsics)
    gaps = np.linalg.norm(patches[:, None, :] - cells[None, :, :], axis=2) / sizes[:, None]
    nearest_cell = gaps.argmin(axis=1)
    nearest_patch = gaps.argmin(axis=0)
    assignment = np.full(len(detected), -1, dtype=np.int64)
    for patch, cell in enumerate(nearest_cell):
        if nearest_patch[cell] == patch and gaps[patch, cell] <= MAX_CENTER_ERROR:
            assignment[patch] = visible[cell]
    placed = int(np.count_nonzero(assignment >= 0))
    logger.debug("rig-placed view: %d of %d patches on their cells", placed, len(detected))
    if placed < MIN_PLACED_STICKERS or _shifted_grid_fits(cells, patches, sizes):
        return None
    on_cells = gaps[assignment >= 0].min(axis=1)
    rvec, _ = cv2.Rodrigues(rotation)
    return GeometryFit(
        found=True,
        rvec=np.asarray(rvec, dtype=np.float64).reshape(3),
        tvec=np.asarray(translation, dtype=np.float64),
        assignment=assignment,
        part_angles=fit.part_angles,
        pairs=(),
        active_axis=fit.active_axis,
        reprojection_px=float(np.median(on_cells * sizes[assignment >= 0])),
        inlier_fraction=placed / len(detected),
        confidence=min(fit.confidence, placed / len(detected)),
        problems=(),
        pose_inlier_fraction=placed / len(detected),
    )


def _slid_along_sight(
    centers: FloatArray,
    rotation: FloatArray,
    translation: FloatArray,
    sight: FloatArray,
    patches: FloatArray,
    sizes: FloatArray,
    intrinsics: Intrinsics,
    face_size: int,
) -> FloatArray | None:
    """The translation, slid along `sight` (this camera's frame: the other camera's line of
    sight, along which its distance is unsure), that puts the most patches within
    MAX_CENTER_ERROR of the visible cells (`centers`, model frame). None if it puts fewer than
    a face's worth there (`face_size`: the slide is chosen by the patches, so more of them
    must agree), if a slide at least MIN_SLIDE_APART stickers away in this image puts as many
    (which is which would be a guess), or if it leaves most of the patches over the cells'
    area (MIN_EXPLAINED) on none.

    The slide is bounded by MAX_DEPTH_ERROR of the distance and by MAX_SLIDE stickers in this
    image, so that a grid a cell off is out of its reach; slides up to ALIAS_CHECK stickers
    are counted as ties, so that such a grid, which fits its own stickers, is seen.
    """
    sticker = float(np.median(sizes))
    depth = float(np.linalg.norm(translation))
    moved = _pixels(np.array([translation, translation + sight]), intrinsics)
    rate = float(np.linalg.norm(moved[1] - moved[0]))  # pixels per mm along the line of sight
    if rate <= 1e-9:
        return None
    reach = min(MAX_DEPTH_ERROR * depth, MAX_SLIDE * sticker / rate)
    # Slides are tried beyond reach too, up to ALIAS_CHECK stickers: where one places as many
    # patches, the puzzle may be a cell further than the slide can go.
    span = max(reach, ALIAS_CHECK * sticker / rate)
    steps = max(1, int(np.ceil(span * rate / (SLIDE_STEP * sticker))))
    slides = np.linspace(-span, span, 2 * steps + 1)
    votes = np.zeros(len(slides), dtype=np.int64)
    for index, slide in enumerate(slides):
        cells = _pixels(centers @ rotation.T + translation + slide * sight, intrinsics)
        gaps = np.linalg.norm(patches[:, None, :] - cells[None, :, :], axis=2).min(axis=1)
        votes[index] = int(np.count_nonzero(gaps <= MAX_CENTER_ERROR * sizes))
    within = np.abs(slides) <= reach + 1e-9
    most = int(votes[within].max())
    tied = np.flatnonzero(within & (votes == most))
    best = int(tied[np.argmin(np.abs(slides[tied]))])  # the smallest of equal slides
    if votes[best] < max(MIN_PLACED_STICKERS, face_size):
        return None
    apart = np.abs(slides - slides[best]) * rate >= MIN_SLIDE_APART * sticker
    if np.any(votes[apart] >= votes[best]):
        return None
    # The slide is chosen by the patches: it must explain most of those on the puzzle's cells'
    # area, not a few a grid shifted over them happens to meet.
    translation = translation + slides[best] * sight
    cells = _pixels(centers @ rotation.T + translation, intrinsics)
    hull = cv2.convexHull(cells.astype(np.float32))
    inside = sum(
        cv2.pointPolygonTest(hull, (float(x), float(y)), True) >= -0.5 * size
        for (x, y), size in zip(patches, sizes, strict=True)
    )
    if votes[best] < MIN_EXPLAINED * inside:
        return None
    logger.debug("slid %.1f mm along the other camera's line of sight", slides[best])
    return np.asarray(translation)


def _on_cells(
    shifts: FloatArray, cells: FloatArray, patches: FloatArray, sizes: FloatArray
) -> NDArray[np.int64]:
    """Per image shift (S, 2): how many patches lie within MAX_CENTER_ERROR of a shifted cell
    (in blocks of shifts, so that many patches and cells never make one huge array)."""
    counts = np.zeros(len(shifts), dtype=np.int64)
    for start in range(0, len(shifts), SHIFT_BLOCK):
        block = shifts[start : start + SHIFT_BLOCK]
        moved = patches[None, :, None, :] - block[:, None, None, :] - cells[None, None, :, :]
        nearest = np.sqrt(np.einsum("spcx,spcx->spc", moved, moved)).min(axis=2)
        counts[start : start + SHIFT_BLOCK] = np.count_nonzero(
            nearest <= MAX_CENTER_ERROR * sizes[None, :], axis=1
        )
    return counts


def _shifted_grid_fits(cells: FloatArray, patches: FloatArray, sizes: FloatArray) -> bool:
    """Whether the cells shifted in the image by some offset between MIN_SLIDE_APART and
    ALIAS_CHECK stickers put as many patches on cells as they do where they are: the puzzle's
    grid a cell off fits its own stickers nearly as well, so a placement a cell off would
    look like this one, and which patch is which facelet would be a guess. The offsets tried
    are those from every patch to every cell."""
    sticker = float(np.median(sizes))
    offsets = (patches[:, None, :] - cells[None, :, :]).reshape(-1, 2)
    length = np.hypot(offsets[:, 0], offsets[:, 1])
    shifts = offsets[(length >= MIN_SLIDE_APART * sticker) & (length <= ALIAS_CHECK * sticker)]
    if len(shifts) == 0:
        return False
    here = int(_on_cells(np.zeros((1, 2)), cells, patches, sizes)[0])
    return bool(np.any(_on_cells(shifts, cells, patches, sizes) >= here))


def _pixels(points: FloatArray, intrinsics: Intrinsics) -> FloatArray:
    """Distorted pixel coordinates of camera-frame points (N, 3) in front of the camera."""
    return intrinsics.distort(to_pixels(points, intrinsics.camera_matrix))
