"""The review page in a real headless Chromium (Debian's), driven by Playwright.

Screenshots go to tmp_path, or to $JUDGECAM_SCREENSHOTS when set (to look at them).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from judgecam.device.evidence import EvidenceStore
from judgecam.device.evidence_demo import DemoShape, fill_demo_store
from judgecam.device.evidence_verify import verify_store
from judgecam.device.webapp import create_app

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHAPE = DemoShape(width=480, height=270, frames_per_camera=12, verdict_index=8)
SECRET = "browser-test-link-secret"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, EvidenceStore]]:
    """The app over a small demo store, served by waitress on 127.0.0.1, a free port."""
    import waitress

    store = EvidenceStore(tmp_path / "store", min_free_bytes=0)
    fill_demo_store(store, ["2019KIMA01", "2020LEEB01", "2021CHOI01"], shape=SHAPE, attempts=1)
    app = create_app(store, password="a long test password", link_secret=SECRET)
    server: Any = waitress.create_server(
        app, host="127.0.0.1", port=0, threads=2, asyncore_use_poll=True
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.effective_port}", store
    finally:
        server.close()
        thread.join(timeout=5)
        store.close()


@pytest.fixture
def browser() -> Iterator[Any]:
    playwright_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed")
    with playwright_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("JUDGECAM_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_find_step_and_decide_on_a_tablet(
    served: tuple[str, EvidenceStore], browser: Any, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    base, store = served
    folder = shots(tmp_path)
    context = browser.new_context(viewport={"width": 1024, "height": 768}, has_touch=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    page.goto(f"{base}/")  # no session: the login page
    assert page.locator("input#password").is_visible()
    page.goto(f"{base}/login?key={SECRET}")
    expect(page.locator("table#attempts tbody tr")).to_have_count(3)
    page.screenshot(path=str(folder / "review-index.png"), full_page=True)

    page.fill("#f-competitor", "2020LEEB01")
    page.select_option("#f-round", "1")
    with page.expect_navigation():
        page.click("text=Search")
    rows = page.locator("table#attempts tbody tr")
    expect(rows).to_have_count(1)
    assert rows.locator("td:first-child").all_inner_texts() == ["2020LEEB01"]

    with page.expect_navigation():
        rows.first.locator("a.rowlink").click()
    label = page.locator("#frame-label")
    expect(label).to_contain_text("frame 9 / 12")
    assert label.inner_text().startswith("cam0 · frame 9 / 12 · 0 ms")  # opens at the verdict
    assert page.locator("#frame-badge").is_visible()
    assert page.locator("#overlay").is_visible()
    verdict_src = page.get_attribute("#frame", "src")
    assert verdict_src is not None and verdict_src.endswith(".png")  # lossless verdict frame

    page.click("#next")
    assert label.inner_text().startswith("cam0 · frame 10 / 12 · +33 ms")
    assert (page.get_attribute("#frame", "src") or "").endswith(".jpg")
    assert not page.locator("#frame-badge").is_visible()
    page.click("#prev")
    page.click("#prev")
    assert label.inner_text().startswith("cam0 · frame 8 / 12 · -33 ms")
    page.keyboard.press("ArrowLeft")
    assert "frame 7 / 12" in label.inner_text()
    assert page.locator("#overlay").is_visible()
    page.uncheck("#overlay-toggle")
    assert not page.locator("#overlay").is_visible()
    page.check("#overlay-toggle")
    page.click("#first")
    assert "frame 1 / 12" in label.inner_text()
    assert not page.locator("#overlay").is_visible()  # no overlay drawn that early
    assert page.locator("#overlay-none").is_visible()
    page.click("button.camera[data-camera=cam1]")
    assert label.inner_text().startswith("cam1 · frame 9 / 12")
    assert page.get_attribute("button.camera[data-camera=cam1]", "aria-pressed") == "true"
    # The other camera's frame decodes after the click: polled, as the station page's live
    # view is (the page's CSP forbids the eval `wait_for_function` would poll with).
    frame = page.locator("#frame")
    deadline = time.monotonic() + 10.0
    while (loaded := frame.evaluate("img => img.naturalWidth")) != SHAPE.width:
        assert time.monotonic() < deadline, f"cam1's frame never decoded ({loaded} px wide)"
        time.sleep(0.05)
    assert loaded == SHAPE.width
    page.screenshot(path=str(folder / "review-attempt.png"), full_page=True)

    page.check("input[name=decision][value='+2']")
    page.fill("#by", "Chief Judge Park")
    page.fill("#note", "Frame 10 shows the hand on the cube after the stop.")
    with page.expect_navigation():
        page.click("text=Record decision")
    expect(page.locator(".flash.ok")).to_contain_text("recorded")
    assert "+2" in page.locator("#current-decision").inner_text()
    assert "Chief Judge Park" in page.locator("#decision-history").inner_text()
    page.screenshot(path=str(folder / "review-decided.png"), full_page=True)

    portrait = browser.new_context(viewport={"width": 768, "height": 1024}, has_touch=True)
    tablet = portrait.new_page()
    tablet.goto(f"{base}/login?key={SECRET}")
    with tablet.expect_navigation():
        tablet.click("table#attempts a.rowlink >> nth=0")
    expect(tablet.locator("#frame-label")).to_contain_text("frame 9 / 12")
    tablet.screenshot(path=str(folder / "review-portrait.png"), full_page=True)
    portrait.close()
    context.close()

    assert errors == []
    attempt_id = page.url.split("/attempt/")[1].split("#")[0]
    [decision] = store.decisions(attempt_id)
    assert decision.content["decision"] == "+2"
    assert decision.content["by"] == "Chief Judge Park"
    assert verify_store(store.root).ok
