"""The Stackmat timer's data signal: packets, a byte-stream parser and "the timer stopped".

A Stackmat timer sends its display as packets at 1200 baud, 8N1, on an inverted line:

- gen 3 (9 bytes):  status, 5 digits (M SS hh), checksum, CR, LF
- gen 4 (10 bytes): status, 6 digits (M SS hhh), checksum, CR, LF

Digits are ASCII; checksum = 64 + the sum of the digit values. Status is one of
I (reset), A (ready), ' ' (running), S (stopped), L / R (one hand on a pad), C (both hands).

`StackmatParser` finds packets in a byte stream that may start mid-packet, lose bytes or carry
corrupted ones (those packets are dropped and counted). `StopDetector` turns packets into one
`StackmatStop` per solve: the timer must have been running (time increasing), then show the same
time in several consecutive packets with a non-running status — a single packet never decides,
so a corrupted or dropped packet cannot fake or hide a stop.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

logger = logging.getLogger(__name__)

STATUSES = frozenset(b"IA SLRC")
RUNNING = ord(" ")
PACKET_END = b"\r\n"
GEN3_LENGTH = 9
GEN4_LENGTH = 10


@dataclass(frozen=True)
class StackmatPacket:
    """One decoded display state of the timer."""

    status: str
    time_ms: int
    generation: int  # 3 or 4
    timestamp_ns: int  # when its last byte arrived, on the station clock

    @property
    def running(self) -> bool:
        return self.status == " "


@dataclass(frozen=True)
class StackmatStop:
    """The timer stopped: the displayed time and the estimated moment it stopped."""

    time_ms: int
    timestamp_ns: int
    status: str
    generation: int


def checksum(digits: Iterable[int]) -> int:
    """The Stackmat checksum byte for digit values 0..9."""
    return 64 + sum(digits)


def encode_packet(status: str, time_ms: int, generation: int = 4) -> bytes:
    """The bytes a timer sends for a display (used to synthesise test signals and demos)."""
    if status.encode("ascii")[0] not in STATUSES:
        raise ValueError(f"unknown status {status!r}")
    minutes, rest = divmod(time_ms, 60_000)
    if minutes > 9:
        raise ValueError("a Stackmat shows at most 9:59.99")
    seconds, millis = divmod(rest, 1000)
    if generation == 4:
        digits = [
            minutes,
            seconds // 10,
            seconds % 10,
            millis // 100,
            millis // 10 % 10,
            millis % 10,
        ]
    elif generation == 3:
        digits = [minutes, seconds // 10, seconds % 10, millis // 100, millis // 10 % 10]
    else:
        raise ValueError(f"generation must be 3 or 4, not {generation}")
    body = status.encode("ascii") + bytes(ord("0") + d for d in digits)
    return body + bytes([checksum(digits)]) + PACKET_END


def decode_packet(data: bytes, timestamp_ns: int = 0) -> StackmatPacket | None:
    """A packet from exactly 9 or 10 bytes ending in CR LF, or None if they are not one."""
    if len(data) not in (GEN3_LENGTH, GEN4_LENGTH) or not data.endswith(PACKET_END):
        return None
    status, digit_bytes, check = data[0], data[1:-3], data[-3]
    if status not in STATUSES or not all(0x30 <= b <= 0x39 for b in digit_bytes):
        return None
    digits = [b - 0x30 for b in digit_bytes]
    if check != checksum(digits):
        return None
    minutes, seconds = digits[0], digits[1] * 10 + digits[2]
    if seconds > 59:
        return None
    if len(digits) == 6:
        millis = digits[3] * 100 + digits[4] * 10 + digits[5]
        generation = 4
    else:
        millis = digits[3] * 100 + digits[4] * 10
        generation = 3
    time_ms = minutes * 60_000 + seconds * 1000 + millis
    return StackmatPacket(chr(status), time_ms, generation, timestamp_ns)


class StackmatParser:
    """Packets out of a byte stream (serial port or decoded audio), resynchronising on CR LF."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.rejected = 0  # candidates ending in CR LF that were not valid packets

    def feed(self, data: bytes, timestamp_ns: int = 0) -> list[StackmatPacket]:
        """The complete packets in the bytes so far; `timestamp_ns` stamps them."""
        self._buffer.extend(data)
        packets = []
        while (end := self._buffer.find(PACKET_END)) >= 0:
            stop = end + len(PACKET_END)
            # A gen 4 packet first: the byte before a gen 3 packet (LF or garbage) is never a
            # status that could be read as a 10-byte packet, and the reverse is impossible since a
            # status byte is never a digit.
            packet = None
            for length in (GEN4_LENGTH, GEN3_LENGTH):
                if stop >= length:
                    packet = decode_packet(bytes(self._buffer[stop - length : stop]), timestamp_ns)
                    if packet is not None:
                        break
            if packet is None:
                self.rejected += 1
            else:
                packets.append(packet)
            del self._buffer[:stop]
        if len(self._buffer) > 4 * GEN4_LENGTH:  # no CR LF for a long while: keep only a tail
            del self._buffer[:-GEN4_LENGTH]
        return packets


class StopDetector:
    """One `StackmatStop` per solve, from a stream of packets.

    A stop is reported when the timer was running (its time increased, no faster than the
    station clock allows — a jump from 0 to an old time is a display, not a solve) and then the
    same time was shown in `confirm_packets` consecutive packets with a non-running status, or
    in twice as many with any status (a timer whose status byte is unreliable). A reset (time 0
    / status I) or a new solve re-arms it.
    """

    #: Slack when checking that the time increased no faster than real time (clock jitter,
    #: packets buffered by a serial adapter or an audio chunk).
    RATE_SLACK = 1.5
    JITTER_MS = 250

    def __init__(self, confirm_packets: int = 3) -> None:
        if confirm_packets < 1:
            raise ValueError("confirm_packets must be at least 1")
        self._confirm = confirm_packets
        self._previous: StackmatPacket | None = None
        self._last_running: StackmatPacket | None = None
        self._running = False
        self._stable: list[StackmatPacket] = []

    def update(self, packet: StackmatPacket) -> StackmatStop | None:
        """Feed one packet; the stop when this packet confirms one."""
        previous, self._previous = self._previous, packet
        if packet.time_ms == 0 or packet.status == "I":
            self._running = False
            self._stable = []
            return None
        if previous is not None and packet.time_ms > previous.time_ms:
            elapsed_ms = (packet.timestamp_ns - previous.timestamp_ns) / 1e6
            if packet.time_ms - previous.time_ms > self.RATE_SLACK * elapsed_ms + self.JITTER_MS:
                self._running = False  # a jump, not a running timer
                self._stable = []
                return None
            self._running = True
            if packet.running:
                self._last_running = packet
            self._stable = [packet]  # the first packet showing what may be the final time
            return None
        if previous is not None and packet.time_ms < previous.time_ms:
            self._stable = []  # a new, shorter display: wait until it increases again
            return None
        if not self._running:
            return None
        self._stable.append(packet)
        still = [p for p in self._stable if not p.running]
        if len(still) < self._confirm and len(self._stable) < 2 * self._confirm:
            return None
        self._running = False
        moment = self._stop_moment(self._stable[0])
        self._last_running = None
        self._stable = []
        return StackmatStop(packet.time_ms, moment, packet.status, packet.generation)

    def _stop_moment(self, first_stable: StackmatPacket) -> int:
        """When the timer stopped: the last running packet plus the time it still had to run,
        never later than the first packet that showed the final time."""
        last = self._last_running
        if last is None or last.time_ms > first_stable.time_ms:
            return first_stable.timestamp_ns
        estimate = last.timestamp_ns + (first_stable.time_ms - last.time_ms) * 1_000_000
        return min(estimate, first_stable.timestamp_ns)
