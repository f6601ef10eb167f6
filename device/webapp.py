"""The one local web app of judgecam (Flask, served by waitress).

It owns the session, login and CSRF rules every page shares: nothing is shown without an
authenticated session, and every write (any non-GET request) also needs the session's CSRF
token. Served on loopback without a password, the app uses a random access secret printed as a
login link (like Jupyter), so even other local users cannot write. The review pages are the
`review` blueprint (`evidence_review`); other blueprints (the live station page) are registered
through `create_app(..., blueprints=...)` and get the same protection.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import secrets
import time
from collections import defaultdict, deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from flask import (
    Blueprint,
    Flask,
    Response,
    abort,
    current_app,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from werkzeug.security import check_password_hash, generate_password_hash

from judgecam.device.evidence import EvidenceStore

logger = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
STORE_KEY = "judgecam_evidence_store"
_OPEN_ENDPOINTS = {"login", "static"}
_SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
MAX_FAILED_LOGINS = 10
FAILED_LOGIN_WINDOW_S = 300.0
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self'; "
    "frame-ancestors 'none'; form-action 'self'; base-uri 'none'"
)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def make_access_secret() -> str:
    return secrets.token_urlsafe(24)


def evidence_store() -> EvidenceStore:
    """The store the app serves (for blueprints)."""
    store = current_app.extensions[STORE_KEY]
    assert isinstance(store, EvidenceStore)
    return store


def csrf_token() -> str:
    """The session's CSRF token (created on first use); forms put it in `csrf_token`."""
    token = session.get("csrf")
    if not token:
        token = session["csrf"] = secrets.token_urlsafe(32)
    return str(token)


def create_app(
    store: EvidenceStore,
    *,
    password: str,
    link_secret: str | None = None,
    blueprints: Sequence[Blueprint] = (),
) -> Flask:
    """The app serving `store`; `password` logs in, `link_secret` also allows /login?key=."""
    from judgecam.device.evidence_review import review

    app = Flask(
        __name__, template_folder=str(HERE / "templates"), static_folder=str(HERE / "static")
    )
    app.config.update(
        SECRET_KEY=secrets.token_bytes(32),
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        MAX_CONTENT_LENGTH=64 * 1024,
    )
    app.extensions[STORE_KEY] = store
    password_hash = generate_password_hash(password)
    failures: defaultdict[str, deque[float]] = defaultdict(deque)

    def throttled(address: str) -> bool:
        window = failures[address]
        while window and window[0] < time.monotonic() - FAILED_LOGIN_WINDOW_S:
            window.popleft()
        return len(window) >= MAX_FAILED_LOGINS

    def log_in(candidate: str, *, via_link: bool = False) -> bool:
        address = request.remote_addr or "?"
        if throttled(address):
            abort(429)
        if via_link:
            accepted = link_secret is not None and hmac.compare_digest(candidate, link_secret)
        else:
            accepted = bool(candidate) and check_password_hash(password_hash, candidate)
        if accepted:
            session.clear()
            session["auth"] = True
            csrf_token()
            return True
        failures[address].append(time.monotonic())
        logger.warning("failed login from %s", address)
        return False

    @app.before_request
    def require_session_and_csrf() -> Any:
        if request.endpoint in _OPEN_ENDPOINTS:
            if request.method not in _SAFE_METHODS:
                _check_csrf()
            return None
        if not session.get("auth"):
            if request.method in _SAFE_METHODS:
                return redirect(url_for("login", next=request.full_path))
            abort(403, "log in first")
        if request.method not in _SAFE_METHODS:
            _check_csrf()
        return None

    @app.after_request
    def security_headers(response: Response) -> Response:
        response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        if response.mimetype == "text/html":
            response.headers["Cache-Control"] = "no-store"
        return response

    @app.route("/login", methods=["GET", "POST"])
    def login() -> Any:
        target = _local_target(request.values.get("next", ""))
        key = request.args.get("key", "")
        if request.method == "GET" and key:
            if log_in(key, via_link=True):
                return redirect(url_for("review.index"))
            return _login_page("That login link is not valid.", 403)
        if request.method == "POST":
            if log_in(request.form.get("password", "")):
                return redirect(target)
            return _login_page("Wrong password.", 403)
        return _login_page("", 200)

    @app.post("/logout")
    def logout() -> Any:
        session.clear()
        return redirect(url_for("login"))

    app.jinja_env.globals["csrf_token"] = csrf_token
    app.jinja_env.filters["utc"] = _utc_text
    app.register_blueprint(review)
    for blueprint in blueprints:
        app.register_blueprint(blueprint)
    return app


def _utc_text(time_ns: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(int(time_ns) / 1e9))


def _check_csrf() -> None:
    sent = request.form.get("csrf_token") or request.headers.get("X-CSRF-Token", "")
    expected = session.get("csrf", "")
    if not expected or not hmac.compare_digest(str(sent), str(expected)):
        abort(403, "missing or wrong CSRF token: reload the page and try again")


def _local_target(target: str) -> str:
    """Only redirect to a path on this site after login (no open redirect)."""
    if target.startswith("/") and not target.startswith("//") and "\\" not in target:
        return target
    return "/"


def _login_page(message: str, status: int) -> tuple[str, int]:
    return render_template(
        "login.html", message=message, next=_local_target(request.values.get("next", ""))
    ), status


def serve(
    store: EvidenceStore,
    *,
    host: str,
    port: int,
    password: str,
    link_secret: str | None = None,
    announce: Callable[[str], None] = print,
) -> None:
    """Serve the app with waitress until interrupted."""
    import waitress  # type: ignore[import-untyped]

    app = create_app(store, password=password, link_secret=link_secret)
    server = waitress.create_server(app, host=host, port=port, threads=4)
    bound = getattr(server, "effective_port", port)
    url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{bound}"
    if link_secret is not None:
        announce(f"review page: {url}/login?key={link_secret}  (open this link; Ctrl-C stops)")
    else:
        announce(f"review page: {url}/  (log in with the password; Ctrl-C stops)")
    try:
        server.run()
    finally:
        server.close()
        store.close()
