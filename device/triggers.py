"""Triggers: the moment an attempt ends — a key, a GPIO button, or the Stackmat timer stopping.

Every trigger is polled by the station loop (`poll(now_ns)` returns what happened since the last
poll). Live triggers run a small reader thread and stamp events with the monotonic clock, the
clock the cameras' frames use; recorded triggers release their events when the replay clock
reaches them. gpiozero and pyserial are imported only when their trigger is built.
"""

from __future__ import annotations

import importlib
import logging
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TextIO

import numpy as np

from judgecam.device.stackmat import StackmatPacket, StackmatParser, StopDetector

logger = logging.getLogger(__name__)

Clock = Callable[[], int]


@dataclass(frozen=True)
class TriggerEvent:
    """An attempt ended at `timestamp_ns` (station clock); the timer's time when it has one."""

    timestamp_ns: int
    source: str
    displayed_time_ms: int | None = None


class Trigger(Protocol):
    """Something that says "the attempt is over"."""

    name: str

    def poll(self, now_ns: int) -> list[TriggerEvent]: ...

    def close(self) -> None: ...


class QueuedTrigger:
    """Base for live triggers: a reader thread pushes, the loop polls."""

    name = "queued"

    def __init__(self) -> None:
        self._events: queue.SimpleQueue[TriggerEvent] = queue.SimpleQueue()
        self._closed = threading.Event()

    def push(self, event: TriggerEvent) -> None:
        logger.info("trigger from %s at %d ns", event.source, event.timestamp_ns)
        self._events.put(event)

    def poll(self, now_ns: int) -> list[TriggerEvent]:
        events = []
        while True:
            try:
                events.append(self._events.get_nowait())
            except queue.Empty:
                return events

    def close(self) -> None:
        self._closed.set()

    def _start(self, target: Callable[[], None], name: str) -> None:
        threading.Thread(target=target, name=name, daemon=True).start()


class KeyboardTrigger(QueuedTrigger):
    """The judge presses Enter (one line on the terminal) when the timer stops."""

    name = "keyboard"

    def __init__(self, stream: TextIO | None = None, clock: Clock = time.monotonic_ns) -> None:
        super().__init__()
        self._stream = stream if stream is not None else sys.stdin
        self._clock = clock
        self._start(self._read, "keyboard-trigger")

    def _read(self) -> None:
        try:
            for _line in self._stream:
                if self._closed.is_set():
                    return
                self.push(TriggerEvent(self._clock(), self.name))
        except (OSError, ValueError) as error:  # no terminal (a service, a closed stdin)
            logger.warning("keyboard trigger unavailable: %s", error)


class GpioButtonTrigger(QueuedTrigger):
    """A push button on a Pi's GPIO pin (BCM numbering): wired to ground with the internal
    pull-up (active low, the default), or to 3.3 V with the pull-down (`active_low=False`)."""

    name = "gpio"

    def __init__(
        self,
        pin: int,
        bounce_s: float = 0.05,
        clock: Clock = time.monotonic_ns,
        active_low: bool = True,
    ) -> None:
        super().__init__()
        gpiozero = importlib.import_module("gpiozero")  # only on a Pi

        self._clock = clock
        self._button = gpiozero.Button(pin, pull_up=active_low, bounce_time=bounce_s)
        self._button.when_pressed = self._pressed

    def _pressed(self, *_args: Any) -> None:
        self.push(TriggerEvent(self._clock(), self.name))

    def close(self) -> None:
        super().close()
        self._button.close()


class StackmatTrigger(QueuedTrigger):
    """Fires when a Stackmat timer stops; packets come from any reader feeding `packets()`."""

    name = "stackmat"

    def __init__(self, confirm_packets: int = 3) -> None:
        super().__init__()
        self._detector = StopDetector(confirm_packets)
        self.last_packet: StackmatPacket | None = None

    def packets(self, packets: Iterable[StackmatPacket]) -> None:
        """Feed decoded packets (in arrival order)."""
        for packet in packets:
            self.last_packet = packet
            stop = self._detector.update(packet)
            if stop is not None:
                self.push(TriggerEvent(stop.timestamp_ns, self.name, stop.time_ms))


class StackmatSerialTrigger(StackmatTrigger):
    """A Stackmat on a serial port: a USB serial adapter or a UART behind an inverter."""

    def __init__(
        self, port: str, confirm_packets: int = 3, clock: Clock = time.monotonic_ns
    ) -> None:
        super().__init__(confirm_packets)
        serial = importlib.import_module("serial")  # pyserial

        self._clock = clock
        self._serial = serial.Serial(
            port, baudrate=1200, bytesize=8, parity="N", stopbits=1, timeout=0.1
        )
        self._parser = StackmatParser()
        self._start(self._read, "stackmat-serial")

    def _read(self) -> None:
        while not self._closed.is_set():
            try:
                data = self._serial.read(64)
            except Exception:  # unplugged adapter: log once, stop reading
                logger.exception("stackmat serial port stopped")
                return
            if data:
                self.packets(self._parser.feed(data, self._clock()))

    def close(self) -> None:
        super().close()
        self._serial.close()


class StackmatAudioTrigger(StackmatTrigger):
    """A Stackmat through a sound card: chunks of samples (e.g. `arecord_chunks`) decoded live."""

    def __init__(
        self,
        chunks: Iterator[np.ndarray],
        sample_rate: float,
        confirm_packets: int = 3,
        clock: Clock = time.monotonic_ns,
    ) -> None:
        super().__init__(confirm_packets)
        from judgecam.device.stackmat_audio import StackmatAudioDecoder

        self._chunks = chunks
        self._clock = clock
        self._decoder = StackmatAudioDecoder(sample_rate)
        self._sample_rate = sample_rate
        self._start(self._read, "stackmat-audio")

    def _read(self) -> None:
        for chunk in self._chunks:
            if self._closed.is_set():
                return
            # The chunk has just arrived: its first sample was taken one chunk length ago.
            start_ns = self._clock() - round(len(chunk) / self._sample_rate * 1e9)
            self.packets(self._decoder.feed(chunk, start_ns))


class RecordedTrigger:
    """Triggers of a recorded session, released when the replay clock reaches them."""

    name = "recorded"

    def __init__(self, events: Sequence[TriggerEvent]) -> None:
        self._pending = sorted(events, key=lambda e: e.timestamp_ns)

    def poll(self, now_ns: int) -> list[TriggerEvent]:
        due = [e for e in self._pending if e.timestamp_ns <= now_ns]
        self._pending = self._pending[len(due) :]
        return due

    def close(self) -> None:
        self._pending = []

    @property
    def remaining(self) -> int:
        return len(self._pending)


def build_trigger(kind: str, **options: Any) -> Trigger:
    """A live trigger by name: "keyboard", "gpio" (pin=), "stackmat-serial" (port=),
    "stackmat-audio" (device=, sample_rate=)."""
    if kind == "keyboard":
        return KeyboardTrigger()
    if kind == "gpio":
        if options.get("pin") is None:
            raise ValueError("a gpio trigger needs gpio_pin")
        active_low = options.get("active_low")
        return GpioButtonTrigger(int(options["pin"]), active_low=active_low is not False)
    if kind == "stackmat-serial":
        if not options.get("port"):
            raise ValueError("a stackmat-serial trigger needs serial_port")
        return StackmatSerialTrigger(str(options["port"]))
    if kind == "stackmat-audio":
        from judgecam.device.stackmat_audio import arecord_chunks

        rate = int(options.get("sample_rate", 48_000))
        chunks = arecord_chunks(str(options.get("device", "default")), rate)
        return StackmatAudioTrigger(chunks, rate)
    raise ValueError(f"unknown trigger {kind!r} (keyboard, gpio, stackmat-serial, stackmat-audio)")
