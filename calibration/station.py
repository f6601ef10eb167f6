"""The station configuration: one typed TOML file for everything a judge station needs.

Cameras (backend, source, resolutions, intrinsics, pose on the mat, locked controls), the
default puzzle and colour scheme, where evidence goes and how much disk must stay free, what
stops the timer, and where the web page listens. Unknown keys are errors (a misspelt
`exposure_ms` must not silently leave auto-exposure on); `load_station_config` reports every
problem in the file at once. See `example-station.toml` beside this module.
"""

from __future__ import annotations

import logging
import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast, get_args

import numpy as np
import tomli_w
from numpy.typing import NDArray

from judgecam.calibration.scheme import PUZZLES

logger = logging.getLogger(__name__)

Backend = Literal["picamera2", "opencv", "replay"]
TriggerKind = Literal["keyboard", "gpio", "stackmat-serial", "stackmat-audio"]

BACKENDS: tuple[str, ...] = get_args(Backend)
TRIGGER_KINDS: tuple[str, ...] = get_args(TriggerKind)
#: Keys of [trigger] that belong to each kind (besides `kind`).
TRIGGER_KEYS: dict[str, frozenset[str]] = {
    "keyboard": frozenset({"key"}),
    "gpio": frozenset({"gpio_pin", "active_low"}),
    "stackmat-serial": frozenset({"serial_port"}),
    "stackmat-audio": frozenset({"audio_device"}),
}
DEFAULT_FREE_SPACE_MB = 1024
DEFAULT_WEB_HOST = "127.0.0.1"
DEFAULT_WEB_PORT = 8080
#: Largest deviation from orthonormality accepted in a pose's rotation part.
POSE_TOLERANCE = 1e-3


class StationConfigError(ValueError):
    """A station configuration that cannot be used; `problems` lists every reason."""

    def __init__(self, path: str | Path | None, problems: list[str]) -> None:
        self.path = path
        self.problems = tuple(problems)
        where = f"{path}: " if path is not None else ""
        super().__init__(where + "; ".join(problems))


@dataclass(frozen=True)
class CameraControls:
    """Controls locked for colour stability; None leaves the camera's automatic control on."""

    exposure_us: int | None = None
    analogue_gain: float | None = None
    colour_gains: tuple[float, float] | None = None  # (red, blue) white-balance gains

    @property
    def fully_locked(self) -> bool:
        return None not in (self.exposure_us, self.analogue_gain, self.colour_gains)


@dataclass(frozen=True, eq=False)
class CameraConfig:
    """One camera of the station."""

    name: str
    backend: Backend
    source: str  # picamera2 camera number, OpenCV device number/URL, or replay file/folder
    resolution: tuple[int, int]  # (width, height) captured
    analysis_resolution: tuple[int, int]  # (width, height) given to vision
    intrinsics: Path | None = None
    pose: NDArray[np.float64] | None = None  # 4x4 mat_from_camera, millimetres
    controls: CameraControls = field(default_factory=CameraControls)


@dataclass(frozen=True)
class TriggerConfig:
    """What tells the station that the timer stopped."""

    kind: TriggerKind = "keyboard"
    key: str | None = None  # keyboard: the key (default space)
    gpio_pin: int | None = None  # gpio: BCM pin number
    active_low: bool | None = None
    serial_port: str | None = None  # stackmat-serial: e.g. /dev/ttyUSB0
    audio_device: str | None = None  # stackmat-audio: ALSA device name (default device if None)


@dataclass(frozen=True)
class WebConfig:
    host: str = DEFAULT_WEB_HOST
    port: int = DEFAULT_WEB_PORT


@dataclass(frozen=True, eq=False)
class StationConfig:
    """A whole judge station. Relative paths are resolved against the config file's folder."""

    name: str
    cameras: tuple[CameraConfig, ...]
    evidence_dir: Path
    puzzle: str = "333"
    scheme: str = "builtin:333"  # a scheme file path, or builtin:<puzzle>
    min_free_space_mb: int = DEFAULT_FREE_SPACE_MB
    trigger: TriggerConfig = field(default_factory=TriggerConfig)
    web: WebConfig = field(default_factory=WebConfig)

    def camera(self, name: str) -> CameraConfig:
        """The camera called `name` (KeyError if none)."""
        for camera in self.cameras:
            if camera.name == name:
                return camera
        raise KeyError(name)


# ----------------------------------------------------------------------------------------
# Reading
# ----------------------------------------------------------------------------------------


class _Problems:
    """Collects every problem in a file instead of stopping at the first."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, message: str) -> None:
        self.items.append(message)

    def unknown_keys(
        self, table: Mapping[str, Any], allowed: set[str] | frozenset[str], where: str
    ) -> None:
        for key in sorted(set(table) - set(allowed)):
            self.add(f"unknown key {key!r} in {where}")

    def text(
        self, table: Mapping[str, Any], key: str, where: str, default: str | None = None
    ) -> str | None:
        value = table.get(key, default)
        if value is None:
            self.add(f"{where} needs {key!r}")
            return None
        if not isinstance(value, str) or not value.strip():
            self.add(f"{where} {key!r} must be non-empty text, got {value!r}")
            return None
        return value

    def integer(
        self,
        table: Mapping[str, Any],
        key: str,
        where: str,
        low: int,
        high: int,
        default: int | None = None,
    ) -> int | None:
        value = table.get(key, default)
        if value is None:
            return None
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
            self.add(f"{where} {key!r} must be a whole number from {low} to {high}, got {value!r}")
            return None
        return value

    def number(
        self, table: Mapping[str, Any], key: str, where: str, low: float, high: float
    ) -> float | None:
        value = table.get(key)
        if value is None:
            return None
        if not _is_number(value) or not low <= value <= high:
            self.add(f"{where} {key!r} must be a number from {low:g} to {high:g}, got {value!r}")
            return None
        return float(value)

    def size(self, table: Mapping[str, Any], key: str, where: str) -> tuple[int, int] | None:
        value = table.get(key)
        if value is None:
            return None
        if not (
            isinstance(value, list)
            and len(value) == 2
            and all(
                isinstance(v, int) and not isinstance(v, bool) and 0 < v <= 16384 for v in value
            )
        ):
            self.add(f"{where} {key!r} must be [width, height] in pixels, got {value!r}")
            return None
        return int(value[0]), int(value[1])


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def load_station_config(path: str | Path) -> StationConfig:
    """Read and validate a station TOML file; StationConfigError lists every problem.

    Only the file's own content is checked here; `check_station` (calibration.checks) also
    opens the files it names.
    """
    file = Path(path)
    try:
        document = tomllib.loads(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise StationConfigError(file, ["no such file"]) from None
    except (OSError, UnicodeDecodeError) as error:
        raise StationConfigError(file, [f"cannot read: {error}"]) from None
    except tomllib.TOMLDecodeError as error:
        raise StationConfigError(file, [f"not valid TOML: {error}"]) from None
    return station_config_from_dict(document, base_dir=file.parent, path=file)


def station_config_from_dict(
    document: Mapping[str, Any], *, base_dir: Path = Path("."), path: Path | None = None
) -> StationConfig:
    """A StationConfig from parsed TOML (relative paths resolved against `base_dir`)."""
    problems = _Problems()
    problems.unknown_keys(document, {"station", "trigger", "web", "cameras"}, "the top level")

    station = _table(document, "station", problems, required=True)
    problems.unknown_keys(
        station, {"name", "puzzle", "scheme", "evidence_dir", "min_free_space_mb"}, "[station]"
    )
    name = problems.text(station, "name", "[station]")
    puzzle = problems.text(station, "puzzle", "[station]", default="333")
    if puzzle is not None and puzzle not in PUZZLES:
        problems.add(f"[station] puzzle {puzzle!r} is unknown (known: {', '.join(PUZZLES)})")
    scheme = problems.text(station, "scheme", "[station]", default=f"builtin:{puzzle or '333'}")
    if scheme is not None and not scheme.startswith("builtin:"):
        scheme = str(_resolve(base_dir, scheme))
    evidence = problems.text(station, "evidence_dir", "[station]")
    free_space = problems.integer(
        station, "min_free_space_mb", "[station]", 0, 10_000_000, default=DEFAULT_FREE_SPACE_MB
    )

    trigger = _read_trigger(_table(document, "trigger", problems), problems)
    web_table = _table(document, "web", problems)
    problems.unknown_keys(web_table, {"host", "port"}, "[web]")
    web = WebConfig(
        problems.text(web_table, "host", "[web]", default=DEFAULT_WEB_HOST) or DEFAULT_WEB_HOST,
        problems.integer(web_table, "port", "[web]", 1, 65535, default=DEFAULT_WEB_PORT)
        or DEFAULT_WEB_PORT,
    )

    raw_cameras = document.get("cameras", [])
    cameras: list[CameraConfig] = []
    if not isinstance(raw_cameras, list) or not all(isinstance(c, dict) for c in raw_cameras):
        problems.add("cameras must be [[cameras]] tables")
    elif not raw_cameras:
        problems.add("no [[cameras]]: a station needs at least one camera")
    else:
        for number, table in enumerate(raw_cameras, start=1):
            camera = _read_camera(table, number, base_dir, problems)
            if camera is not None:
                cameras.append(camera)
        names = [camera.name for camera in cameras]
        for duplicate in sorted({n for n in names if names.count(n) > 1}):
            problems.add(f"two cameras are called {duplicate!r}")

    if problems.items:
        raise StationConfigError(path, problems.items)
    assert name is not None and puzzle is not None and scheme is not None and evidence is not None
    return StationConfig(
        name=name,
        cameras=tuple(cameras),
        evidence_dir=_resolve(base_dir, evidence),
        puzzle=puzzle,
        scheme=scheme,
        min_free_space_mb=free_space if free_space is not None else DEFAULT_FREE_SPACE_MB,
        trigger=trigger,
        web=web,
    )


def _table(
    document: Mapping[str, Any], key: str, problems: _Problems, *, required: bool = False
) -> dict[str, Any]:
    value = document.get(key)
    if value is None:
        if required:
            problems.add(f"missing [{key}] section")
        return {}
    if not isinstance(value, dict):
        problems.add(f"{key} must be a [{key}] section")
        return {}
    return value


def _resolve(base_dir: Path, text: str) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else base_dir / path


def _read_trigger(table: Mapping[str, Any], problems: _Problems) -> TriggerConfig:
    kind = table.get("kind", "keyboard")
    if kind not in TRIGGER_KINDS:
        problems.add(f"[trigger] kind {kind!r} is unknown (known: {', '.join(TRIGGER_KINDS)})")
        return TriggerConfig()
    allowed = TRIGGER_KEYS[kind] | {"kind"}
    for key in sorted(set(table) - allowed):
        owners = [k for k, keys in TRIGGER_KEYS.items() if key in keys]
        if owners:
            problems.add(f"[trigger] {key!r} is for kind {owners[0]!r}, not {kind!r}")
        else:
            problems.add(f"unknown key {key!r} in [trigger]")
    gpio_pin = problems.integer(table, "gpio_pin", "[trigger]", 0, 27)
    if kind == "gpio" and "gpio_pin" not in table:
        problems.add("[trigger] kind 'gpio' needs gpio_pin (BCM number)")
    serial_port = (
        problems.text(table, "serial_port", "[trigger]") if "serial_port" in table else None
    )
    if kind == "stackmat-serial" and "serial_port" not in table:
        problems.add("[trigger] kind 'stackmat-serial' needs serial_port (e.g. /dev/ttyUSB0)")
    active_low = table.get("active_low")
    if active_low is not None and not isinstance(active_low, bool):
        problems.add(f"[trigger] 'active_low' must be true or false, got {active_low!r}")
        active_low = None
    return TriggerConfig(
        kind=cast(TriggerKind, kind),
        key=problems.text(table, "key", "[trigger]") if "key" in table else None,
        gpio_pin=gpio_pin,
        active_low=active_low,
        serial_port=serial_port,
        audio_device=problems.text(table, "audio_device", "[trigger]")
        if "audio_device" in table
        else None,
    )


_CAMERA_KEYS = {
    "name",
    "backend",
    "source",
    "resolution",
    "analysis_resolution",
    "intrinsics",
    "pose",
    "controls",
}


def _read_camera(
    table: Mapping[str, Any], number: int, base_dir: Path, problems: _Problems
) -> CameraConfig | None:
    label = table.get("name")
    where = f"[[cameras]] #{number}" + (f" ({label})" if isinstance(label, str) else "")
    problems.unknown_keys(table, _CAMERA_KEYS, where)
    name = problems.text(table, "name", where)
    backend = table.get("backend")
    if backend not in BACKENDS:
        problems.add(f"{where} backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    source = table.get("source", "0")
    if isinstance(source, int) and not isinstance(source, bool):
        source = str(source)
    if not isinstance(source, str) or not source:
        problems.add(f"{where} source must be text (device number, URL or path), got {source!r}")
    if backend == "replay" and isinstance(source, str):
        source = str(_resolve(base_dir, source))
    resolution = problems.size(table, "resolution", where)
    if resolution is None and "resolution" not in table:
        problems.add(f"{where} needs resolution = [width, height]")
    analysis = problems.size(table, "analysis_resolution", where) or resolution
    if resolution and analysis and analysis != resolution:
        if analysis[0] > resolution[0] or analysis[1] > resolution[1]:
            problems.add(
                f"{where} analysis_resolution {list(analysis)} "
                f"exceeds resolution {list(resolution)}"
            )
        elif (
            abs(analysis[0] * resolution[1] - analysis[1] * resolution[0])
            > 0.01 * resolution[0] * analysis[1]
        ):
            problems.add(
                f"{where} analysis_resolution {list(analysis)} has another aspect ratio than "
                f"resolution {list(resolution)}"
            )
    intrinsics_text = problems.text(table, "intrinsics", where) if "intrinsics" in table else None
    pose = _read_pose(table.get("pose"), where, problems)
    controls = _read_controls(table.get("controls", {}), where, problems)
    if name is None or backend not in BACKENDS or resolution is None or analysis is None:
        return None
    if not isinstance(source, str):
        return None
    return CameraConfig(
        name=name,
        backend=cast(Backend, backend),
        source=source,
        resolution=resolution,
        analysis_resolution=analysis,
        intrinsics=_resolve(base_dir, intrinsics_text) if intrinsics_text else None,
        pose=pose,
        controls=controls,
    )


def _read_pose(value: Any, where: str, problems: _Problems) -> NDArray[np.float64] | None:
    if value is None:
        return None
    if not (
        isinstance(value, list)
        and len(value) == 4
        and all(
            isinstance(row, list) and len(row) == 4 and all(_is_number(v) for v in row)
            for row in value
        )
    ):
        problems.add(f"{where} pose must be a 4x4 matrix of numbers (mat_from_camera, mm)")
        return None
    pose = np.array(value, dtype=np.float64)
    rotation = pose[:3, :3]
    if (
        np.max(np.abs(rotation.T @ rotation - np.eye(3))) > POSE_TOLERANCE
        or abs(np.linalg.det(rotation) - 1.0) > POSE_TOLERANCE
        or np.max(np.abs(pose[3] - [0, 0, 0, 1])) > POSE_TOLERANCE
    ):
        problems.add(
            f"{where} pose is not a rigid transform "
            "(rotation must be orthonormal, last row 0 0 0 1)"
        )
        return None
    return pose


def _read_controls(value: Any, where: str, problems: _Problems) -> CameraControls:
    if not isinstance(value, dict):
        problems.add(f"{where} controls must be a [cameras.controls] table")
        return CameraControls()
    where = f"{where} controls"
    problems.unknown_keys(value, {"exposure_us", "analogue_gain", "colour_gains"}, where)
    gains = value.get("colour_gains")
    colour_gains: tuple[float, float] | None = None
    if gains is not None:
        if (
            isinstance(gains, list)
            and len(gains) == 2
            and all(_is_number(g) and 0 < g <= 32 for g in gains)
        ):
            colour_gains = (float(gains[0]), float(gains[1]))
        else:
            problems.add(
                f"{where} 'colour_gains' must be [red, blue] gains in (0, 32], got {gains!r}"
            )
    return CameraControls(
        exposure_us=problems.integer(value, "exposure_us", where, 1, 10_000_000),
        analogue_gain=problems.number(value, "analogue_gain", where, 1.0, 64.0),
        colour_gains=colour_gains,
    )


# ----------------------------------------------------------------------------------------
# Writing
# ----------------------------------------------------------------------------------------


def station_config_to_dict(
    config: StationConfig, *, base_dir: Path | None = None
) -> dict[str, Any]:
    """Plain TOML-ready data; paths inside `base_dir` are written relative to it."""

    def path_text(path: Path) -> str:
        if base_dir is not None:
            relative = os.path.relpath(path, base_dir)
            if not relative.startswith(".."):
                return relative
        return str(path)

    station: dict[str, Any] = {
        "name": config.name,
        "puzzle": config.puzzle,
        "scheme": config.scheme
        if config.scheme.startswith("builtin:")
        else path_text(Path(config.scheme)),
        "evidence_dir": path_text(config.evidence_dir),
        "min_free_space_mb": config.min_free_space_mb,
    }
    trigger = {
        key: value
        for key, value in {
            "kind": config.trigger.kind,
            "key": config.trigger.key,
            "gpio_pin": config.trigger.gpio_pin,
            "active_low": config.trigger.active_low,
            "serial_port": config.trigger.serial_port,
            "audio_device": config.trigger.audio_device,
        }.items()
        if value is not None
    }
    cameras = []
    for camera in config.cameras:
        entry: dict[str, Any] = {
            "name": camera.name,
            "backend": camera.backend,
            "source": path_text(Path(camera.source))
            if camera.backend == "replay"
            else camera.source,
            "resolution": list(camera.resolution),
            "analysis_resolution": list(camera.analysis_resolution),
        }
        if camera.intrinsics is not None:
            entry["intrinsics"] = path_text(camera.intrinsics)
        if camera.pose is not None:
            entry["pose"] = [[round(float(v), 6) for v in row] for row in camera.pose]
        controls = {
            key: value
            for key, value in {
                "exposure_us": camera.controls.exposure_us,
                "analogue_gain": camera.controls.analogue_gain,
                "colour_gains": list(camera.controls.colour_gains)
                if camera.controls.colour_gains
                else None,
            }.items()
            if value is not None
        }
        if controls:
            entry["controls"] = controls
        cameras.append(entry)
    return {
        "station": station,
        "trigger": trigger,
        "web": {"host": config.web.host, "port": config.web.port},
        "cameras": cameras,
    }


def save_station_config(config: StationConfig, path: str | Path) -> None:
    """Write `config` as TOML (comments in an edited file are not kept)."""
    file = Path(path)
    document = station_config_to_dict(config, base_dir=file.resolve().parent)
    temporary = file.with_name(file.name + ".tmp")
    temporary.write_bytes(tomli_w.dumps(document).encode("utf-8"))
    os.replace(temporary, file)
