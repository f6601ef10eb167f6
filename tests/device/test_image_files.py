"""Image files read whole or refused with a reason: a copy cut short is never judged."""

from __future__ import annotations

import struct
from pathlib import Path

import cv2
import numpy as np
import pytest

from judgecam.device.image_files import ImageFileError, read_image, truncation


def _corpus_jpeg(corpus_dir: Path) -> bytes:
    return (corpus_dir / "c0163_cam0.jpg").read_bytes()


def test_a_whole_jpeg_reads_as_opencv_reads_it(corpus_dir: Path, tmp_path: Path) -> None:
    path = corpus_dir / "c0163_cam0.jpg"
    image = read_image(path)
    assert image.dtype == np.uint8 and image.shape == (960, 1280, 3)
    assert np.array_equal(image, cv2.imread(str(path), cv2.IMREAD_COLOR))
    # Bytes after the end marker (some cameras append their own data) are no truncation.
    padded = tmp_path / "padded.jpg"
    padded.write_bytes(_corpus_jpeg(corpus_dir) + b"\x00" * 64)
    assert np.array_equal(read_image(padded), image)


def test_a_jpeg_is_turned_by_its_exif_orientation_as_imread_turns_it(tmp_path: Path) -> None:
    image = np.zeros((40, 80, 3), np.uint8)
    image[:, :40] = (0, 0, 255)
    data = cv2.imencode(".jpg", image)[1].tobytes()
    # A minimal EXIF block: Orientation 6, the camera held a quarter turn clockwise.
    tiff = b"MM\x00\x2a\x00\x00\x00\x08\x00\x01" + struct.pack(">HHII", 0x0112, 3, 1, 6 << 16)
    tiff += b"\x00\x00\x00\x00"
    app1 = b"\xff\xe1" + struct.pack(">H", 8 + len(tiff)) + b"Exif\x00\x00" + tiff
    path = tmp_path / "turned.jpg"
    path.write_bytes(data[:2] + app1 + data[2:])
    read = read_image(path)
    assert read.shape == (80, 40, 3)
    assert np.array_equal(read, cv2.imread(str(path), cv2.IMREAD_COLOR))


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.999])
def test_a_jpeg_cut_short_is_refused(corpus_dir: Path, tmp_path: Path, fraction: float) -> None:
    data = _corpus_jpeg(corpus_dir)
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(data[: int(len(data) * fraction)])
    # OpenCV alone decodes it, grey where the data stopped: what this module is for.
    assert cv2.imread(str(cut), cv2.IMREAD_COLOR) is not None
    with pytest.raises(ImageFileError, match=r"cut\.jpg is cut short \(a JPEG without its end"):
        read_image(cut)


def test_a_png_cut_short_is_refused(tmp_path: Path) -> None:
    ok, encoded = cv2.imencode(".png", np.random.default_rng(1).integers(0, 255, (64, 64, 3)))
    assert ok
    data = encoded.tobytes()
    assert truncation(data) is None
    assert truncation(data[: len(data) // 2]) == "a PNG without its end chunk"


def test_other_unusable_files_say_why(tmp_path: Path) -> None:
    with pytest.raises(ImageFileError, match="no such image"):
        read_image(tmp_path / "missing.jpg")
    empty = tmp_path / "empty.jpg"
    empty.write_bytes(b"")
    with pytest.raises(ImageFileError, match=r"empty\.jpg is empty"):
        read_image(empty)
    text = tmp_path / "notes.jpg"
    text.write_text("not an image")
    with pytest.raises(ImageFileError, match=r"cannot read .*notes\.jpg as an image"):
        read_image(text)
    header_only = tmp_path / "header.jpg"
    header_only.write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00")
    with pytest.raises(ImageFileError, match="without its picture data"):
        read_image(header_only)
