"""The live station page on the evidence app: routes, CSRF, and a real headless Chromium."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest

from judgecam.device.evidence import EvidenceStore
from judgecam.device.session_synth import CodedJudge, coded_view, noisy
from judgecam.device.sources import Frame
from judgecam.device.station import AttemptMeta, JudgeDecision, Station, StationSettings
from judgecam.device.station_loop import DecisionInbox
from judgecam.device.station_page import station_blueprint
from judgecam.device.triggers import TriggerEvent
from judgecam.device.webapp import create_app

MS = 1_000_000
SECRET = "s3cret-link-key-for-tests"


def station_with_verdict(store: Any, verdict: str = "+2") -> Station:
    """A station whose puzzle is at rest and judged, waiting for the judge."""
    station = Station(CodedJudge(), store, StationSettings(still_frames=2), cameras=["cam0"])
    station.queue_attempt(AttemptMeta("2026PAGE01", "333", 1, 2))
    rng = np.random.default_rng(0)
    station.on_frame(Frame("cam0", 0, 0, noisy(coded_view("DNF"), 2.0, rng)))
    station.on_trigger(TriggerEvent(50 * MS, "stackmat", 10_420))
    for i in range(1, 5):
        station.on_frame(Frame("cam0", i, i * 100 * MS, noisy(coded_view(verdict), 2.0, rng)))
    assert station.status()["verdict"] == verdict
    return station


@pytest.fixture
def store(tmp_path: Path) -> Iterator[EvidenceStore]:
    with EvidenceStore(tmp_path / "evidence", min_free_bytes=0) as opened:
        yield opened


def logged_in_client(store: EvidenceStore, station: Station, inbox: DecisionInbox) -> Any:
    app = create_app(
        store, password=SECRET, link_secret=SECRET, blueprints=[station_blueprint(station, inbox)]
    )
    app.config["TESTING"] = True
    client = app.test_client()
    assert client.get(f"/login?key={SECRET}").status_code == 302
    return client


def test_page_needs_a_login(store: EvidenceStore) -> None:
    station, inbox = station_with_verdict(store), DecisionInbox()
    app = create_app(store, password=SECRET, blueprints=[station_blueprint(station, inbox)])
    response = app.test_client().get("/station/status.json")
    assert response.status_code == 302 and "/login" in response.headers["Location"]


def test_status_view_and_decision_with_csrf(store: EvidenceStore) -> None:
    station, inbox = station_with_verdict(store), DecisionInbox()
    client = logged_in_client(store, station, inbox)
    page = client.get("/station/")
    assert page.status_code == 200
    csrf = re.search(r'name="csrf-token" content="([^"]+)"', page.get_data(as_text=True))
    assert csrf is not None
    for asset in ("/station/page.js", "/station/page.css"):
        assert client.get(asset).status_code == 200
    status = client.get("/station/status.json").get_json()
    assert (status["state"], status["verdict"], status["timer_ms"]) == ("verdict", "+2", 10_420)
    jpeg = client.get("/station/view/cam0.jpg")
    assert jpeg.mimetype == "image/jpeg"
    image = cv2.imdecode(np.frombuffer(jpeg.data, np.uint8), cv2.IMREAD_COLOR)
    assert image.shape == (240, 320, 3)
    assert client.get("/station/view/nope.jpg").status_code == 404
    stream = client.get("/station/stream/cam0.mjpg?frames=2")
    assert stream.data.count(b"--judgecamframe") == 2
    # Writes need the CSRF token.
    body = {"decision": "override", "verdict": "DNF"}
    assert client.post("/station/decision", json=body).status_code == 403
    response = client.post("/station/decision", json=body, headers={"X-CSRF-Token": csrf[1]})
    assert response.status_code == 202
    (decision,) = inbox.poll(0)
    assert (decision.decision, decision.verdict) == ("override", "DNF")
    assert decision.attempt == AttemptMeta("2026PAGE01", "333", 1, 2)
    bad = client.post(
        "/station/decision",
        json={"decision": "override", "verdict": "+3"},
        headers={"X-CSRF-Token": csrf[1]},
    )
    assert bad.status_code == 400
    queued = client.post(
        "/station/attempt",
        headers={"X-CSRF-Token": csrf[1]},
        json={"competitor_id": "2026NEXT01", "event": "222", "round": "1", "attempt": "3"},
    )
    assert queued.status_code == 202
    assert station.status()["next_attempt"]["competitor_id"] == "2026NEXT01"
    # The camera goes: the page says so, and the attempt on screen is kept (committed now).
    station.on_camera_lost("cam0", "USB disconnect")
    status = client.get("/station/status.json").get_json()
    assert status["messages"] == {"cam0": "camera cam0 lost: USB disconnect — reconnecting"}
    (kept,) = station.outcomes
    assert kept.attempt_id is not None and kept.camera_verdict == "+2"
    assert kept.incidents == ("camera cam0 lost during the attempt: USB disconnect",)


@pytest.mark.browser
@pytest.mark.slow
def test_judge_overrides_in_a_real_browser(store: EvidenceStore) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian's chromium is not installed (.ci/run installs it)")
    import waitress

    station, inbox = station_with_verdict(store, "+2"), DecisionInbox()
    app = create_app(
        store, password=SECRET, link_secret=SECRET, blueprints=[station_blueprint(station, inbox)]
    )
    server = waitress.create_server(
        app, host="127.0.0.1", port=0, threads=2, asyncore_use_poll=True
    )
    port = server.effective_port
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()

    # The loop's side: apply decisions the page posts, as run_loop does.
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            for decision in inbox.poll(0):
                station.on_decision(decision)
            stop.wait(0.05)

    threading.Thread(target=loop, daemon=True).start()
    try:
        with playwright.sync_playwright() as p:
            browser = p.chromium.launch(
                executable_path="/usr/bin/chromium",
                args=[
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--disable-component-update",
                    "--disable-sync",
                ],
            )
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            failed: list[str] = []
            page.on("response", lambda r: failed.append(r.url) if r.status >= 400 else None)
            page.goto(f"http://127.0.0.1:{port}/login?key={SECRET}")
            page.goto(f"http://127.0.0.1:{port}/station/")
            verdict = page.locator("#verdict")
            verdict.filter(has_text="+2").wait_for(timeout=10_000)
            assert "2026PAGE01" in page.locator("#attempt").inner_text()
            assert page.locator("#timer").inner_text() == "10.420 s"
            # The live view is shown (an image that decoded). Polled from here: the page's
            # Content-Security-Policy (script-src 'self') forbids the eval that
            # `wait_for_function` polls with once the first check fails.
            image = page.locator("#views img").first
            image.wait_for(timeout=10_000)
            deadline = time.monotonic() + 10.0
            while image.evaluate("img => img.naturalWidth") != 320:
                assert time.monotonic() < deadline, "the live view never decoded"
                time.sleep(0.05)
            page.locator("button.override[data-verdict='DNF']").click()
            page.locator("#last").filter(has_text="judge DNF").wait_for(timeout=10_000)
            assert page.locator("#verdict").inner_text() == "waiting"
            browser.close()
        assert errors == []
        # Only the browser's own favicon probe may miss.
        assert [url for url in failed if not url.endswith("/favicon.ico")] == []
    finally:
        stop.set()
        server.close()
    (outcome,) = station.outcomes
    assert (outcome.camera_verdict, outcome.final_verdict) == ("+2", "DNF")
    assert outcome.attempt_id is not None
    assert [d.content["decision"] for d in store.decisions(outcome.attempt_id)] == ["override DNF"]
    assert outcome.decision == JudgeDecision(
        "override",
        "judge",
        "DNF",
        "",
        outcome.decision.timestamp_ns if outcome.decision else 0,
        AttemptMeta("2026PAGE01", "333", 1, 2),
    )
