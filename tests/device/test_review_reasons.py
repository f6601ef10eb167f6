"""A review's cause (`review_because`) apart from its notes: in the attempt record, on the review
page and on the station page; records from before the key existed still verify and render."""

from __future__ import annotations

import html
import json
import re
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from flask.testing import FlaskClient

from judgecam.device.evidence import EvidenceStore
from judgecam.device.evidence_chain import make_record
from judgecam.device.evidence_verify import verify_store
from judgecam.device.review_reasons import recorded_reasons, split_reasons
from judgecam.device.sources import Frame
from judgecam.device.station import AttemptMeta, JudgeDecision, Station, StationSettings
from judgecam.device.station_loop import DecisionInbox
from judgecam.device.station_page import station_blueprint
from judgecam.device.station_types import JudgeResult
from judgecam.device.triggers import TriggerEvent
from judgecam.device.webapp import create_app

MS = 1_000_000
SECRET = "review-because-link-secret"
CAUSE = "23 facelet(s) not seen: they could change the result (DNF or solved)"
NOTE = "cam0: 3 facelet(s) sampled on parts placed by the other views' angles"
# Written by the code before `review_because` was recorded (see its .SOURCES.txt).
OLD_STORE = Path(__file__).parent / "data" / "store_before_review_because"


class ReviewJudge:
    """Review (a cause and a note) on a dark puzzle, solved on a bright one."""

    def judge(self, views: Sequence[Frame], event: str = "333") -> JudgeResult:
        image = views[0].image
        if int(image[image.shape[0] // 2, image.shape[1] // 2].sum()) > 300:
            return JudgeResult("solved")
        return JudgeResult("review", (CAUSE, NOTE), review_because=(CAUSE,))


def judged_station(store: EvidenceStore) -> Station:
    """A station showing a review verdict (a cause and a note), the judge not yet asked."""
    station = Station(ReviewJudge(), store, StationSettings(still_frames=2), cameras=["cam0"])
    station.queue_attempt(AttemptMeta("2026WHY01", "333", 1, 1))
    station.on_frame(Frame("cam0", 0, 0, np.full((12, 16, 3), 120, np.uint8)))
    station.on_trigger(TriggerEvent(50 * MS, "stackmat", 10_420))
    for i in range(1, 5):
        station.on_frame(Frame("cam0", i, i * 100 * MS, np.full((12, 16, 3), 40, np.uint8)))
    return station


def client_for(store: EvidenceStore, station: Station | None = None) -> FlaskClient:
    blueprints = [] if station is None else [station_blueprint(station, DecisionInbox())]
    app = create_app(store, password=SECRET, link_secret=SECRET, blueprints=blueprints)
    app.config["TESTING"] = True
    client = app.test_client()
    assert client.get(f"/login?key={SECRET}").status_code == 302
    return client


def listed(page: str, list_id: str) -> list[str] | None:
    """The items of the <ul id=list_id> on a page, unescaped (None: no such list)."""
    match = re.search(rf'<ul[^>]*id="{list_id}"[^>]*>(.*?)</ul>', page, re.S)
    if match is None:
        return None
    return [html.unescape(item) for item in re.findall(r"<li>(.*?)</li>", match[1], re.S)]


def review_page(client: FlaskClient, attempt_id: str) -> str:
    response = client.get(f"/attempt/{attempt_id}")
    assert response.status_code == 200
    return response.get_data(as_text=True)


# ------------------------------------------------------------------------------ the split
def test_split_puts_the_cause_first_and_keeps_every_reason() -> None:
    split = split_reasons(["a note", "the cause", "another note"], ["the cause"])
    assert (split.because, split.notes, split.marked) == (
        ("the cause",),
        ("a note", "another note"),
        True,
    )
    unmarked = split_reasons(["one", "two"])
    assert (unmarked.because, unmarked.notes, unmarked.marked) == ((), ("one", "two"), False)
    # A cause the reasons do not list is still shown, never silently dropped.
    assert split_reasons(["a note"], ["cause"]).to_json() == {
        "review_because": ["cause"],
        "notes": ["a note"],
    }


@pytest.mark.parametrize(
    ("result", "because", "notes"),
    [
        ({"reasons": ["x", "y"]}, (), ("x", "y")),  # a record from before the key
        ({"reasons": ["x", "y"], "review_because": None}, (), ("x", "y")),
        ({"reasons": ["x", "y"], "review_because": []}, (), ("x", "y")),
        ({"reasons": ["x", "y"], "review_because": "y"}, ("y",), ("x",)),  # odd shape: lenient
        ({"reasons": "x"}, (), ("x",)),
        ({}, (), ()),
    ],
)
def test_recorded_reasons_of_any_record_shape(
    result: dict[str, object], because: tuple[str, ...], notes: tuple[str, ...]
) -> None:
    split = recorded_reasons(result)
    assert (split.because, split.notes) == (because, notes)


# ------------------------------------------------------ new records: write, read, show
def test_review_because_is_recorded_and_shown_as_the_cause(tmp_path: Path) -> None:
    with EvidenceStore(tmp_path / "ev", min_free_bytes=0) as store:
        station = judged_station(store)
        client = client_for(store, station)
        status = client.get("/station/status.json").get_json()
        assert (status["verdict"], status["reasons"]) == ("review", [CAUSE, NOTE])
        assert status["review_because"] == [CAUSE]
        station.on_decision(JudgeDecision("confirm", by="judge 4"))
        (outcome,) = station.outcomes
        assert outcome.attempt_id is not None
        assert client.get("/station/status.json").get_json()["review_because"] == []
    # Read back from disk by a fresh store: the record, the verification, the page.
    assert verify_store(tmp_path / "ev").ok
    with EvidenceStore(tmp_path / "ev", min_free_bytes=0) as store:
        record = store.attempt_record(outcome.attempt_id)
        assert record is not None
        result = record.content["result"]
        assert (result["reasons"], result["review_because"]) == ([CAUSE, NOTE], [CAUSE])
        assert result["judge"]["review_because"] == [CAUSE]
        (judged,) = result["judgements"]
        assert (judged["reasons"], judged["review_because"]) == ([CAUSE, NOTE], [CAUSE])
        page = review_page(client_for(store), outcome.attempt_id)
    assert listed(page, "review-because") == [CAUSE]
    assert listed(page, "reason-notes") == [NOTE]
    assert page.index("Why review:") < page.index('id="review-because"')
    assert page.index('id="review-because"') < page.index('id="reason-notes"')
    # "Everything else recorded" leaves out what the lists show; the per-moment split stays.
    details = re.search(r"<pre>(.*?)</pre>", page, re.S)
    assert details is not None
    rest = json.loads(html.unescape(details[1]))
    assert "reasons" not in rest and "review_because" not in rest
    assert rest["judgements"][0]["review_because"] == [CAUSE]


def test_a_solved_attempt_records_an_empty_cause(tmp_path: Path) -> None:
    with EvidenceStore(tmp_path / "ev", min_free_bytes=0) as store:
        station = Station(ReviewJudge(), store, StationSettings(still_frames=2), cameras=["c"])
        station.queue_attempt(AttemptMeta("2026WHY02", "333", 1, 1))
        station.on_trigger(TriggerEvent(50 * MS, "stackmat", 9_000))
        for i in range(1, 5):
            image = np.full((12, 16, 3), 250, np.uint8)
            station.on_frame(Frame("c", i, i * 100 * MS, image))
        station.on_decision(JudgeDecision("confirm"))
        (outcome,) = station.outcomes
        assert outcome.attempt_id is not None
        record = store.attempt_record(outcome.attempt_id)
        assert record is not None
        assert record.content["result"]["verdict"] == "solved"
        assert record.content["result"]["review_because"] == []
        page = review_page(client_for(store), outcome.attempt_id)
        assert "Why review:" not in page and "No reasons recorded." in page


# --------------------------------------------------------- records written before the key
@pytest.fixture
def old_store(tmp_path: Path) -> Path:
    """A copy of the committed old-format store (opening a store adds its index and folders)."""
    copy = tmp_path / "old"
    shutil.copytree(OLD_STORE, copy)
    return copy


def test_old_records_have_no_key_and_still_verify(old_store: Path) -> None:
    lines = (OLD_STORE / "log.jsonl").read_text().splitlines()
    attempts = [json.loads(line)["content"] for line in lines]
    attempts = [c for c in attempts if c["kind"] == "attempt"]
    assert [a["result"]["verdict"] for a in attempts] == ["review", "solved"]
    assert all("review_because" not in json.dumps(a) for a in attempts)
    report = verify_store(old_store)
    assert report.ok, report.lines()
    assert report.files == 10
    with EvidenceStore(old_store, min_free_bytes=0) as store:  # opens, rebuilds its index
        assert store.recovery.clean
        assert [a.verdict for a in store.find()] == ["solved", "review"]
    assert verify_store(old_store).ok
    # Reading never rewrote a byte of the log.
    assert (old_store / "log.jsonl").read_bytes() == (OLD_STORE / "log.jsonl").read_bytes()


def test_old_review_record_renders_its_reasons_as_before(old_store: Path) -> None:
    with EvidenceStore(old_store, min_free_bytes=0) as store:
        (review,) = [a for a in store.find() if a.verdict == "review"]
        page = review_page(client_for(store), review.attempt_id)
    # No cause marked: every reason in the one list, in the recorded order, none labelled.
    assert listed(page, "reasons") == [CAUSE, NOTE]
    assert listed(page, "review-because") is None and listed(page, "reason-notes") is None
    assert "Why review:" not in page


# ------------------------------------------------------------------------------ tampering
def forge(root: Path, seq: int, change: dict[str, object]) -> None:
    """Rewrite record `seq`'s result (re-hashing the record itself, as a forger would)."""
    log = root / "log.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    value = json.loads(lines[seq])
    assert value["seq"] == seq
    value["content"]["result"].update(change)
    lines[seq] = make_record(value["seq"], value["prev"], value["content"]).line()
    log.write_bytes(b"".join(lines))


def test_a_changed_cause_fails_verification(tmp_path: Path) -> None:
    with EvidenceStore(tmp_path / "ev", min_free_bytes=0) as store:
        station = judged_station(store)
        station.on_decision(JudgeDecision("confirm"))
        seq = next(r.seq for r in store.records() if r.kind == "attempt")
    assert verify_store(tmp_path / "ev").ok
    forge(tmp_path / "ev", seq, {"review_because": [NOTE]})
    report = verify_store(tmp_path / "ev")
    assert not report.ok
    assert ("altered-record", f"log.jsonl seq {seq}") in {
        (p.kind, p.subject.split(" (")[0]) for p in report.problems
    }


def test_a_cause_added_to_an_old_record_fails_verification(old_store: Path) -> None:
    with EvidenceStore(old_store, min_free_bytes=0):
        pass  # the index now remembers every record's hash
    forge(old_store, 1, {"review_because": [NOTE]})
    report = verify_store(old_store)
    assert not report.ok
    assert ("altered-record", "log.jsonl seq 1") in {
        (p.kind, p.subject.split(" (")[0]) for p in report.problems
    }


# ------------------------------------------------------------------- in a real browser
@pytest.mark.browser
@pytest.mark.slow
def test_both_pages_label_the_cause_in_chromium(tmp_path: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    import waitress

    if not Path("/usr/bin/chromium").exists():
        pytest.skip("Debian's chromium is not installed")
    with EvidenceStore(tmp_path / "ev", min_free_bytes=0) as store:
        station = judged_station(store)
        app = create_app(
            store,
            password=SECRET,
            link_secret=SECRET,
            blueprints=[station_blueprint(station, DecisionInbox())],
        )
        server = waitress.create_server(
            app, host="127.0.0.1", port=0, threads=2, asyncore_use_poll=True
        )
        base = f"http://127.0.0.1:{server.effective_port}"
        threading.Thread(target=server.run, daemon=True).start()
        try:
            with playwright.sync_playwright() as p:
                browser = p.chromium.launch(
                    executable_path="/usr/bin/chromium",
                    args=["--headless", "--no-sandbox", "--disable-gpu"],
                )
                page = browser.new_page()
                page.goto(f"{base}/login?key={SECRET}")
                page.goto(f"{base}/station/")
                page.locator("#reasons li").first.wait_for(timeout=10_000)
                items = page.locator("#reasons li")
                assert items.all_inner_texts() == [f"Why review: {CAUSE}", f"Note: {NOTE}"]
                assert items.evaluate_all("lis => lis.map(li => li.className)") == [
                    "because",
                    "note",
                ]
                station.on_decision(JudgeDecision("confirm"))
                (outcome,) = station.outcomes
                page.goto(f"{base}/attempt/{outcome.attempt_id}")
                assert page.locator("#review-because li").all_inner_texts() == [CAUSE]
                assert page.locator("#reason-notes li").all_inner_texts() == [NOTE]
                assert page.locator(".because-label").inner_text() == "Why review:"
                browser.close()
        finally:
            server.close()
