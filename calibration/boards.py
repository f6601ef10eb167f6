"""Calibration boards: parse a board description, draw it, find it in an image.

Two kinds, written on the command line as
`chessboard:COLSxROWS:SQUAREmm` (inner corners, e.g. `chessboard:9x6:25mm`) and
`charuco:COLSxROWS:SQUAREmm:MARKERmm:DICT` (squares, e.g. `charuco:7x5:30mm:22mm:4X4_50`).
A ChArUco board names every corner it finds, so a partly hidden board still gives a pose;
that is why `calibrate rig` wants one.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Literal

import cv2
import numpy as np
from numpy.typing import NDArray

logger = logging.getLogger(__name__)

BoardKind = Literal["chessboard", "charuco"]

_SIZE = re.compile(r"^(\d+)x(\d+)$", re.IGNORECASE)
_LENGTH = re.compile(r"^(\d+(?:\.\d+)?)\s*mm$", re.IGNORECASE)


class BoardError(ValueError):
    """A board description that cannot be parsed or used."""


@dataclass(frozen=True)
class BoardSpec:
    """A printed calibration board (lengths in millimetres).

    For a chessboard `columns` x `rows` counts inner corners; for ChArUco it counts squares
    (OpenCV's conventions for each).
    """

    kind: BoardKind
    columns: int
    rows: int
    square_mm: float
    marker_mm: float | None = None
    dictionary: str | None = None

    def describe(self) -> str:
        """The board as written on the command line."""
        text = f"{self.kind}:{self.columns}x{self.rows}:{self.square_mm:g}mm"
        if self.kind == "charuco":
            text += f":{self.marker_mm:g}mm:{self.dictionary}"
        return text

    @property
    def size_mm(self) -> tuple[float, float]:
        """Width and height of the squared area of the board."""
        squares = (
            (self.columns + 1, self.rows + 1)
            if self.kind == "chessboard"
            else (self.columns, self.rows)
        )
        return squares[0] * self.square_mm, squares[1] * self.square_mm


@dataclass(frozen=True)
class BoardDetection:
    """Board corners found in one image: pixel positions and matching board positions (mm)."""

    image_points: NDArray[np.float32]  # (N, 2)
    object_points: NDArray[np.float32]  # (N, 3), z = 0 on the board
    image_size: tuple[int, int]  # (width, height)


def parse_board(text: str) -> BoardSpec:
    """A BoardSpec from `chessboard:9x6:25mm` or `charuco:7x5:30mm:22mm:4X4_50`."""
    parts = [part.strip() for part in text.split(":")]
    kind = parts[0].lower()
    if kind == "chessboard" and len(parts) == 3:
        columns, rows = _parse_size(parts[1], text)
        if min(columns, rows) < 2:
            raise BoardError(f"board {text!r}: a chessboard needs at least 2x2 inner corners")
        return BoardSpec("chessboard", columns, rows, _parse_length(parts[2], text))
    if kind == "charuco" and len(parts) == 5:
        columns, rows = _parse_size(parts[1], text)
        if min(columns, rows) < 3:
            raise BoardError(f"board {text!r}: a ChArUco board needs at least 3x3 squares")
        square = _parse_length(parts[2], text)
        marker = _parse_length(parts[3], text)
        if marker >= square:
            raise BoardError(f"board {text!r}: the marker must be smaller than the square")
        dictionary = parts[4].upper().removeprefix("DICT_")
        if not hasattr(cv2.aruco, f"DICT_{dictionary}"):
            raise BoardError(f"board {text!r}: unknown ArUco dictionary {parts[4]!r}")
        spec = BoardSpec("charuco", columns, rows, square, marker, dictionary)
        markers_needed = (columns * rows) // 2
        available = _aruco_dictionary(spec).bytesList.shape[0]
        if markers_needed > available:
            raise BoardError(
                f"board {text!r}: needs {markers_needed} markers, {dictionary} has {available}"
            )
        return spec
    raise BoardError(
        f"board {text!r}: expected chessboard:COLSxROWS:SQUAREmm or "
        "charuco:COLSxROWS:SQUAREmm:MARKERmm:DICT"
    )


def _parse_size(text: str, whole: str) -> tuple[int, int]:
    match = _SIZE.match(text)
    if not match:
        raise BoardError(f"board {whole!r}: size {text!r} is not COLSxROWS")
    return int(match.group(1)), int(match.group(2))


def _parse_length(text: str, whole: str) -> float:
    match = _LENGTH.match(text)
    if not match or float(match.group(1)) <= 0:
        raise BoardError(f"board {whole!r}: length {text!r} is not a positive number of mm")
    return float(match.group(1))


def _aruco_dictionary(spec: BoardSpec) -> Any:
    return cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, f"DICT_{spec.dictionary}"))


def charuco_board(spec: BoardSpec) -> Any:
    """The cv2.aruco.CharucoBoard for a ChArUco spec (lengths in mm)."""
    if spec.kind != "charuco" or spec.marker_mm is None:
        raise BoardError(f"{spec.describe()} is not a ChArUco board")
    return cv2.aruco.CharucoBoard(
        (spec.columns, spec.rows), spec.square_mm, spec.marker_mm, _aruco_dictionary(spec)
    )


def board_corners_mm(spec: BoardSpec) -> NDArray[np.float32]:
    """(N, 3) board positions of every corner the detector can report, in OpenCV order.

    Chessboard corners start one square in from the board's top-left edge, like ChArUco ones,
    so both kinds share one frame: origin at the top-left of the squared area, x along
    columns, y along rows, z into the board.
    """
    if spec.kind == "charuco":
        return np.asarray(charuco_board(spec).getChessboardCorners(), dtype=np.float32)
    grid = np.mgrid[1 : spec.columns + 1, 1 : spec.rows + 1].T.reshape(-1, 2)
    points = np.zeros((len(grid), 3), dtype=np.float32)
    points[:, :2] = grid * spec.square_mm
    return points


def render_board(
    spec: BoardSpec, pixels_per_mm: float, margin_mm: float = 10.0
) -> NDArray[np.uint8]:
    """A grey image of the board (white margin all round), for printing or synthetic tests.

    Board millimetre (x, y) lies at pixel coordinate ((x + margin_mm) * pixels_per_mm - 0.5,
    (y + margin_mm) * pixels_per_mm - 0.5) with pixel centres at integers (OpenCV's
    convention), provided the board and margin are whole numbers of pixels.
    """
    width_mm, height_mm = spec.size_mm
    margin = round(margin_mm * pixels_per_mm)
    width = round(width_mm * pixels_per_mm)
    height = round(height_mm * pixels_per_mm)
    if spec.kind == "charuco":
        inner = charuco_board(spec).generateImage((width, height), marginSize=0, borderBits=1)
    else:
        column_cells = np.floor((np.arange(width) + 0.5) / pixels_per_mm / spec.square_mm)
        row_cells = np.floor((np.arange(height) + 0.5) / pixels_per_mm / spec.square_mm)
        cells = row_cells.astype(int)[:, None] + column_cells.astype(int)[None, :]
        inner = np.where(cells % 2 == 0, 0, 255).astype(np.uint8)
    return cv2.copyMakeBorder(inner, margin, margin, margin, margin, cv2.BORDER_CONSTANT, value=255)


def detect_board(spec: BoardSpec, image: NDArray[np.uint8]) -> BoardDetection | None:
    """The board's corners in a BGR or grey image, refined to sub-pixel; None if not found.

    A chessboard must be seen whole (findChessboardCorners); a ChArUco board may be partly
    hidden but must show at least 6 corners (fewer cannot constrain a view).
    """
    grey = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    size = (int(grey.shape[1]), int(grey.shape[0]))
    if spec.kind == "chessboard":
        found, corners = cv2.findChessboardCorners(
            grey,
            (spec.columns, spec.rows),
            flags=cv2.CALIB_CB_ADAPTIVE_THRESH | cv2.CALIB_CB_NORMALIZE_IMAGE,
        )
        if not found:
            return None
        window = _subpixel_window(np.asarray(corners, dtype=np.float32).reshape(-1, 2))
        criteria = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 50, 1e-3)
        corners = cv2.cornerSubPix(grey, corners, (window, window), (-1, -1), criteria)
        return BoardDetection(
            corners.reshape(-1, 2).astype(np.float32), board_corners_mm(spec), size
        )
    detector = cv2.aruco.CharucoDetector(charuco_board(spec))
    charuco_corners, charuco_ids, _, _ = detector.detectBoard(grey)
    if charuco_ids is None or len(charuco_ids) < 6:
        return None
    ids = charuco_ids.reshape(-1)
    object_points = board_corners_mm(spec)[ids]
    return BoardDetection(
        charuco_corners.reshape(-1, 2).astype(np.float32), object_points.astype(np.float32), size
    )


def _subpixel_window(corners: NDArray[np.float32]) -> int:
    """Half-size of the cornerSubPix window: a third of the smallest corner spacing, 2..11 px.

    A window wider than half a square reaches the next corner and pulls the estimate off.
    """
    differences = np.diff(corners, axis=0)
    spacing = float(np.min(np.linalg.norm(differences, axis=1)))
    return int(np.clip(spacing / 3.0, 2, 11))
