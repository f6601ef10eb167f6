// Frame viewer of the review page: step through the frames around the trigger, per camera,
// with the overlay on or off. Data comes from the page (#frames-data); no network calls.
(function () {
  "use strict";
  const frames = JSON.parse(document.getElementById("frames-data").textContent);
  const frameImg = document.getElementById("frame");
  const overlayImg = document.getElementById("overlay");
  const label = document.getElementById("frame-label");
  const badge = document.getElementById("frame-badge");
  const scrub = document.getElementById("scrub");
  const overlayToggle = document.getElementById("overlay-toggle");
  const overlayNone = document.getElementById("overlay-none");
  const cameraButtons = Array.from(document.querySelectorAll("button.camera"));
  let camera = cameraButtons.length ? cameraButtons[0].dataset.camera : frames[0].camera;
  let list = [];
  let index = 0;

  function verdictIndex() {
    const found = list.findIndex((f) => f.lossless);
    if (found >= 0) return found;
    let best = 0;
    list.forEach((f, i) => { if (Math.abs(f.offset_ms) < Math.abs(list[best].offset_ms)) best = i; });
    return best;
  }

  function selectCamera(name) {
    camera = name;
    list = frames.filter((f) => f.camera === camera);
    cameraButtons.forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.camera === camera)));
    scrub.max = String(Math.max(list.length - 1, 0));
    show(verdictIndex());
  }

  function show(i) {
    if (!list.length) return;
    index = Math.max(0, Math.min(list.length - 1, i));
    const f = list[index];
    frameImg.src = f.image;
    const sign = f.offset_ms > 0 ? "+" : "";
    label.textContent = `${camera} · frame ${index + 1} / ${list.length} · ${sign}${f.offset_ms.toFixed(0)} ms from trigger`;
    badge.hidden = !f.lossless;
    scrub.value = String(index);
    const wantOverlay = overlayToggle.checked && f.overlay;
    overlayImg.hidden = !wantOverlay;
    if (wantOverlay) overlayImg.src = f.overlay;
    overlayNone.hidden = !(overlayToggle.checked && !f.overlay);
    frameImg.dataset.index = String(index);
  }

  document.getElementById("first").addEventListener("click", () => show(0));
  document.getElementById("prev").addEventListener("click", () => show(index - 1));
  document.getElementById("next").addEventListener("click", () => show(index + 1));
  document.getElementById("to-verdict").addEventListener("click", () => show(verdictIndex()));
  scrub.addEventListener("input", () => show(Number(scrub.value)));
  overlayToggle.addEventListener("change", () => show(index));
  cameraButtons.forEach((b) => b.addEventListener("click", () => selectCamera(b.dataset.camera)));
  document.addEventListener("keydown", (event) => {
    if (event.target instanceof HTMLInputElement && event.target.type !== "range") return;
    if (event.target instanceof HTMLTextAreaElement) return;
    if (event.key === "ArrowLeft") { show(index - 1); event.preventDefault(); }
    if (event.key === "ArrowRight") { show(index + 1); event.preventDefault(); }
    if (event.key === "o") { overlayToggle.checked = !overlayToggle.checked; show(index); }
  });
  selectCamera(camera);
})();
