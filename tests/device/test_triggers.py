"""Triggers: keyboard, GPIO button (fake gpiozero), Stackmat on a serial port (fake pyserial)."""

from __future__ import annotations

import io
import sys
import threading
import time
import types
from collections.abc import Callable
from typing import Any

import pytest

from judgecam.device.stackmat import encode_packet
from judgecam.device.triggers import (
    GpioButtonTrigger,
    KeyboardTrigger,
    RecordedTrigger,
    StackmatAudioTrigger,
    StackmatSerialTrigger,
    TriggerEvent,
    build_trigger,
)


def wait_for(poll: Callable[[], list[TriggerEvent]], timeout_s: float = 5.0) -> list[TriggerEvent]:
    """Poll a live trigger until it reports something (its reader runs in a thread)."""
    deadline = time.monotonic() + timeout_s
    events: list[TriggerEvent] = []
    while not events and time.monotonic() < deadline:
        events = poll()
        time.sleep(0.01)
    return events


def test_keyboard_line_is_a_trigger_stamped_by_the_clock() -> None:
    ticks = iter(range(1_000, 10_000, 1_000))
    trigger = KeyboardTrigger(io.StringIO("\n\n"), clock=lambda: next(ticks))
    events = wait_for(lambda: trigger.poll(0))
    while len(events) < 2:
        events += wait_for(lambda: trigger.poll(0))
    assert events == [TriggerEvent(1_000, "keyboard"), TriggerEvent(2_000, "keyboard")]
    trigger.close()


class FakeButton:
    instances: list[FakeButton] = []  # noqa: RUF012 (the fake's registry)

    def __init__(self, pin: int, pull_up: bool, bounce_time: float) -> None:
        self.pin, self.pull_up, self.bounce_time = pin, pull_up, bounce_time
        self.when_pressed: Callable[..., Any] | None = None
        self.closed = False
        FakeButton.instances.append(self)

    def close(self) -> None:
        self.closed = True


def test_gpio_button_press_is_a_trigger(monkeypatch: pytest.MonkeyPatch) -> None:
    gpiozero = types.ModuleType("gpiozero")
    gpiozero.Button = FakeButton  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "gpiozero", gpiozero)
    FakeButton.instances = []
    trigger = GpioButtonTrigger(17, clock=lambda: 42)
    button = FakeButton.instances[0]
    assert (button.pin, button.pull_up, button.bounce_time) == (17, True, 0.05)
    assert trigger.poll(0) == []
    assert button.when_pressed is not None
    button.when_pressed()  # gpiozero calls this from its own thread
    assert trigger.poll(0) == [TriggerEvent(42, "gpio")]
    trigger.close()
    assert button.closed


class FakeSerial:
    """Hands over a Stackmat's bytes in small reads, as a USB serial adapter does."""

    data = b""
    opened: dict[str, Any] = {}  # noqa: RUF012

    def __init__(self, port: str, **settings: Any) -> None:
        FakeSerial.opened = {"port": port, **settings}
        self._data = FakeSerial.data
        self._lock = threading.Lock()

    def read(self, size: int) -> bytes:
        with self._lock:
            chunk, self._data = self._data[:5], self._data[5:]
        if not chunk:
            time.sleep(0.01)
        return chunk

    def close(self) -> None:
        pass


def test_stackmat_on_a_serial_port(monkeypatch: pytest.MonkeyPatch) -> None:
    serial = types.ModuleType("serial")
    serial.Serial = FakeSerial  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "serial", serial)
    running = [encode_packet(" ", t, 4) for t in range(0, 800, 100)]
    FakeSerial.data = b"\x13\x07" + b"".join(running) + encode_packet("S", 765, 4) * 4
    clock_ns = iter(range(0, 10**12, 20_000_000))  # 20 ms per read: the packets' pace
    trigger = StackmatSerialTrigger("/dev/ttyUSB0", clock=lambda: next(clock_ns))
    events = wait_for(lambda: trigger.poll(0))
    trigger.close()
    assert FakeSerial.opened == {
        "port": "/dev/ttyUSB0",
        "baudrate": 1200,
        "bytesize": 8,
        "parity": "N",
        "stopbits": 1,
        "timeout": 0.1,
    }
    assert [(e.source, e.displayed_time_ms) for e in events] == [("stackmat", 765)]


def test_stackmat_audio_trigger_from_chunks() -> None:
    import numpy as np

    rate = 48_000
    data = b"".join(encode_packet(" ", t, 3) for t in range(0, 600, 100))
    data += encode_packet("S", 650, 3) * 4
    bits: list[int] = [1] * 40
    for byte in data:
        bits += [0, *((byte >> k) & 1 for k in range(8)), 1, 1]
    bits += [1] * 40
    levels = np.array(bits)[(np.arange(int(len(bits) * rate / 1200)) * 1200 / rate).astype(int)]
    samples = (-0.4 * (2 * levels - 1) * 32_000).astype(np.int16)  # inverted, int16
    chunks = iter(np.array_split(samples, 20))
    trigger = StackmatAudioTrigger(chunks, rate, clock=time.monotonic_ns)
    events = wait_for(lambda: trigger.poll(0))
    assert [e.displayed_time_ms for e in events] == [650]


def test_recorded_triggers_are_released_by_the_replay_clock() -> None:
    trigger = RecordedTrigger([TriggerEvent(300, "stackmat", 9_000), TriggerEvent(100, "keyboard")])
    assert trigger.poll(50) == []
    assert trigger.poll(100) == [TriggerEvent(100, "keyboard")]
    assert trigger.remaining == 1
    assert trigger.poll(10_000) == [TriggerEvent(300, "stackmat", 9_000)]
    assert trigger.poll(20_000) == []


def test_unknown_trigger_kind() -> None:
    with pytest.raises(ValueError, match="unknown trigger 'pedal'"):
        build_trigger("pedal")
