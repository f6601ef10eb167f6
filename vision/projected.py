"""Facelets the fitted model says are visible, sampled where stage 2 detected no sticker.

Stage 2 only reports stickers it can outline as clean convex patches; a sticker on a grazing
face, in the shadow of a turned layer or partly under its overhang is often missed, and a part
of the puzzle then stays unseen although the camera sees it. Once stage 3 has fitted the body
pose and every part's angle, the model says where every facelet is in the image. This module
renders the model (each piece as a convex solid, its facelets on its surface) nearest last into
an index image, keeps the facelets that are squarely in view and at least half their own (the
rest behind another piece), and samples the inner part of each (its own pixels).

A sample is kept only if it looks like a sticker seen here: about as uniform as the detected
stickers of the same view (a hand, an edge, a glare blob are not) and set off from the cell's
border about as much as they are (a hand or a cup covering a whole cell is not), or at least half
as much if its colour is one the view's stickers show, shaded or not (a shaded sticker; not a
finger, not the bare body). Otherwise the facelet stays unknown: the rules engine copes with an
unseen facelet, not with a wrong one.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import cv2
import numpy as np
from numpy.typing import NDArray
from scipy.spatial import HalfspaceIntersection

from judgecam.vision.camera import Intrinsics, rotation_matrix
from judgecam.vision.color_faces import luminance
from judgecam.vision.colors import NEUTRAL_CHROMA
from judgecam.vision.colorspace import ciede2000
from judgecam.vision.geometry import GeometryFit, stated_uncertainty
from judgecam.vision.model import PuzzleModel, rotation_about
from judgecam.vision.segment import Facelet, lab_samples
from judgecam.vision.stats import median

logger = logging.getLogger(__name__)

FloatArray = NDArray[np.float64]

#: A facelet is sampled only if at least this fraction of its sticker-sized part is its own (the
#: rest under a nearer piece: a turned layer's overhang); its own pixels alone are sampled. The
#: rule means "at least half the sticker shows", but the pieces rendered here are sharp-edged
#: and gapless, so they hide more of a cell than real, rounded pieces with gaps between them:
#: a median 0.10 of the sticker (0.08-0.10 stickered, 0.03-0.05 stickerless, 0.06-0.08
#: Pyraminx; 1,084 partly hidden samples against the renderer's visibility, two rigs, 3 Dec
#: 2026). Half the sticker showing is therefore 0.4 here ...
MIN_OWN_FRACTION = 0.4
#: ... it faces the camera at least this squarely (cosine of normal and line of sight; 0.12 is
#: 83 degrees: a grazing cell still has an inner part of MIN_INNER_PX pixels, and the
#: uniformity and border tests below say whether it is a clean sample) ...
MIN_FACING = 0.12
#: ... and the inner part sampled covers at least this many pixels.
MIN_INNER_PX = 12
#: Linear scale of the sampled inner part of the cell, about its centre.
SAMPLE_SCALE = 0.5
#: The border band (cell scale 0.9 to 1) tells a sticker from what covers its whole cell; a
#: side whose band is thinner than MIN_BAND_PX pixels on average is not looked at.
BORDER_SCALE = 0.9
MIN_BAND_PX = 0.75
#: Visibility is judged on the sticker-sized part of the cell (the rest is the gap).
STICKER_SCALE = 0.85
#: A sample's CIELAB spread may be at most this multiple of the detected stickers' median
#: (plus SPREAD_SLACK, for views whose stickers are perfectly flat) ...
MAX_SPREAD_FACTOR = 2.0
SPREAD_SLACK = 3.0
#: ... and its contrast to the cell border at least this fraction of theirs (lower quartile),
MIN_BORDER_CONTRAST_FRACTION = 0.5
#: ... or at least this fraction if it looks like a sticker of this view and not like the bare
#: body. The border contrast says as much where a cell sits as whether something covers it:
#: between two stickers of one row the gap hardly shows, a stickerless tile has none, a face
#: edge shows the background, a shaded face shows little of anything. What a faint sample must
#: not be is the bare body (CIEDE2000 at least MIN_BODY_DELTA_E from the median colour of the
#: placed stickers' border bands, the plastic between stickers) or a finger, which is set off
#: from the border no more than a shaded sticker is: its chromaticity, (a*, b*) / (L* + 16),
#: which shading leaves alike, must lie within MAX_CHROMATICITY_GAP of a placed sticker's in the
#: same view (a colour the puzzle shows here; skin is none of a puzzle's colours).
MIN_CLEAR_CONTRAST_FRACTION = 0.25
MIN_BODY_DELTA_E = 15.0
#: A cell is reported bare (`StickerLook.bare_body`) only in a view whose placed stickers lie
#: at least this far (median CIEDE2000) from the body: in a dark frame every sticker looks
#: like the body (corpus c0019 under `dark`: green stickers at L* 4.5, the body at 8), as
#: `missing` also refuses to judge there.
MIN_STICKER_BODY_DELTA_E = 30.0
#: ... or, in any view, one that is uniform, grey and at most this fraction of the luminance of
#: the darkest sticker placed on its own face there (at least MIN_FACE_STICKERS of them). The
#: only grey sticker of a scheme is its white (or lightest), 5-10 times as bright as its blue
#: or red under one light, so under its face's light a grey cell at half the darkest sticker's
#: luminance is no sticker unless a shadow takes 90 % of its light; a bare black body is 0.2-0.5
#: of a blue. The body median of the gate above fails in dim views of small stickers, where the
#: border bands take the stickers' colour: a rig3 render of corpus c0195 (two stickers off in
#: plain sight at L* 8 and chroma 1, the face's pastel reds at L* 29-38, the bands' median L* 17
#: and red, 17.5 from the stickers: read solved), and seed 6262 rig3 c0008 (a sticker off at L*
#: 7.5 on a face whose darkest sticker is a blue at L* 18, luminance 0.33 of it: a DNF read +2).
MAX_BARE_LUMINANCE_RATIO = 0.5
MIN_FACE_STICKERS = 2
MAX_CHROMATICITY_GAP = 0.15
#: Fewest detected stickers that say what a sticker looks like in this view.
MIN_REFERENCE_STICKERS = 3
#: A part whose angle was not measured may be anywhere: its pieces are drawn at these angles
#: (degrees, spread over a turning step) so that they hide whatever they could hide.
UNMEASURED_SWEEP_STEP_DEG = 15.0
#: The model is rendered with the active axis's part angles only: every part of another axis must
#: be measured and this close to aligned (degrees), or the rendering would not be the puzzle.
MAX_OTHER_AXIS_DEG = 6.0
#: Two adjacent layers of the active axis this far apart (degrees) lock every other axis's
#: layers in line, measured or not: a layer cannot turn while a crossing layer stands askew.
JAMMING_TURN_DEG = 10.0
#: A part's facelets are sampled only where the fit is tight on that part: its placed stickers'
#: centres lie within this fraction of a sticker of their projected cells (the median, and at
#: least MIN_TIGHT_STICKERS of them; a sticker cut by an overhang has its centre displaced).
#: The inner part sampled (SAMPLE_SCALE of the cell) stays on the sticker (STICKER_SCALE of
#: it) for a cell up to (0.85 - 0.5) / 2 / 0.85 = 0.2 of a sticker off; 0.15 keeps a quarter
#: of that for cells farther from the placed stickers than they are. It was 0.1 to session 31:
#: on the three-camera rig a turned slice's two stickers often sit 0.12-0.17 off (corpus plans
#: on rig3: 5 more right, colours 98.67 -> 98.64 %; 0 wrong on 13 sets; corpus c0056 lost).
MAX_PART_CENTER_ERROR = 0.15
MIN_TIGHT_STICKERS = 2
#: Label of a piece's body in the index image (facelets are labelled with their index).
BODY = -2
EMPTY = -1


@dataclass(frozen=True, eq=False)
class ProjectedFacelet:
    """A model facelet (the fit's snapped frame) sampled where the fit projects it."""

    facelet: int
    sample: Facelet  # corners_px: the projected cell; colour from its inner part
    facing: float  # cosine between its normal and the line of sight
    own_fraction: float  # fraction of its projected cell not hidden by other pieces


@dataclass(frozen=True, eq=False)
class _Pieces:
    """Each piece's facelets and its solid, as the corners of a convex polytope (`_pieces_of`)."""

    facelets: tuple[NDArray[np.int64], ...]
    vertices: tuple[FloatArray, ...]  # (V, 3) per piece, model frame


@functools.cache
def _pieces_of(model: PuzzleModel) -> _Pieces:
    """The pieces as convex solids: the puzzle's face planes cut by the piece's part's slab
    along every axis (`_piece_halfspaces`). On a cube that is the cubie; on a Pyraminx the
    tetrahedron's own corner, edge and centre pieces (a facelet cell pushed one cell inwards
    would jut out of it and hide its neighbours)."""
    groups: dict[object, list[int]] = {}
    for index, piece in enumerate(model.facelet_piece):
        groups.setdefault(piece, []).append(index)
    facelets = tuple(np.asarray(members, dtype=np.int64) for members in groups.values())
    vertices = tuple(
        _polytope_corners(_piece_halfspaces(model, members), _inside(model, members))
        for members in facelets
    )
    return _Pieces(facelets, vertices)


def _piece_halfspaces(model: PuzzleModel, members: NDArray[np.int64]) -> FloatArray:
    """Half-spaces (rows [normal, offset], normal . x + offset <= 0) bounding the piece that
    holds facelets `members`: every face plane of the puzzle, and along every axis the slab its
    part spans (the extent of all facelet corners of that part; a cut lies on facelet edges)."""
    corners = model.facelet_corners
    rows = []
    for face, normal in enumerate(model.face_normals):
        unit = normal / np.linalg.norm(normal)
        reach = float((corners[model.facelet_face == face] @ unit).max())
        rows.append([*unit, -reach])
    for axis in model.axes:
        part = int(axis.facelet_part[members[0]])
        along = corners[axis.facelet_part == part] @ axis.direction
        rows.append([*axis.direction, -float(along.max())])
        rows.append([*(-axis.direction), float(along.min())])
    return np.asarray(rows, dtype=np.float64)


def _inside(model: PuzzleModel, members: NDArray[np.int64]) -> FloatArray:
    """A point inside the piece holding facelets `members`: the mean of their centres (on the
    surface if it has one facelet) moved a twentieth of a sticker inwards."""
    inwards = -np.add.reduce(model.facelet_normals[members], axis=0)
    inwards /= np.linalg.norm(inwards)
    centre = np.add.reduce(model.facelet_centers[members], axis=0) / len(members)
    return np.asarray(centre + 0.05 * model.sticker_size * inwards, dtype=np.float64)


def _polytope_corners(halfspaces: FloatArray, inside: FloatArray) -> FloatArray:
    """Corners (V, 3) of the bounded convex polytope the half-spaces enclose, `inside` it."""
    if np.any(halfspaces[:, :3] @ inside + halfspaces[:, 3] >= 0):
        raise ValueError("a piece of the puzzle model encloses no volume")
    corners = HalfspaceIntersection(halfspaces, inside).intersections
    # Several planes meet at a Pyraminx corner: each meeting is reported once per plane triple.
    return np.asarray(np.unique(np.round(corners, 3) + 0.0, axis=0), dtype=np.float64)


def _pixels(points: FloatArray, intrinsics: Intrinsics) -> FloatArray:
    """Distorted pixel coordinates of camera-frame points (..., 3) in front of the camera."""
    matrix = intrinsics.camera_matrix
    z = np.maximum(points[..., 2:3], 1e-6)
    ideal = points[..., :2] / z * np.diag(matrix)[:2] + matrix[:2, 2]
    return intrinsics.distort(ideal)


def _render(
    fit: GeometryFit,
    model: PuzzleModel,
    intrinsics: Intrinsics,
    origin: FloatArray,
    shape: tuple[int, int],
    render_axis: int,
) -> tuple[NDArray[np.int32], FloatArray, FloatArray, NDArray[np.bool_]]:
    """Index image (ROI at `origin`), every facelet's projected cell (pixels), its facing
    cosine, and whether its part was measured (only those can be sampled).

    Painter's algorithm: each piece (at its part's fitted angle; an unmeasured part at every
    angle of a sweep) is filled as its convex outline labelled BODY, then its facelets that
    face the camera with their own index, farthest piece first.
    """
    pieces = _pieces_of(model)
    rotation = rotation_matrix(fit.rvec)
    axis = model.axes[render_axis]
    angles = fit.part_angles[render_axis]
    count = model.facelet_count
    sides = model.facelet_corners.shape[1]
    sweep = np.arange(-axis.step_deg / 2, axis.step_deg / 2, UNMEASURED_SWEEP_STEP_DEG)
    items: list[tuple[int, float, bool]] = []  # (piece, angle, measured)
    for piece, members in enumerate(pieces.facelets):
        known = angles[int(axis.facelet_part[members[0]])]
        if known is not None:
            items.append((piece, known.angle_deg, True))
        else:
            items.extend((piece, float(angle), False) for angle in sweep)
    turns = {
        angle: rotation @ rotation_about(axis.direction, angle)
        for angle in {a for _, a, _ in items}
    }
    solids = [pieces.vertices[piece] @ turns[angle].T + fit.tvec for piece, angle, _ in items]
    corners = [
        model.facelet_corners[pieces.facelets[piece]] @ turns[angle].T + fit.tvec
        for piece, angle, _ in items
    ]
    flat = np.concatenate([*solids, *(c.reshape(-1, 3) for c in corners)])
    if np.any(flat[:, 2] <= 1e-3):
        raise ValueError("part of the puzzle lies behind the camera")
    pixels = _pixels(flat, intrinsics) - origin
    cells_px = np.zeros((count, sides, 2))
    facing = np.full(count, -1.0)
    measured = np.zeros(count, dtype=bool)
    drawn: list[tuple[float, NDArray[np.int32], list[tuple[int, NDArray[np.int32]]]]] = []
    offset = 0
    outlines = []
    for solid in solids:
        outlines.append(pixels[offset : offset + len(solid)])
        offset += len(solid)
    for (piece, angle, at_fitted_angle), solid, outline, piece_corners in zip(
        items, solids, outlines, corners, strict=True
    ):
        members = pieces.facelets[piece]
        polygons = pixels[offset : offset + len(members) * sides].reshape(-1, sides, 2)
        offset += len(members) * sides
        normals = model.facelet_normals[members] @ turns[angle].T
        centers = np.add.reduce(piece_corners, axis=1) / sides  # = piece_corners.mean(axis=1)
        # np.linalg.norm(centers, axis=1) without its overhead: the same sums and roots.
        distances = np.sqrt(np.add.reduce(centers * centers, axis=1))
        cosines = -np.einsum("ij,ij->i", normals, centers) / distances
        if at_fitted_angle:
            cells_px[members] = polygons + origin
            facing[members] = cosines
            measured[members] = True
        hull = cv2.convexHull(outline.astype(np.float32)).reshape(-1, 2)
        rounded = np.rint(polygons).astype(np.int32)
        cells = [
            (f, polygon)
            for f, polygon, cosine in zip(members.tolist(), rounded, cosines.tolist(), strict=True)
            if cosine > 0
        ]
        middle = np.add.reduce(solid, axis=0) / len(solid)
        depth = math.sqrt(float(middle.dot(middle)))  # = np.linalg.norm(middle)
        drawn.append((depth, np.rint(hull).astype(np.int32), cells))
    index = np.full(shape, EMPTY, np.int32)
    for _, hull, cells in sorted(drawn, key=lambda d: -d[0]):  # farthest first, nearest last
        cv2.fillPoly(index, [hull], BODY)
        for facelet, polygon in cells:
            cv2.fillPoly(index, [polygon], facelet)
    return index, cells_px, facing, measured


def _scaled(polygon: FloatArray, scale: float) -> FloatArray:
    center = np.add.reduce(polygon, axis=0) / len(polygon)  # = polygon.mean(axis=0)
    return np.asarray(center + (polygon - center) * scale, dtype=np.float64)


def _mask(shape: tuple[int, int], polygon: FloatArray, origin: FloatArray) -> NDArray[np.uint8]:
    mask = np.zeros(shape, np.uint8)
    cv2.fillPoly(mask, [np.rint(polygon - origin).astype(np.int32)], 1)
    return mask


@dataclass(frozen=True)
class _Measure:
    mean_bgr: FloatArray
    spread: float  # mean standard deviation of L, a, b over the inner part
    pixels: int
    border_contrast: float  # CIELAB distance of the inner part to its border sides (see below)
    own_fraction: float  # fraction of the sticker-sized part labelled with the facelet itself
    inner_lab: FloatArray  # mean CIELAB of the inner part
    border_lab: FloatArray  # mean CIELAB of the border sides looked at


def _measure(
    crop: NDArray[np.uint8],
    index: NDArray[np.int32],
    facelet: int,
    cell: FloatArray,
    min_own_fraction: float = 0.0,
) -> _Measure | None:
    """Colour of a cell's inner part and its contrast to the border band (own pixels only).

    `cell` is in the crop's pixel coordinates; only the cell's bounding box is looked at. None
    if too little of the cell is its own (below `min_own_fraction`) or too small to sample.
    """
    height, width = index.shape
    x, y, w, h = cv2.boundingRect(cell.astype(np.float32))
    x0, y0, x1, y1 = max(0, x), max(0, y), min(width, x + w + 1), min(height, y + h + 1)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return None
    origin = np.array([x0, y0], dtype=np.float64)
    shape = (y1 - y0, x1 - x0)
    own = (index[y0:y1, x0:x1] == facelet).view(np.uint8)
    sticker = _mask(shape, _scaled(cell, STICKER_SCALE), origin)
    area = cv2.countNonZero(sticker)
    if area == 0:
        return None
    own_fraction = cv2.countNonZero(sticker & own) / area
    if own_fraction < min_own_fraction:
        return None
    inner = _mask(shape, _scaled(cell, SAMPLE_SCALE), origin) & own
    pixels = cv2.countNonZero(inner)
    if pixels < MIN_INNER_PX:
        return None
    # The border band side by side: a sticker is set off from its border on every side; a
    # finger across the cell is not (it continues over the border where it enters and leaves).
    # Sides whose band is thinner than MIN_BAND_PX (the short sides of a cell seen at a grazing
    # angle) mix the sticker in and are not used. Of three or more sides the second least
    # distinct counts: a fit a little off can put one side's band on the sticker, but a finger
    # crossing the cell spoils two.
    shrunk = _scaled(cell, BORDER_SCALE)
    segments = []
    for side in range(len(cell)):
        following = (side + 1) % len(cell)
        band = np.array([cell[side], cell[following], shrunk[following], shrunk[side]])
        segment = _mask(shape, band, origin) & own
        edge = cell[following] - cell[side]
        length = math.sqrt(float(edge.dot(edge)))  # np.linalg.norm(edge), without its overhead
        if cv2.countNonZero(segment) >= MIN_BAND_PX * max(length, 1.0):
            segments.append(segment)
    if len(segments) < 2:
        return None
    box = crop[y0:y1, x0:x1]
    lab, (lab_inner, *lab_segments) = lab_samples(box, [inner, *segments])
    inner_mean, inner_std = cv2.meanStdDev(lab, mask=lab_inner)
    inner_lab = np.asarray(inner_mean, dtype=np.float64).reshape(3)
    border_means = [np.asarray(cv2.mean(lab, mask=segment)[:3]) for segment in lab_segments]
    contrasts = [_distance(inner_lab, mean) for mean in border_means]
    contrast = sorted(contrasts)[1] if len(contrasts) >= 3 else min(contrasts)
    mean_bgr = np.asarray(cv2.mean(box, mask=inner)[:3], dtype=np.float64)
    spread = float(np.add.reduce(inner_std, axis=None) / inner_std.size)  # = np.mean(inner_std)
    border_lab = np.add.reduce(border_means, axis=0) / len(border_means)
    return _Measure(
        mean_bgr, spread, int(pixels), contrast, float(own_fraction), inner_lab, border_lab
    )


@dataclass(frozen=True)
class StickerLook:
    """What a sticker looks like in one view, from its placed stickers measured as candidates
    are: whether a projected cell's sample passes as a sticker's colour."""

    max_spread: float  # CIELAB spread allowed (MAX_SPREAD_FACTOR x their median + slack)
    contrast_quartile: float  # lower quartile of their border contrasts
    body_lab: FloatArray  # median CIELAB of their border bands: the plastic between stickers
    chromaticities: FloatArray  # (N, 2): the placed stickers' chromaticities (see chromaticity)
    #: Median CIEDE2000 of the placed stickers' insides from body_lab: how plainly a sticker
    #: and the bare body differ in this view (`bare_body`).
    sticker_body_delta_e: float = float("inf")
    #: Per model face with MIN_FACE_STICKERS placed stickers or more: the lowest luminance
    #: (relative Y) of their insides (`bare_body`).
    darkest_on_face: dict[int, float] = field(default_factory=dict)

    def passes(self, found: _Measure, facing: float = 1.0) -> bool:
        """Uniform enough, and set off from its border; or less so, but unlike the bare body
        and of a colour the placed stickers show (see MIN_CLEAR_CONTRAST_FRACTION); `refusal`
        says which test a sample fails.

        A cell seen at a slant (`facing` below CLEAR_FACING) needs only the faint contrast
        scaled by facing / CLEAR_FACING and no colour gate. Seen so, a cell's border band
        across its long sides is as thin as the cell is foreshortened, a pixel or less, and the
        lens blurs the gap into the sticker (a stickerless tile's seam all the more): on the
        corpus (session 25) 182 of 368 cells in view at facings 0.12-0.3 showed less than half
        the quartile, and whole side faces of stickerless cubes (c0045, c0012, c0001) were left
        unread. A side face seen only at a slant shows colours no squarely placed sticker of
        the view shows. A finger there is caught downstream: a penalty never rests on samples
        seen at a slant (`slanted`, below facing 0.25) or on one sample no other view confirms
        (`single_sample`), and a solved reading needs each to be exactly the solved colour.
        """
        return self.refusal(found, facing) is None

    def refusal(self, found: _Measure, facing: float = 1.0) -> str | None:
        """The test of `passes` that `found` fails (None if it passes it)."""
        if found.spread > self.max_spread:
            return "not uniform"
        contrast = found.border_contrast
        if contrast >= MIN_BORDER_CONTRAST_FRACTION * self.contrast_quartile:
            return None
        slant = min(1.0, facing / CLEAR_FACING)
        if contrast < MIN_CLEAR_CONTRAST_FRACTION * slant * self.contrast_quartile:
            return "not set off from its border"
        if not self.unlike_body(found.inner_lab):
            return "like the bare body"
        if facing < CLEAR_FACING:
            return None
        gaps = np.linalg.norm(self.chromaticities - chromaticity(found.inner_lab), axis=1)
        return None if gaps.min() <= MAX_CHROMATICITY_GAP else "a colour no placed sticker shows"

    def bare_body(self, found: _Measure, face: int | None = None) -> bool:
        """Uniform, grey (chroma below NEUTRAL_CHROMA) and like the bare body (not
        `unlike_body`): what a cell that does not pass as a sticker shows where its sticker
        came off. Its border contrast says nothing here (the recess a sticker leaves is darker
        than the body around it, corpus c0087). Grey, because the body median is the bare
        plastic only on a stickered puzzle: a stickerless one's borders are its tiles' own
        colours, and a shaded tile looks like them (c0142: yellow at chroma 30). Or, on `face`
        (a model face index), uniform, grey and far darker than every sticker placed on that
        face (MAX_BARE_LUMINANCE_RATIO), whatever the body median says."""
        lab = found.inner_lab
        if found.spread > self.max_spread or math.hypot(float(lab[1]), float(lab[2])) >= (
            NEUTRAL_CHROMA
        ):
            return False
        if self.sticker_body_delta_e >= MIN_STICKER_BODY_DELTA_E and not self.unlike_body(lab):
            return True
        darkest = self.darkest_on_face.get(face) if face is not None else None
        return darkest is not None and float(luminance(lab)) <= MAX_BARE_LUMINANCE_RATIO * darkest

    def unlike_body(self, lab: FloatArray) -> bool:
        """Not the bare body: at least MIN_BODY_DELTA_E from it."""
        return float(ciede2000(lab, self.body_lab)) >= MIN_BODY_DELTA_E


def chromaticity(lab: FloatArray) -> FloatArray:
    """(a*, b*) / (L* + 16): under a dimmer light CIELAB's a*, b* and L* + 16 shrink alike
    (cube roots of the same factor), so a shaded sticker keeps its chromaticity."""
    lab = np.asarray(lab, dtype=np.float64)
    return lab[..., 1:3] / (lab[..., :1] + 16.0)


def _distance(first: FloatArray, second: FloatArray | Sequence[float]) -> float:
    """np.linalg.norm(first - second) of two colours, without its overhead (the same dot and
    square root)."""
    difference = first - np.asarray(second)
    return math.sqrt(float(difference.dot(difference)))


def _tight_parts(
    detected: tuple[Facelet, ...],
    fit: GeometryFit,
    model: PuzzleModel,
    cells: FloatArray,
    render_axis: int,
) -> list[bool]:
    """Per part of the rendered axis: whether the fit puts its placed stickers where they are."""
    axis = model.axes[render_axis]
    errors: list[list[float]] = [[] for _ in axis.part_names]
    for detection in np.nonzero(fit.assignment >= 0)[0]:
        facelet = int(fit.assignment[detection])
        sample = detected[detection]
        cell = cells[facelet]
        offset = sample.center_px - np.add.reduce(cell, axis=0) / len(cell)
        gap = math.sqrt(float(offset.dot(offset)))  # = np.linalg.norm(offset)
        errors[int(axis.facelet_part[facelet])].append(gap / max(sample.size_px, 1e-6))
    return [
        bool(found)
        and median(found) <= MAX_PART_CENTER_ERROR
        and sum(e <= MAX_PART_CENTER_ERROR for e in found) >= MIN_TIGHT_STICKERS
        for found in errors
    ]


def _single_piece_parts(model: PuzzleModel) -> list[list[bool]]:
    """Per axis and part: whether the part is one piece (a Pyraminx tip), which turns freely
    whatever the other axes do; parts of several pieces block every other axis when turned."""
    return [
        [
            len({model.facelet_piece[i] for i in np.nonzero(axis.facelet_part == part)[0]}) == 1
            for part in range(len(axis.part_names))
        ]
        for axis in model.axes
    ]


def _jammed(
    fit: GeometryFit, model: PuzzleModel, single: list[list[bool]], render_axis: int
) -> bool:
    """Whether the rendered axis has two adjacent multi-piece parts measured clearly apart: the
    layers of every other axis are then locked in line (a layer cannot turn across another)."""
    axis = model.axes[render_axis]
    angles = fit.part_angles[render_axis]
    for lower, upper in axis.pairs:
        first, second = angles[lower], angles[upper]
        if first is None or second is None:
            continue
        if single[render_axis][lower] or single[render_axis][upper]:
            continue
        step = axis.step_deg
        gap = (second.angle_deg - first.angle_deg + step / 2) % step - step / 2
        if abs(gap) > JAMMING_TURN_DEG:
            return True
    return False


def _unrenderable_facelets(
    fit: GeometryFit, model: PuzzleModel, render_axis: int
) -> set[int] | None:
    """Facelets a rendering turning only `render_axis` cannot place (a turned or unmeasured free
    tip of another axis), or None if it would not be the puzzle at all (a layer of another axis
    turned; or unmeasured, or measured too loosely to tell it from in line, while nothing locks
    it in line)."""
    single = _single_piece_parts(model)
    jammed = _jammed(fit, model, single, render_axis)
    excluded: set[int] = set()
    for axis_index, angles in enumerate(fit.part_angles):
        if axis_index == render_axis:
            continue
        axis = model.axes[axis_index]
        for part, angle in enumerate(angles):
            aligned = angle is not None and abs(angle.angle_deg) <= MAX_OTHER_AXIS_DEG
            if aligned:
                continue
            if single[axis_index][part]:
                excluded.update(int(f) for f in np.nonzero(axis.facelet_part == part)[0])
            elif jammed and (
                angle is None
                or abs(angle.angle_deg) - stated_uncertainty(angle.sigma_deg) <= MAX_OTHER_AXIS_DEG
            ):
                # Locked in line by the active axis's turned layer: unmeasured, or measured on
                # too few stickers to tell from in line (c0180 at 1.5x: 6.2 +- 15 degrees).
                continue
            else:
                return None
    return excluded


@dataclass(frozen=True)
class Projection:
    """What `project_facelets` found: the samples, and the cells in plain sight (their own,
    facing the camera at least CLEAR_FACING) whose sample did not look like a sticker."""

    samples: tuple[ProjectedFacelet, ...]
    refused: frozenset[int]
    #: The cells in view (any facing) refused whose sample looks like the bare body between
    #: the stickers: uniform, and of the body's colour (`StickerLook.bare_body`).
    #: A sticker may be off there; `bare_cells.bare_decides` asks the verdict about it.
    bare: frozenset[int] = frozenset()


#: A cell facing the camera at least this squarely (72 degrees) shows its sticker plainly: if
#: its sample does not look like one, the placement (or something in front) is wrong.
CLEAR_FACING = 0.3


@dataclass(frozen=True, eq=False)
class _Scene:
    """The fit rendered over the puzzle's part of the image: what `project_facelets` samples."""

    render_axis: int
    excluded: set[int]  # facelets the rendering cannot place (`_unrenderable_facelets`)
    origin: FloatArray  # the crop's top left corner in the image
    crop: NDArray[np.uint8]
    index: NDArray[np.int32]  # the rendering's index image over the crop (`_render`)
    cells: FloatArray
    facing: FloatArray
    measured: NDArray[np.bool_]
    tight: list[bool]  # per part of the rendered axis (`_tight_parts`)
    placed: set[int]  # facelets a detection was placed on


def _scene(
    image: NDArray[np.uint8],
    detected: tuple[Facelet, ...],
    fit: GeometryFit,
    model: PuzzleModel,
    intrinsics: Intrinsics,
    placed_elsewhere: frozenset[tuple[int, int]],
) -> _Scene | None:
    """The rendering `project_facelets` samples from, or None if the fit cannot be rendered."""
    if not fit.found or fit.active_axis < 0:
        return None
    # The fit's active axis is rendered with its parts' angles, the others in line. If a layer
    # of another axis was not measured (it may stand askew), that axis is rendered instead, its
    # unmeasured layer swept over a turning step, provided every other layer was measured in line.
    rendering = next(
        (
            (axis, excluded)
            for axis in (fit.active_axis, *range(len(model.axes)))
            if (excluded := _unrenderable_facelets(fit, model, axis)) is not None
        ),
        None,
    )
    if rendering is None:
        return None
    render_axis, excluded = rendering
    height, width = image.shape[:2]
    rotation = rotation_matrix(fit.rvec)
    body = model.facelet_corners.reshape(-1, 3) @ rotation.T + fit.tvec
    if np.any(body[:, 2] <= 1e-3):
        return None
    extent = _pixels(body, intrinsics)
    margin = 0.2 * model.sticker_size / model.radius * float(np.ptp(extent[:, 0]))
    x0 = int(np.clip(np.floor(extent[:, 0].min() - margin), 0, width - 1))
    y0 = int(np.clip(np.floor(extent[:, 1].min() - margin), 0, height - 1))
    x1 = int(np.clip(np.ceil(extent[:, 0].max() + margin) + 1, x0 + 1, width))
    y1 = int(np.clip(np.ceil(extent[:, 1].max() + margin) + 1, y0 + 1, height))
    origin = np.array([x0, y0], dtype=np.float64)
    shape = (y1 - y0, x1 - x0)
    try:
        index, cells, facing, measured = _render(fit, model, intrinsics, origin, shape, render_axis)
    except ValueError:
        return None
    crop = np.ascontiguousarray(image[y0:y1, x0:x1])
    placed = {int(fit.assignment[d]) for d in np.nonzero(fit.assignment >= 0)[0]}
    tight = _tight_parts(detected, fit, model, cells, render_axis)
    for axis_index, part in placed_elsewhere:
        if axis_index == render_axis:
            tight[part] = True
    return _Scene(
        render_axis, excluded, origin, crop, index, cells, facing, measured, tight, placed
    )


def _not_a_candidate(
    scene: _Scene, model: PuzzleModel, facelet: int, missing: tuple[int, ...]
) -> str | None:
    """Why `project_facelets` does not sample `facelet` at all (None: it is a candidate)."""
    if facelet in scene.placed:
        return "a sticker was placed on it"
    if facelet in missing:
        return "its sticker is off"
    if facelet in scene.excluded:
        return "on a free tip the rendering cannot place"
    if not scene.measured[facelet]:
        return "on a part whose angle was not measured"
    if not scene.tight[int(model.axes[scene.render_axis].facelet_part[facelet])]:
        return "on a part whose stickers do not sit where the fit puts them"
    if scene.facing[facelet] < MIN_FACING:
        return "facing the camera less than MIN_FACING"
    return None


def _sticker_look(
    scene: _Scene, detected: tuple[Facelet, ...], fit: GeometryFit, model: PuzzleModel
) -> StickerLook | None:
    """What a sticker looks like here: the placed stickers, measured the same way (squarely
    facing and grazing ones alike, as the candidates are); None if too few to tell."""
    placed_detections = np.nonzero(fit.assignment >= 0)[0]
    spreads = [detected[d].spread for d in placed_detections]
    contrasts = []
    borders = []
    insides = []
    on_face: dict[int, list[float]] = {}
    for detection in placed_detections:
        facelet = int(fit.assignment[detection])
        found = (
            _measure(scene.crop, scene.index, facelet, scene.cells[facelet] - scene.origin)
            if scene.measured[facelet]
            else None
        )
        if found is not None:
            contrasts.append(found.border_contrast)
            borders.append(found.border_lab)
            insides.append(found.inner_lab)
            face = int(model.facelet_face[facelet])
            on_face.setdefault(face, []).append(float(luminance(found.inner_lab)))
    if len(spreads) < MIN_REFERENCE_STICKERS or len(contrasts) < MIN_REFERENCE_STICKERS:
        return None
    body = np.median(np.asarray(borders), axis=0)
    return StickerLook(
        MAX_SPREAD_FACTOR * median(spreads) + SPREAD_SLACK,
        float(np.percentile(contrasts, 25)),
        body,
        chromaticity(np.asarray(insides)),
        float(np.median(ciede2000(np.asarray(insides), body))),
        {f: min(ys) for f, ys in on_face.items() if len(ys) >= MIN_FACE_STICKERS},
    )


def project_facelets(
    image: NDArray[np.uint8],
    detected: tuple[Facelet, ...],
    fit: GeometryFit,
    model: PuzzleModel,
    intrinsics: Intrinsics,
    missing: tuple[int, ...] = (),
    placed_elsewhere: frozenset[tuple[int, int]] = frozenset(),
) -> Projection:
    """Samples of the visible model facelets no detection was placed on (the fit's frame), and
    the cells in plain sight refused as stickers (`Projection`).

    `placed_elsewhere`: (axis, part) whose angle the other views measured (`second_look`):
    sampled without stickers of their own to show the fit is tight there."""
    nothing = Projection((), frozenset())
    scene = _scene(image, detected, fit, model, intrinsics, placed_elsewhere)
    if scene is None:
        return nothing
    candidates = [
        facelet
        for facelet in range(model.facelet_count)
        if _not_a_candidate(scene, model, facelet, missing) is None
    ]
    if not candidates:
        return nothing
    look = _sticker_look(scene, detected, fit, model)
    if look is None:
        return nothing  # no idea what a sticker looks like here: sample nothing

    result = []
    refused = set()
    bare = set()
    for facelet in candidates:
        cell = scene.cells[facelet]
        facing = float(scene.facing[facelet])
        found = _measure(scene.crop, scene.index, facelet, cell - scene.origin, MIN_OWN_FRACTION)
        if found is None:
            continue
        if not look.passes(found, facing):
            if facing >= CLEAR_FACING:
                refused.add(facelet)
            if look.bare_body(found, int(model.facelet_face[facelet])):
                bare.add(facelet)
            continue
        fraction = found.own_fraction
        sample = Facelet(
            corners_px=cell,
            mean_bgr=found.mean_bgr,
            spread=found.spread,
            pixel_count=found.pixels,
            confidence=float(min(1.0, fraction) * facing),
        )
        result.append(ProjectedFacelet(facelet, sample, facing, fraction))
    logger.debug(
        "projected %d facelet samples (spread <= %.1f, contrast quartile %.1f)",
        len(result),
        look.max_spread,
        look.contrast_quartile,
    )
    return Projection(tuple(result), frozenset(refused), frozenset(bare))


def unsampled_reasons(
    image: NDArray[np.uint8],
    detected: tuple[Facelet, ...],
    fit: GeometryFit,
    model: PuzzleModel,
    intrinsics: Intrinsics,
    missing: tuple[int, ...] = (),
    placed_elsewhere: frozenset[tuple[int, int]] = frozenset(),
) -> dict[int, str]:
    """Per model facelet (fit frame) that neither a detection was placed on nor
    `project_facelets` samples: which of its tests kept it out. A diagnostic (see
    `evaluate --why-unread`): what to look at when a facelet in view goes unread."""
    scene = _scene(image, detected, fit, model, intrinsics, placed_elsewhere)
    if scene is None:
        # `_scene`'s reasons; a fit not found never reaches here from `evaluate.why_unread`.
        why = (
            "the fit cannot be rendered (a layer of another axis turned or unmeasured, "
            "or part of the puzzle behind the camera)"
        )
        placed = {int(a) for a in fit.assignment if a >= 0}
        return {f: why for f in range(model.facelet_count) if f not in placed}
    look = _sticker_look(scene, detected, fit, model)
    reasons: dict[int, str] = {}
    for facelet in range(model.facelet_count):
        if facelet in scene.placed:
            continue
        reason = _not_a_candidate(scene, model, facelet, missing)
        if reason is None and look is None:
            reason = "too few placed stickers to tell what one looks like here"
        if reason is None:
            cell = scene.cells[facelet] - scene.origin
            found = _measure(scene.crop, scene.index, facelet, cell)
            if found is None:
                reason = "too small or too thin to sample"
            elif found.own_fraction < MIN_OWN_FRACTION:
                reason = "mostly under a nearer piece"
            else:
                refusal = look.refusal(found, float(scene.facing[facelet])) if look else None
                reason = None if refusal is None else f"refused as a sticker: {refusal}"
        if reason is not None:
            reasons[facelet] = reason
    return reasons
