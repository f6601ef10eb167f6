"""Draw what `judgecam check` saw on a view: facelets, colours, the fitted puzzle, axes, angles.

The overlay is evidence for a human (a judge, or a competitor disputing a verdict), so it shows
the measurement itself: every detected facelet outlined in the colour it was read as, the fitted
model's stickers projected back (thin white), the cells where a sticker is off (`missing`) or
looks off (`bare`, the cells a "bare plastic" review names) crossed in cyan, the turning axes,
and each pair's angle.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import PurePath

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.vision.camera import project, rotation_matrix
from judgecam.vision.geometry import _sticker_corners, _turned_model
from judgecam.vision.model import PuzzleModel, rotation_about
from judgecam.vision.pipeline import ViewResult

logger = logging.getLogger(__name__)

#: Outline colours (BGR) for colour names; anything else is drawn magenta.
NAMED_BGR: dict[str, tuple[int, int, int]] = {
    "white": (255, 255, 255),
    "yellow": (0, 230, 255),
    "red": (0, 0, 230),
    "orange": (0, 140, 255),
    "green": (0, 200, 0),
    "blue": (255, 80, 0),
}
#: Cells where a sticker is off or looks off (BGR): no puzzle colour is cyan.
BARE_BGR = (255, 255, 0)


def _point(p: NDArray[np.float64]) -> tuple[int, int]:
    return round(float(p[0])), round(float(p[1]))


#: What the overlay's Hershey font (ASCII only: it draws anything else as "?") writes instead.
ASCII_FOR = {"±": "+-", "°": " deg", "—": "-", "–": "-", "×": "x", "…": "..."}


def in_ascii(text: str) -> str:
    """`text` as the overlay's font can draw it: "+56.3±4.5 degrees" read as "+56.3+-4.5
    degrees", not "+56.3??4.5" (`ASCII_FOR`; any other non-ASCII character becomes "?")."""
    spelled = "".join(ASCII_FOR.get(character, character) for character in text)
    return spelled.encode("ascii", "replace").decode("ascii")


def wrapped(text: str, width: int, scale: float, thickness: int) -> list[str]:
    """`text` broken at spaces into lines at most `width` pixels wide in the overlay's font (a
    word wider than that stays whole): a long reason is read to its end, not cut at the edge."""
    lines: list[str] = []
    for word in in_ascii(text).split(" "):
        longer = f"{lines[-1]} {word}" if lines else ""
        size, _ = cv2.getTextSize(longer, cv2.FONT_HERSHEY_SIMPLEX, scale, thickness + 2)
        if lines and size[0] <= width:
            lines[-1] = longer
        else:
            lines.append(word)
    return lines


def view_remarks(view: ViewResult, reasons: Sequence[str]) -> list[str]:
    """What the capture's reasons say about this view (its problems, and whether it was left
    out: a view drawn under the verdict must not look as if the verdict rests on it); its own
    problems where no reasons are given."""
    prefix = f"{view.name}: "
    own = [reason[len(prefix) :] for reason in reasons if reason.startswith(prefix)]
    return own or list(view.problems)


def header_lines(
    view: ViewResult, verdict: str, reasons: Sequence[str], because: Sequence[str] = ()
) -> list[str]:
    """The text over a view: the verdict with the file's own name (a long path would push the
    verdict off the image's edge), why it is a review (`because`: a judge holding the picture
    in a dispute must see the cause, not only the word), then what the reasons say of this
    view that the cause does not already say."""
    name = PurePath(view.name).name or view.name
    title = f"{verdict}: {name}" if verdict else name
    prefix = f"{view.name}: "
    said = {reason[len(prefix) :] for reason in because if reason.startswith(prefix)}
    remarks = [remark for remark in view_remarks(view, reasons) if remark not in said]
    return [title, *(f"why: {reason}" for reason in because), *remarks]


def draw_view(
    image: NDArray[np.uint8],
    view: ViewResult,
    model: PuzzleModel,
    labels: Sequence[str | None] | None = None,
    pair_lines: Sequence[str] = (),
    verdict: str = "",
    reasons: Sequence[str] = (),
    because: Sequence[str] = (),
) -> NDArray[np.uint8]:
    """A copy of `image` with the view's measurement drawn on it; `reasons` are the capture's
    (`CheckResult.reasons`), of which those about this view are written on it, under the
    review's cause (`CheckResult.review_because`, see `header_lines`)."""
    out = image.copy()
    thickness = max(1, round(min(image.shape[:2]) / 500))
    if view.segmentation is not None:
        for index, facelet in enumerate(view.segmentation.facelets):
            label = labels[index] if labels is not None and index < len(labels) else None
            color = NAMED_BGR.get(label or "", (255, 0, 255))
            matched = view.fit is not None and view.fit.assignment[index] >= 0
            polygon = np.rint(facelet.corners_px).astype(np.int32)
            cv2.polylines(
                out, [polygon], True, color if matched else (128, 128, 128), thickness + 1
            )
    fit = view.fit
    if fit is not None and fit.found:
        rotation = rotation_matrix(fit.rvec)
        corners = _sticker_corners(model, 0.86)
        if fit.active_axis >= 0:
            angles = [
                a.angle_deg if a is not None else 0.0 for a in fit.part_angles[fit.active_axis]
            ]
            axis = model.axes[fit.active_axis]
            for part, angle in enumerate(angles):
                selected = axis.facelet_part == part
                corners[selected] = corners[selected] @ rotation_about(axis.direction, angle).T
            centers, normals = _turned_model(model, fit.active_axis, angles)
        else:
            centers, normals = model.facelet_centers, model.facelet_normals
        camera = view.intrinsics.camera_matrix
        in_camera = centers @ rotation.T + fit.tvec
        facing = np.einsum("ij,ij->i", normals @ rotation.T, in_camera) < 0
        for index in (int(i) for i in np.nonzero(facing)[0]):
            pixels = view.intrinsics.distort(project(corners[index], rotation, fit.tvec, camera))
            cv2.polylines(out, [np.rint(pixels).astype(np.int32)], True, (255, 255, 255), 1)
        for index in sorted({*view.missing, *view.bare}):
            pixels = view.intrinsics.distort(project(corners[index], rotation, fit.tvec, camera))
            cell = np.rint(pixels).astype(np.int32)
            cv2.polylines(out, [cell], True, BARE_BGR, thickness + 1)
            half = len(cell) // 2
            for first, second in zip(cell[:half], cell[half : 2 * half], strict=True):
                cv2.line(out, _point(first), _point(second), BARE_BGR, thickness)
        origin = view.intrinsics.distort(project(np.zeros(3), rotation, fit.tvec, camera))
        for axis, color in zip(
            model.axes, ((0, 0, 255), (0, 255, 0), (255, 0, 0), (0, 255, 255)), strict=False
        ):
            tip = view.intrinsics.distort(
                project(axis.direction * model.radius * 1.3, rotation, fit.tvec, camera)
            )
            cv2.arrowedLine(out, _point(origin), _point(tip), color, thickness, tipLength=0.1)
            cv2.putText(
                out,
                axis.name,
                _point(tip),
                cv2.FONT_HERSHEY_SIMPLEX,
                0.5 * thickness,
                color,
                thickness,
            )
    scale = 0.6 * thickness
    lines = [
        line
        for text in (*header_lines(view, verdict, reasons, because), *pair_lines)
        for line in wrapped(text, image.shape[1] - 20, scale, thickness)
    ]
    for row, text in enumerate(lines):
        origin_text = (10, 25 + 22 * row * thickness)
        cv2.putText(
            out,
            text,
            origin_text,
            cv2.FONT_HERSHEY_SIMPLEX,
            scale,
            (0, 0, 0),
            thickness + 2,
        )
        cv2.putText(
            out,
            text,
            origin_text,
            cv2.FONT_HERSHEY_SIMPLEX,
            scale,
            (255, 255, 255),
            thickness,
        )
    return out
