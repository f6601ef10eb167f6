"""`judgecam station`: run the judge station live, on a recorded session, or on the demo.

    judgecam station --config STATION.toml            live: cameras, trigger, page, evidence
    judgecam station --replay SESSION [--headless]    the same loop on a recorded session
    judgecam station --demo --headless --evidence DIR the bundled demo session, start to end

Replayed sessions are driven by their recorded triggers and judge decisions; with the page
(not --headless) they play at their recorded speed so the page can be watched.
"""

from __future__ import annotations

import argparse
import logging
import secrets
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from judgecam.device.review_reasons import split_reasons

logger = logging.getLogger(__name__)

DEMO_SESSION = Path(__file__).resolve().parent / "demo_session"


def register(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = subparsers.add_parser(
        "station",
        help="run the judge station (live, replayed, or the demo)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--config", type=Path, help="station config (TOML) for a live station")
    mode.add_argument("--replay", type=Path, metavar="SESSION", help="a recorded session folder")
    mode.add_argument("--demo", action="store_true", help="play the bundled demo session")
    parser.add_argument("--evidence", type=Path, metavar="DIR", help="evidence store folder")
    parser.add_argument("--headless", action="store_true", help="no web page; replay at full speed")
    parser.add_argument("--competition", default=None, help="competition name for the evidence")
    parser.add_argument("--host", default=None, help="web page host (default from config)")
    parser.add_argument("--port", type=int, default=None, help="web page port (default 8080)")
    parser.add_argument("--min-free-mb", type=int, default=None, help="evidence free-space floor")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from judgecam.cli import UsageError
    from judgecam.device.session import is_session

    if args.config is not None:
        return _run_live(args)
    session = DEMO_SESSION if args.demo else args.replay
    if not is_session(session):
        what = "the bundled demo session is missing" if args.demo else f"{session} is not a session"
        raise UsageError(f"{what} (a folder with session.json)")
    return _run_replay(args, session)


# ------------------------------------------------------------------------------ helpers
def _open_store(folder: Path, min_free_mb: int) -> Any:
    from judgecam.cli import UsageError
    from judgecam.device.evidence import EvidenceError, EvidenceStore

    try:
        return EvidenceStore(folder, min_free_bytes=min_free_mb * 2**20)
    except (EvidenceError, OSError) as error:
        raise UsageError(f"cannot open the evidence store {folder}: {error}") from None


def _serve_page(store: Any, station: Any, inbox: Any, host: str, port: int) -> Any:
    """Start the web app (review + station page) in a thread; returns the server."""
    import importlib

    from judgecam.device.station_page import station_blueprint
    from judgecam.device.webapp import create_app, is_loopback

    secret = secrets.token_urlsafe(24)
    app = create_app(
        store,
        password=secret,
        link_secret=secret,
        blueprints=[station_blueprint(station, inbox)],
    )
    waitress = importlib.import_module("waitress")
    server = waitress.create_server(app, host=host, port=port, threads=4)
    bound = getattr(server, "effective_port", port)
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    print(
        f"station page: http://{shown}:{bound}/station/  (log in first: "
        f"http://{shown}:{bound}/login?key={secret})"
    )
    if not is_loopback(host):
        print("the page is reachable from the network: keep the login link private")
    threading.Thread(target=server.run, name="station-web", daemon=True).start()
    return server


def _keep_serving(station: Any, inbox: Any) -> None:
    """After a replay, keep the page up (late clicks are still recorded) until Ctrl-C."""
    print("replay finished: the page stays up until Ctrl-C")
    try:
        while True:
            for decision in inbox.poll(0):
                station.on_decision(decision)
            time.sleep(0.2)
    except KeyboardInterrupt:
        pass


def _summary(station: Any, truth: dict[Any, str] | None = None) -> int:
    """Print one line per attempt; 0 if every attempt was judged and saved, else 1.

    `truth` (recorded sessions built from renders) adds the known answer to each line."""
    failures = 0
    for outcome in station.outcomes:
        meta = outcome.meta
        known = (truth or {}).get(meta)
        judged = outcome.final_verdict or "no decision"
        saved = outcome.attempt_id or "NOT SAVED"
        latency = (
            ""
            if outcome.trigger_to_verdict_ns is None
            else f", verdict {outcome.trigger_to_verdict_ns / 1e9:.2f} s after the stop"
        )
        print(
            f"{meta.competitor_id} {meta.event} r{meta.round} a{meta.attempt}: camera "
            f"{outcome.camera_verdict}, judge {judged}{latency}; evidence {saved}"
            + ("" if known is None else f" (ground truth: {known})")
        )
        if outcome.camera_verdict == "review":
            # What made it a review, then the notes (all "why" if the judge did not say).
            why = split_reasons(outcome.reasons, outcome.review_because)
            for reason in why.because:
                print(f"    why review: {reason}")
            for reason in why.notes:
                print(f"    {'note' if why.marked else 'why review'}: {reason}")
        for incident in outcome.incidents:
            print(f"    {incident}")
        failures += outcome.attempt_id is None or outcome.camera_verdict is None
    for message in station.messages.values():
        print(f"! {message}")
    return 0 if failures == 0 else 1


# ------------------------------------------------------------------------------- replay
def _run_replay(args: argparse.Namespace, session_path: Path) -> int:
    from judgecam.cli import UsageError
    from judgecam.device.session import SessionError, load_session
    from judgecam.device.station import AttemptMeta, Station, StationSettings
    from judgecam.device.station_judge import judge_for_session
    from judgecam.device.station_loop import DecisionInbox, replay_inputs, run_loop

    try:
        session = load_session(session_path)
    except SessionError as error:
        raise UsageError(str(error)) from None
    judge = judge_for_session(session)
    evidence_dir = args.evidence or Path(tempfile.mkdtemp(prefix="judgecam-evidence-"))
    store = _open_store(evidence_dir, args.min_free_mb or 64)
    settings = StationSettings(
        competition=args.competition or session.competition or "Replay",
        station=session.station or "replay",
    )
    station = Station(judge, store, settings, cameras=sorted(session.cameras))
    feeds, triggers, decisions = replay_inputs(session_path, station)
    server = None
    if not args.headless:
        inbox = DecisionInbox()
        decisions = [*decisions, inbox]
        server = _serve_page(store, station, inbox, args.host or "127.0.0.1", args.port or 8080)
    started = time.perf_counter()
    try:
        run_loop(station, feeds, triggers, decisions, realtime=not args.headless)
        if server is not None:
            _keep_serving(station, inbox)
    finally:
        if server is not None:
            server.close()
        store.close()
    print(
        f"replayed {session_path} in {time.perf_counter() - started:.1f} s; "
        f"evidence in {evidence_dir}"
    )
    truth = {
        AttemptMeta(a.competitor_id, a.event, a.round, a.attempt): a.expected_verdict
        for a in session.attempts
        if a.expected_verdict is not None
    }
    return _summary(station, truth)


# --------------------------------------------------------------------------------- live
def _run_live(args: argparse.Namespace) -> int:
    from judgecam.calibration.camera import CalibrationError
    from judgecam.calibration.station import StationConfigError, load_station_config
    from judgecam.cli import UsageError
    from judgecam.device.sources import open_source
    from judgecam.device.station import Station, StationSettings
    from judgecam.device.station_judge import (
        VisionJudge,
        calibrations_from_config,
        poses_from_config,
    )
    from judgecam.device.station_loop import CameraFeed, DecisionInbox, run_loop
    from judgecam.device.triggers import build_trigger

    try:
        config = load_station_config(args.config)
    except (StationConfigError, OSError) as error:
        raise UsageError(str(error)) from None
    try:
        judge = VisionJudge(calibrations_from_config(config), poses=poses_from_config(config))
    except (CalibrationError, OSError) as error:
        raise UsageError(f"{args.config}: {error}") from None
    try:
        sources = [open_source(c.backend, **_source_options(c)) for c in config.cameras]
        trigger = build_trigger(config.trigger.kind, **_trigger_options(config.trigger))
    except (ValueError, TypeError, OSError, ImportError) as error:
        raise UsageError(f"{args.config}: {error}") from None
    store = _open_store(
        args.evidence or config.evidence_dir, args.min_free_mb or config.min_free_space_mb
    )
    settings = StationSettings(
        competition=args.competition or "Unnamed competition",
        station=config.name,
        judge_in_background=True,  # cameras keep being read (and watched) while vision works
    )
    station = Station(judge, store, settings, cameras=[c.name for c in config.cameras])
    inbox = DecisionInbox()
    server = None
    if not args.headless:
        server = _serve_page(
            store, station, inbox, args.host or config.web.host, args.port or config.web.port
        )
    feeds = [CameraFeed(source) for source in sources]
    stop = threading.Event()
    try:
        run_loop(station, feeds, [trigger], [inbox], clock=time.monotonic_ns, stop=stop)
    except KeyboardInterrupt:
        stop.set()
    finally:
        trigger.close()
        if server is not None:
            server.close()
        store.close()
    return _summary(station)


def _source_options(camera: Any) -> dict[str, Any]:
    """Backend options from a calibration CameraConfig."""
    if camera.backend == "picamera2":
        controls = {}
        if camera.controls.exposure_us is not None:
            controls["ExposureTime"] = camera.controls.exposure_us
        if camera.controls.analogue_gain is not None:
            controls["AnalogueGain"] = camera.controls.analogue_gain
        if camera.controls.colour_gains is not None:
            controls["ColourGains"] = tuple(camera.controls.colour_gains)
        return {
            "camera_num": int(camera.source),
            "camera": camera.name,
            "resolution": camera.resolution,
            "analysis_resolution": camera.analysis_resolution,
            "controls": controls,
        }
    if camera.backend == "opencv":
        device = int(camera.source) if str(camera.source).isdigit() else camera.source
        return {
            "device": device,
            "camera": camera.name,
            "resolution": camera.resolution,
            "analysis_width": camera.analysis_resolution[0],
        }
    return {
        "path": camera.source,
        "camera": camera.name,
        "analysis_width": camera.analysis_resolution[0],
    }


def _trigger_options(trigger: Any) -> dict[str, Any]:
    return {
        "pin": trigger.gpio_pin,
        "active_low": trigger.active_low,
        "port": trigger.serial_port,
        "device": trigger.audio_device or "default",
    }
