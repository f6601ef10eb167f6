"""The review app through Flask's test client: login, CSRF, path traversal, decisions."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from flask.testing import FlaskClient

from judgecam.device.evidence import EvidenceStore
from judgecam.device.evidence_demo import DemoShape, fill_demo_store
from judgecam.device.evidence_verify import verify_store
from judgecam.device.webapp import create_app, is_loopback

TINY = DemoShape(width=48, height=27, frames_per_camera=3, verdict_index=1)
PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("review") / "store"
    with EvidenceStore(root, min_free_bytes=0) as opened:
        fill_demo_store(opened, ["2019KIMA01", "2020LEEB01"], shape=TINY, attempts=2)
    return root


@pytest.fixture
def store(pristine: Path, tmp_path: Path) -> Iterator[EvidenceStore]:
    shutil.copytree(pristine, tmp_path / "store")
    with EvidenceStore(tmp_path / "store", min_free_bytes=0) as opened:
        yield opened


@pytest.fixture
def app(store: EvidenceStore) -> Flask:
    return create_app(store, password=PASSWORD, link_secret="link-secret-123")


def csrf_from(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match, "page has no CSRF token"
    return match.group(1)


def logged_in(app: Flask) -> FlaskClient:
    client = app.test_client()
    page = client.get("/login").get_data(as_text=True)
    response = client.post("/login", data={"password": PASSWORD, "csrf_token": csrf_from(page)})
    assert response.status_code == 302
    return client


def first_attempt(store: EvidenceStore) -> str:
    return store.find(competitor_id="2019KIMA01")[0].attempt_id


def test_everything_needs_a_session(app: Flask, store: EvidenceStore) -> None:
    client = app.test_client()
    attempt_id = first_attempt(store)
    for path in ("/", f"/attempt/{attempt_id}", f"/attempt/{attempt_id}/file/notes.txt"):
        response = client.get(path)
        assert response.status_code == 302 and "/login" in response.headers["Location"]
    response = client.post(
        f"/attempt/{attempt_id}/decision", data={"decision": "DNF", "by": "mallory"}
    )
    assert response.status_code == 403
    assert store.decisions(attempt_id) == []


def test_wrong_password_and_bad_link_are_refused(app: Flask) -> None:
    client = app.test_client()
    token = csrf_from(client.get("/login").get_data(as_text=True))
    assert client.post("/login", data={"password": "guess", "csrf_token": token}).status_code == 403
    assert client.get("/login?key=wrong").status_code == 403
    assert client.get("/").status_code == 302
    assert client.get("/login?key=link-secret-123").status_code == 302
    assert client.get("/").status_code == 200


def test_login_form_needs_its_csrf_token(app: Flask) -> None:
    client = app.test_client()
    client.get("/login")
    assert client.post("/login", data={"password": PASSWORD}).status_code == 403


def test_decision_needs_the_csrf_token_and_is_appended(app: Flask, store: EvidenceStore) -> None:
    client = logged_in(app)
    attempt_id = first_attempt(store)
    page = client.get(f"/attempt/{attempt_id}").get_data(as_text=True)
    form = {"decision": "+2", "by": "Chief Park", "note": "touched after stop"}
    assert client.post(f"/attempt/{attempt_id}/decision", data=form).status_code == 403
    assert (
        client.post(
            f"/attempt/{attempt_id}/decision", data={**form, "csrf_token": "forged"}
        ).status_code
        == 403
    )
    assert store.decisions(attempt_id) == []
    response = client.post(
        f"/attempt/{attempt_id}/decision", data={**form, "csrf_token": csrf_from(page)}
    )
    assert response.status_code == 302
    [decision] = store.decisions(attempt_id)
    assert decision.content["decision"] == "+2" and decision.content["by"] == "Chief Park"
    page = client.get(f"/attempt/{attempt_id}").get_data(as_text=True)
    assert "decided: +2" in page and "touched after stop" in page
    bad = {**form, "decision": "ok whatever", "csrf_token": csrf_from(page)}
    assert client.post(f"/attempt/{attempt_id}/decision", data=bad).status_code == 400
    assert verify_store(store.root).ok


@pytest.mark.parametrize(
    "path",
    [
        "/attempt/{id}/file/../../../log.jsonl",
        "/attempt/{id}/file/..%2F..%2F..%2Flog.jsonl",
        "/attempt/{id}/file/%2e%2e/%2e%2e/%2e%2e/log.jsonl",
        "/attempt/{id}/file//etc/passwd",
        "/attempt/{id}/file/clip/../../../index.sqlite",
        "/attempt/..%2F..%2Fetc/file/passwd",
        "/attempt/{id}/file/attempt.json%00.png",
        "/attempt/{id}/file/not-recorded.txt",
    ],
)
def test_path_traversal_is_refused(app: Flask, store: EvidenceStore, path: str) -> None:
    client = logged_in(app)
    attempt_id = first_attempt(store)
    (store.root / "attempts" / attempt_id / "not-recorded.txt").write_text("planted")
    response = client.get(path.replace("{id}", attempt_id))
    assert response.status_code in (404, 308)
    assert b"store-created" not in response.data and b"planted" not in response.data


def test_recorded_files_are_served(app: Flask, store: EvidenceStore) -> None:
    client = logged_in(app)
    attempt_id = first_attempt(store)
    record = store.attempt_record(attempt_id)
    assert record is not None
    frame = record.content["frames"][0]["clip"]
    response = client.get(f"/attempt/{attempt_id}/file/{frame}")
    assert response.status_code == 200 and response.mimetype == "image/jpeg"
    assert response.data == (store.root / "attempts" / attempt_id / frame).read_bytes()
    response.close()


def test_filters_find_attempts(app: Flask, store: EvidenceStore) -> None:
    client = logged_in(app)
    page = client.get("/?competitor=2020LEEB01").get_data(as_text=True)
    assert page.count('class="rowlink"') == 2 and "2019KIMA01</a>" not in page
    page = client.get("/?competitor=2019KIMA01&event=333&round=1").get_data(as_text=True)
    assert page.count('class="rowlink"') == 2
    assert "0 attempts" in client.get("/?event=444").get_data(as_text=True)


def test_pages_send_protective_headers(app: Flask) -> None:
    client = logged_in(app)
    response = client.get("/")
    assert "default-src 'self'" in response.headers["Content-Security-Policy"]
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    cookie = (
        next(h for h in response.headers.getlist("Set-Cookie") or [""])
        if (response.headers.getlist("Set-Cookie"))
        else ""
    )
    assert "SameSite" not in cookie or "Strict" in cookie


def test_logout_ends_the_session(app: Flask) -> None:
    client = logged_in(app)
    page = client.get("/").get_data(as_text=True)
    assert client.post("/logout", data={"csrf_token": csrf_from(page)}).status_code == 302
    assert client.get("/").status_code == 302


def test_loopback_detection() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.20")
