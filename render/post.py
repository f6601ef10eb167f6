"""From the renderer's linear pinhole image to a camera's JPEG: lens distortion, blur, auto
exposure, white balance, sensor noise, tone curve and JPEG compression (OpenCV and numpy)."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

from judgecam.render.camera import Camera
from judgecam.render.color import linear_to_srgb
from judgecam.render.gl import PinholeView

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LensMaps:
    """A wider pinhole view that covers a distorted camera image, and the remap from it."""

    pinhole: PinholeView
    map_x: NDArray[np.float32]  # (H, W): pinhole x for each distorted output pixel
    map_y: NDArray[np.float32]


def lens_maps(camera: Camera, margin_px: int = 4) -> LensMaps:
    """The undistorted view to render for `camera` and the maps that distort it.

    Every output pixel (u, v) is undistorted with OpenCV's iterative inverse of the camera's
    distortion model to a normalised ray (x, y); the pinhole image with the same focal length is
    made just large enough to contain all those rays. Remapping through (x*fx + cx', y*fy + cy')
    then gives an image whose ground truth is exactly `cv2.projectPoints` with K, dist_coeffs.
    """
    k, dist = camera.camera_matrix, camera.dist_coeffs
    w, h = camera.width, camera.height
    u, v = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    pts = np.stack([u.ravel(), v.ravel()], 1).reshape(-1, 1, 2)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-10)
    rays = np.asarray(
        cv2.undistortPointsIter(pts, k, dist, None, None, criteria),  # type: ignore[call-overload]
        np.float64,
    ).reshape(h, w, 2)
    fx, fy = float(k[0, 0]), float(k[1, 1])
    x_min, x_max = float(rays[..., 0].min()), float(rays[..., 0].max())
    y_min, y_max = float(rays[..., 1].min()), float(rays[..., 1].max())
    cx = -x_min * fx + margin_px
    cy = -y_min * fy + margin_px
    width = math.ceil((x_max - x_min) * fx) + 2 * margin_px + 1
    height = math.ceil((y_max - y_min) * fy) + 2 * margin_px + 1
    pinhole = PinholeView(fx, fy, cx, cy, width, height, camera.world_from_camera)
    map_x = (rays[..., 0] * fx + cx).astype(np.float32)
    map_y = (rays[..., 1] * fy + cy).astype(np.float32)
    return LensMaps(pinhole, map_x, map_y)


def distort(
    hdr_supersampled: NDArray[np.float32], ids: NDArray[np.int32], maps: LensMaps
) -> tuple[NDArray[np.float32], NDArray[np.int32]]:
    """Area-average the supersampled render to the pinhole size, then remap both the image
    (bilinear) and the ID buffer (nearest) into the distorted camera image."""
    size = (maps.pinhole.width, maps.pinhole.height)
    hdr = cv2.resize(hdr_supersampled, size, interpolation=cv2.INTER_AREA)
    image = cv2.remap(hdr, maps.map_x, maps.map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    id_image = cv2.remap(
        ids.astype(np.float32),
        maps.map_x,
        maps.map_y,
        cv2.INTER_NEAREST,
        borderMode=cv2.BORDER_CONSTANT,
        borderValue=0,
    )
    return np.asarray(image, np.float32), np.rint(id_image).astype(np.int32)


@dataclass(frozen=True)
class SensorLook:
    """How one capture's camera pipeline degrades the image (drawn per view)."""

    exposure_ev: float  # auto-exposure error, in stops
    white_balance_strength: float  # 1 = perfect AWB for the key light, 0 = none
    defocus_sigma_px: float
    motion_blur_px: float
    motion_blur_angle_deg: float
    full_well: float  # electrons at a linear value of 1.0 (after exposure)
    read_noise: float  # electrons
    jpeg_quality: int
    vignetting: float = 0.0  # relative fall-off left in the corners after lens shading
    chromatic_px: float = 0.0  # lateral chromatic aberration at the corners (red out, blue in)
    sharpen: float = 0.0  # unsharp-mask amount of the ISP


def sample_sensor_look(rng: np.random.Generator, dim: bool) -> SensorLook:
    """A plausible small-sensor camera pipeline; `dim` scenes get fewer photons (more noise)."""
    return SensorLook(
        exposure_ev=float(rng.normal(0.0, 0.3)) - (0.3 if dim else 0.0),
        white_balance_strength=float(rng.uniform(0.75, 0.95)),
        defocus_sigma_px=float(rng.uniform(0.2, 0.8)),
        motion_blur_px=float(rng.choice([0.0, 0.0, 0.0, rng.uniform(1.0, 3.5)])),
        motion_blur_angle_deg=float(rng.uniform(0, 180)),
        full_well=float(rng.uniform(700, 1500) if dim else rng.uniform(6000, 15000)),
        read_noise=float(rng.uniform(1.5, 4.0)),
        jpeg_quality=int(rng.integers(78, 85)),
        vignetting=float(rng.uniform(0.08, 0.3)),
        chromatic_px=float(rng.uniform(0.2, 0.9)),
        sharpen=float(rng.uniform(0.1, 0.4)),
    )


def _motion_kernel(length: float, angle_deg: float) -> NDArray[np.float32]:
    size = max(3, math.ceil(length) | 1)
    kernel = np.zeros((size, size), np.float32)
    c = size // 2
    a = math.radians(angle_deg)
    dx, dy = math.cos(a) * length / 2, math.sin(a) * length / 2
    cv2.line(kernel, (round(c - dx), round(c - dy)), (round(c + dx), round(c + dy)), 1.0, 1)
    return kernel / kernel.sum()


def lens_effects(img: NDArray[np.float32], look: SensorLook) -> NDArray[np.float32]:
    """Optics: defocus, motion blur, lateral chromatic aberration and vignetting."""
    if look.defocus_sigma_px > 0:
        img = np.asarray(cv2.GaussianBlur(img, (0, 0), look.defocus_sigma_px), np.float32)
    if look.motion_blur_px > 0:
        kernel = _motion_kernel(look.motion_blur_px, look.motion_blur_angle_deg)
        img = np.asarray(cv2.filter2D(img, -1, kernel), np.float32)
    h, w = img.shape[:2]
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    cx, cy = (w - 1) / 2.0, (h - 1) / 2.0
    r2 = ((x - cx) ** 2 + (y - cy) ** 2) / (cx**2 + cy**2)  # 0 centre .. 1 corner
    if look.chromatic_px > 0:
        channels = list(cv2.split(img))
        for index, shift in ((0, look.chromatic_px), (2, -look.chromatic_px)):
            scale = 1.0 + shift / math.hypot(cx, cy)
            map_x = (cx + (x - cx) / scale).astype(np.float32)
            map_y = (cy + (y - cy) / scale).astype(np.float32)
            channels[index] = cv2.remap(
                channels[index], map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT
            )
        img = np.asarray(cv2.merge(channels), np.float32)
    falloff = (1.0 - look.vignetting * r2).astype(np.float32)
    return np.asarray(img * falloff[..., None], np.float32)


def bayer_capture(
    img: NDArray[np.float32],
    look: SensorLook,
    wb_gains: NDArray[np.float64],
    rng: np.random.Generator,
) -> NDArray[np.float32]:
    """The sensor and demosaic: sample an RGGB Bayer mosaic, add photon shot noise (Poisson)
    and read noise (Gaussian) per photosite, apply the white-balance gains to the raw channels
    and demosaic with OpenCV (edge-aware), as a camera's ISP does."""
    h, w = img.shape[:2]
    h2, w2 = h - h % 2, w - w % 2
    rgb = img[:h2, :w2]
    mosaic = np.empty((h2, w2), np.float32)
    channel_gain = np.empty((h2, w2), np.float32)
    # RGGB: R at (even, even), G at (even, odd) and (odd, even), B at (odd, odd)
    for dy, dx, c in ((0, 0, 0), (0, 1, 1), (1, 0, 1), (1, 1, 2)):
        mosaic[dy::2, dx::2] = rgb[dy::2, dx::2, c]
        channel_gain[dy::2, dx::2] = wb_gains[c]
    electrons = np.clip(mosaic, 0.0, 4.0) * look.full_well
    noisy = rng.poisson(electrons).astype(np.float32)
    noisy += rng.normal(0.0, look.read_noise, size=noisy.shape).astype(np.float32)
    raw = noisy / np.float32(look.full_well) * channel_gain
    scale = 16383.0 / 4.0
    raw16 = np.clip(np.rint(raw * scale), 0, 65535).astype(np.uint16)
    # OpenCV names Bayer patterns from the second row: an RGGB sensor is COLOR_BayerBG
    bgr = cv2.cvtColor(raw16, cv2.COLOR_BayerBG2BGR_EA).astype(np.float32) / np.float32(scale)
    out = np.empty_like(img)
    out[:h2, :w2] = bgr[:, :, ::-1]
    if h2 < h:
        out[h2:, :w2] = out[h2 - 1 : h2, :w2]
    if w2 < w:
        out[:, w2:] = out[:, w2 - 1 : w2]
    return out


def camera_pipeline(
    linear: NDArray[np.float32],
    light_rgb: NDArray[np.float64],
    look: SensorLook,
    rng: np.random.Generator,
) -> NDArray[np.uint8]:
    """A BGR uint8 photo from a linear RGB render: optics (blur, chromatic aberration,
    vignetting), auto exposure, a Bayer sensor with Poisson-Gaussian noise, partial auto white
    balance, demosaicing, ISP denoise and sharpening, a filmic tone curve and sRGB encoding."""
    img = np.nan_to_num(linear.astype(np.float32), nan=0.0, posinf=4.0, neginf=0.0)
    img = lens_effects(img, look)
    # partial white balance towards the key light's colour (applied to the raw channels)
    wb_gains = 1.0 / np.power(light_rgb / light_rgb.mean(), look.white_balance_strength)
    # auto exposure on the white-balanced image: centre-weighted mean luminance to ~15 % grey,
    # but keep the brightest diffuse areas (98th percentile) below clipping; then an error
    h, w = img.shape[:2]
    lum = (img * wb_gains.astype(np.float32)) @ np.array([0.2126, 0.7152, 0.0722], np.float32)
    centre = float(np.mean(lum[h // 4 : 3 * h // 4, w // 4 : 3 * w // 4]))
    metered = 0.6 * centre + 0.4 * float(np.mean(lum))
    highlight = float(np.percentile(lum[::4, ::4], 98))
    gain = min(0.15 / max(metered, 1e-6), 0.85 / max(highlight, 1e-6))
    img = img * np.float32(gain * 2.0**look.exposure_ev)
    img = bayer_capture(img, look, wb_gains, rng)
    img = isp_denoise(img, look.full_well)
    if look.sharpen > 0:
        soft = cv2.GaussianBlur(img, (0, 0), 1.2)
        img = np.asarray(img + look.sharpen * (img - soft), np.float32)
    # filmic shoulder (values above 0.7 roll off to white instead of clipping hard)
    img = np.clip(img, 0.0, None)
    img = np.where(img < 0.7, img, 0.7 + 0.3 * np.tanh((img - 0.7) / 0.3)).astype(np.float32)
    srgb = linear_to_srgb(img)
    rgb8 = np.clip(np.rint(srgb * 255.0), 0, 255).astype(np.uint8)
    return np.ascontiguousarray(rgb8[:, :, ::-1])


def isp_denoise(img: NDArray[np.float32], full_well: float) -> NDArray[np.float32]:
    """What a camera ISP does after demosaicing: light luma smoothing and much stronger chroma
    smoothing, both stronger when fewer photons were collected (higher gain)."""
    gain = float(np.clip(4000.0 / full_well, 0.3, 6.0))
    weights = np.array([0.2126, 0.7152, 0.0722], np.float32)
    luma = img @ weights
    chroma = img - luma[..., None]
    luma = np.asarray(cv2.GaussianBlur(luma, (0, 0), 0.4 + 0.07 * gain), np.float32)
    chroma = np.asarray(cv2.GaussianBlur(chroma, (0, 0), 1.0 + 0.25 * gain), np.float32)
    return np.asarray(luma[..., None] + chroma, np.float32)


def encode_jpeg(bgr: NDArray[np.uint8], quality: int) -> bytes:
    """JPEG bytes of a BGR image (4:2:0 chroma subsampling, like camera firmware)."""
    ok, data = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return bytes(data.tobytes())
