"""Reading one image file whole, or saying why it cannot be read.

OpenCV decodes a JPEG cut short (a copy interrupted, a card pulled out while writing) as far as
its data goes and fills the rest with grey, printing only a warning: judged, such a frame is a
puzzle with half its stickers gone. A JPEG or PNG whose end marker is missing is refused here
instead, before it is decoded, with a message that names the file.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

JPEG_START = b"\xff\xd8"
#: Start of scan: the compressed picture follows it. Inside a scan a 0xFF byte is always
#: followed by 0x00 or a restart marker, so neither this nor the end marker occurs there.
JPEG_SCAN = b"\xff\xda"
JPEG_END = b"\xff\xd9"
PNG_START = b"\x89PNG\r\n\x1a\n"
PNG_END = b"IEND"


class ImageFileError(ValueError):
    """An image file that is missing, unreadable, cut short or not an image; the message names
    the file and says which."""


def read_image(path: Path) -> NDArray[np.uint8]:
    """The file's picture as a BGR image (H, W, 3), read as `cv2.imread(IMREAD_COLOR)` does."""
    if not path.is_file():
        raise ImageFileError(f"no such image: {path}")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ImageFileError(f"cannot read {path}: {error.strerror or error}") from None
    if not data:
        raise ImageFileError(f"{path} is empty")
    problem = truncation(data)
    if problem is not None:
        raise ImageFileError(f"{path} is cut short ({problem}): copy it again")
    # Decoded from the bytes already read (the file is read once); like imread, imdecode
    # turns a JPEG by its EXIF orientation.
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    if image is None or image.size == 0:
        raise ImageFileError(f"cannot read {path} as an image")
    return np.asarray(image, dtype=np.uint8)


def truncation(data: bytes) -> str | None:
    """Why a JPEG or PNG file's bytes end before the picture does, or None (whole, or another
    format, left for the decoder to judge)."""
    if data.startswith(JPEG_START):
        last_scan = data.rfind(JPEG_SCAN)
        if last_scan < 0:
            return "a JPEG without its picture data"
        if data.find(JPEG_END, last_scan) < 0:
            return "a JPEG without its end marker"
    elif data.startswith(PNG_START) and data.rfind(PNG_END) < 0:
        return "a PNG without its end chunk"
    return None
