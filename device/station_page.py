"""The live station page: what the judge sees on the Pi's screen (kiosk browser) or a tablet.

A Flask blueprint for the evidence helper's app (`judgecam.device.webapp.create_app`), or a
bare Flask app when run alone. The page shows each camera's live analysis frame (refreshed as
a JPEG a few times a second; an MJPEG stream is served too) with the verdict's drawing over it,
the verdict large and in colour, the reasons when it says review (what made it one first,
labelled "Why review:", the others as notes), camera and evidence problems in red, and the
judge's buttons: confirm, or override with solved / +2 / DNF. A small form takes the next
scorecard. Everything the page does goes through the station's own events, so
a click is recorded exactly like a recorded decision in a replay.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

import cv2
from flask import Blueprint, Response, abort, jsonify, request

from judgecam.device.station import VERDICTS, AttemptMeta, JudgeDecision, Station
from judgecam.device.station_loop import DecisionInbox

logger = logging.getLogger(__name__)

JPEG_QUALITY = 80
STREAM_BOUNDARY = "judgecamframe"

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="station-base" content="__PREFIX__">
<meta name="csrf-token" content="__CSRF__">
<title>judgecam station</title>
<link rel="stylesheet" href="__PREFIX__/page.css">
</head>
<body>
<header><strong>judgecam</strong><span id="attempt">no attempt</span>
<span id="state">waiting</span><span id="timer"></span></header>
<div id="verdict" data-verdict="">waiting</div>
<ul id="messages"></ul>
<ul id="reasons"></ul>
<div id="buttons">
 <button id="confirm" disabled>Confirm</button>
 <button class="override" data-verdict="solved" disabled>Solved</button>
 <button class="override" data-verdict="+2" disabled>+2</button>
 <button class="override" data-verdict="DNF" disabled>DNF</button>
</div>
<div id="last"></div>
<div id="views"></div>
<form id="next">Next scorecard:
 <input name="competitor_id" placeholder="competitor id" required>
 <input name="event" value="333" required>
 <input name="round" type="number" min="1" value="1" required>
 <input name="attempt" type="number" min="1" value="1" required>
 <button type="submit">Set</button> <span id="queued"></span>
</form>
<script src="__PREFIX__/page.js"></script>
</body></html>
"""

# Served as files: the app's Content-Security-Policy allows no inline style or script.
PAGE_CSS = """\
 body { font-family: system-ui, sans-serif; margin: 0; background: #111; color: #eee; }
 header { padding: .5rem 1rem; display: flex; gap: 1rem; align-items: baseline; }
 #attempt { font-size: 1.2rem; }
 #state { color: #aaa; }
 #verdict { font-size: 6rem; font-weight: 800; text-align: center; padding: .5rem;
            margin: .5rem 1rem; border-radius: 1rem; background: #333; }
 #verdict.v-solved { background: #1b7f3a; } #verdict.v-plus2 { background: #c78a00; }
 #verdict.v-DNF { background: #b3261e; } #verdict.v-review { background: #3556c4; }
 #reasons li, #messages li { font-size: 1.2rem; }
 #reasons li.because { font-size: 1.5rem; font-weight: 700; }
 #reasons li.note { color: #bbb; }
 #reasons .label { color: #ffb347; font-weight: 800; } #reasons li.note .label { color: #999; }
 #messages { color: #ff6b6b; font-weight: 700; }
 #views { display: flex; flex-wrap: wrap; gap: .5rem; padding: 0 1rem; }
 #views img { width: 32rem; max-width: 100%; background: #000; }
 #buttons { padding: 1rem; display: flex; gap: .5rem; flex-wrap: wrap; }
 button { font-size: 1.5rem; padding: .7rem 1.4rem; border-radius: .5rem; border: 0; }
 #confirm { background: #eee; font-weight: 800; }
 form { padding: 0 1rem 1rem; } input { font-size: 1rem; width: 8rem; }
"""

PAGE_JS = """const base = document.querySelector('meta[name="station-base"]').content;
const csrf = document.querySelector('meta[name="csrf-token"]').content;
let cameras = [];
function css(v) { return v === "+2" ? "v-plus2" : "v-" + v; }
async function post(path, body) {
  const headers = {"Content-Type": "application/json", "X-CSRF-Token": csrf};
  const r = await fetch(base + path, {method: "POST", headers, body: JSON.stringify(body)});
  return r.json();
}
async function refresh() {
  let s;
  try { s = await (await fetch(base + "/status.json")).json(); } catch (e) { return; }
  const a = s.attempt;
  document.getElementById("attempt").textContent = a ?
    `${a.competitor_id} · ${a.event} · round ${a.round} · attempt ${a.attempt}` : "no attempt";
  document.getElementById("state").textContent = s.state;
  document.getElementById("timer").textContent = s.timer_ms === null ? "" :
    (s.timer_ms / 1000).toFixed(3) + " s";
  const v = document.getElementById("verdict");
  v.textContent = s.verdict || (s.state === "settling" ? "…" : "waiting");
  v.className = s.verdict ? css(s.verdict) : "";
  v.dataset.verdict = s.verdict || "";
  // What made it a review first and labelled, then the other reasons as notes (none is
  // labelled when the judge did not say), then the incidents.
  const because = s.review_because || [];
  const notes = s.reasons.filter((r) => !because.includes(r));
  const reasons = document.getElementById("reasons"); reasons.innerHTML = "";
  const item = (text, kind, label) => {
    const li = document.createElement("li"); li.className = kind;
    if (label) {
      const b = document.createElement("span"); b.className = "label"; b.textContent = label;
      li.appendChild(b); li.appendChild(document.createTextNode(" "));
    }
    li.appendChild(document.createTextNode(text)); reasons.appendChild(li);
  };
  for (const r of because) item(r, "because", "Why review:");
  for (const r of notes) item(r, "note", because.length ? "Note:" : "");
  for (const r of s.incidents) item(r, "incident", "");
  document.getElementById("messages").innerHTML = "";
  for (const m of Object.values(s.messages)) {
    const li = document.createElement("li"); li.textContent = m;
    document.getElementById("messages").appendChild(li);
  }
  for (const b of document.querySelectorAll("#buttons button")) b.disabled = !s.verdict;
  const l = s.last;
  document.getElementById("last").textContent = l ?
    `last: ${l.attempt.competitor_id} a${l.attempt.attempt} camera ${l.verdict}` +
    (l.decided ? `, judge ${l.final_verdict}` : ", no decision") : "";
  document.getElementById("queued").textContent = s.next_attempt ?
    `next: ${s.next_attempt.competitor_id} a${s.next_attempt.attempt}` : "";
  if (JSON.stringify(cameras) !== JSON.stringify(s.cameras)) {
    cameras = s.cameras;
    const views = document.getElementById("views"); views.innerHTML = "";
    for (const c of cameras) {
      const img = document.createElement("img"); img.alt = c; img.dataset.camera = c;
      views.appendChild(img);
    }
  }
  for (const img of document.querySelectorAll("#views img"))
    img.src = `${base}/view/${img.dataset.camera}.jpg?t=${Date.now()}`;
}
document.getElementById("confirm").onclick =
  () => post("/decision", {decision: "confirm"}).then(refresh);
for (const b of document.querySelectorAll(".override"))
  b.onclick = () => post("/decision", {decision: "override", verdict: b.dataset.verdict})
    .then(refresh);
document.getElementById("next").onsubmit = (e) => {
  e.preventDefault();
  post("/attempt", Object.fromEntries(new FormData(e.target))).then(refresh);
};
refresh(); setInterval(refresh, 500);
"""


def _jpeg(image: Any) -> bytes:
    ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
    if not ok:
        raise RuntimeError("could not encode the live view")
    return bytes(data.tobytes())


def _csrf_token() -> str:
    """The session's CSRF token from the evidence app (every POST must carry it)."""
    from judgecam.device.webapp import csrf_token

    return csrf_token()


def station_blueprint(
    station: Station, inbox: DecisionInbox, url_prefix: str = "/station"
) -> Blueprint:
    """The station page's routes, bound to one station and the inbox its loop polls."""
    page = Blueprint("station", __name__, url_prefix=url_prefix)

    @page.get("/")
    def index() -> Response:
        html = PAGE.replace("__PREFIX__", url_prefix).replace("__CSRF__", _csrf_token())
        return Response(html, mimetype="text/html")

    @page.get("/page.css")
    def page_css() -> Response:
        return Response(PAGE_CSS, mimetype="text/css")

    @page.get("/page.js")
    def page_js() -> Response:
        return Response(PAGE_JS, mimetype="text/javascript")

    @page.get("/status.json")
    def status() -> Response:
        return jsonify(station.status())

    @page.get("/view/<camera>.jpg")
    def view(camera: str) -> Response:
        image = station.live_view(camera)
        if image is None:
            abort(404)
        response = Response(_jpeg(image), mimetype="image/jpeg")
        response.headers["Cache-Control"] = "no-store"
        return response

    @page.get("/stream/<camera>.mjpg")
    def stream(camera: str) -> Response:
        if station.live_view(camera) is None:
            abort(404)
        # ?frames=N ends the stream after N frames (tests, snapshots); without it, it runs on.
        frames = request.args.get("frames", type=int)
        if frames is not None and frames < 1:
            abort(400)
        return Response(
            _mjpeg(station, camera, frames),
            mimetype=f"multipart/x-mixed-replace; boundary={STREAM_BOUNDARY}",
        )

    @page.post("/decision")
    def decision() -> tuple[Response, int]:
        body = request.get_json(silent=True) or request.form.to_dict()
        kind = str(body.get("decision", ""))
        verdict = body.get("verdict")
        if kind not in ("confirm", "override") or (kind == "override" and verdict not in VERDICTS):
            return jsonify({"error": "decision must be confirm, or override with a verdict"}), 400
        current = station.status()
        on_screen = current["attempt"] or (current["last"] or {}).get("attempt")
        if on_screen is None:
            return jsonify({"error": "no attempt to decide on"}), 409
        decided = JudgeDecision(
            kind,
            by=str(body.get("by") or "judge"),
            verdict=None if kind == "confirm" else str(verdict),
            note=str(body.get("note") or ""),
            timestamp_ns=time.monotonic_ns(),
            attempt=AttemptMeta(**on_screen),
        )
        inbox.post(decided)
        logger.info("judge's decision from the page: %s", decided)
        return jsonify({"posted": kind, "verdict": decided.verdict, "attempt": on_screen}), 202

    @page.post("/attempt")
    def next_attempt() -> tuple[Response, int]:
        body = request.get_json(silent=True) or request.form.to_dict()
        try:
            meta = AttemptMeta(
                competitor_id=str(body["competitor_id"]).strip(),
                event=str(body.get("event", "333")).strip(),
                round=int(body.get("round", 1)),
                attempt=int(body.get("attempt", 1)),
            )
        except (KeyError, ValueError) as error:
            return jsonify({"error": f"bad scorecard: {error}"}), 400
        if not meta.competitor_id or meta.round < 1 or meta.attempt < 1:
            return jsonify({"error": "a scorecard needs a competitor id, round and attempt"}), 400
        station.queue_attempt(meta)
        return jsonify({"queued": body}), 202

    return page


def _mjpeg(
    station: Station, camera: str, frames: int | None, period_s: float = 0.2
) -> Iterator[bytes]:
    """Multipart JPEG frames of a camera's live view (`frames` of them, or for ever)."""
    sent = 0
    while frames is None or sent < frames:
        image = station.live_view(camera)
        if image is not None:
            data = _jpeg(image)
            yield (
                (
                    f"--{STREAM_BOUNDARY}\r\nContent-Type: image/jpeg\r\n"
                    f"Content-Length: {len(data)}\r\n\r\n"
                ).encode()
                + data
                + b"\r\n"
            )
            sent += 1
        time.sleep(period_s)


def register_station_page(app: Any, station: Station, inbox: DecisionInbox) -> None:
    """Add the station page to a Flask app (the evidence review app, or a bare one)."""
    app.register_blueprint(station_blueprint(station, inbox))
