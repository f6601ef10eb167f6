"""Decode the Stackmat signal from audio samples (a USB sound card's line or mic input).

The timer's data line is a 1200 baud 8N1 UART signal. Through a sound card it arrives with an
unknown gain, a DC offset, noise, and possibly inverted, so the decoder works it out:

1. smooth with a short moving average (a fraction of a bit) to tame noise;
2. threshold adaptively: the midpoint of a rolling maximum and minimum over ~2 bytes follows
   level changes and offsets; hysteresis around it, and holding the last level where the signal
   is flat, stops noise from inventing edges;
3. find the bit period from the run lengths of the binary signal (every run is a whole number
   of bits), starting from the shortest common run and refining by least squares;
4. read UART frames: a start bit, 8 data bits LSB first, a stop bit, each sampled by majority
   over the middle half of the bit; a frame whose stop bit is wrong is dropped;
5. try both polarities unless told, and keep the one that yields more valid packets.

Live audio comes from `arecord` (alsa-utils, present on Raspberry Pi OS), so no audio library
is needed: see `arecord_chunks`.
"""

from __future__ import annotations

import logging
import subprocess
import wave
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from judgecam.device.stackmat import StackmatPacket, StackmatParser

logger = logging.getLogger(__name__)

NOMINAL_BAUD = 1200
BITS_PER_FRAME = 10  # start + 8 data + stop
IDLE_SPAN_SIGMAS = 5.0


@dataclass(frozen=True)
class DecodedByte:
    """A UART byte and the sample index where its start bit began."""

    value: int
    start_sample: int


@dataclass(frozen=True)
class AudioDecodeResult:
    """What one stretch of audio held."""

    packets: tuple[StackmatPacket, ...]
    packet_end_samples: tuple[int, ...]
    bytes_decoded: int
    bit_period: float  # samples per bit
    inverted: bool


def to_mono_float(samples: np.ndarray) -> np.ndarray:
    """Samples of any integer or float dtype, mono or (n, channels), as float64 mono."""
    data = np.asarray(samples)
    if data.ndim == 2:
        data = data[:, 0]
    if np.issubdtype(data.dtype, np.integer):
        return data.astype(np.float64) / float(np.iinfo(data.dtype).max)
    return data.astype(np.float64)


def binarise(samples: np.ndarray, sample_rate: float, baud: float = NOMINAL_BAUD) -> np.ndarray:
    """Samples -> bool levels (True = high), with an adaptive threshold and hysteresis."""
    x = to_mono_float(samples)
    # Noise of the raw samples from their sample-to-sample differences (edges are rare).
    noise_sigma = (
        float(np.median(np.abs(np.diff(x)))) / 0.6745 / np.sqrt(2.0) if x.size > 1 else 0.0
    )
    bit = sample_rate / baud
    smooth_width = max(1, int(bit / 6))
    padded = np.pad(x, (smooth_width // 2, (smooth_width - 1) // 2), mode="edge")
    kernel_1d = np.ones(smooth_width) / smooth_width
    x = np.convolve(padded, kernel_1d, mode="valid").astype(np.float32)
    window = int(2 * BITS_PER_FRAME * bit) | 1
    row = x.reshape(1, -1)
    kernel = np.ones((1, window), np.uint8)
    high = cv2.dilate(row, kernel, borderType=cv2.BORDER_REPLICATE).ravel()
    low = cv2.erode(row, kernel, borderType=cv2.BORDER_REPLICATE).ravel()
    middle, span = (high + low) / 2.0, high - low
    # Where the rolling span is no more than noise, the line is idle (or silent): decide nothing
    # there and keep the previous level. (Smoothed noise spans about 3 sigma over the window.)
    active = span > max(IDLE_SPAN_SIGMAS * noise_sigma, 1e-4)
    upper = x > middle + 0.15 * span
    lower = x < middle - 0.15 * span
    decided = active & (upper | lower)
    indices = np.where(decided, np.arange(x.size), -1)
    last = np.maximum.accumulate(indices)
    levels = np.where(last >= 0, upper[np.maximum(last, 0)], False)
    return np.asarray(levels, dtype=bool)


def estimate_bit_period(levels: np.ndarray, nominal: float | None = None) -> float:
    """Samples per bit from the run lengths of a binary signal."""
    changes = np.flatnonzero(levels[1:] != levels[:-1]) + 1
    runs = np.diff(changes).astype(np.float64)
    runs = runs[runs >= 2]
    if runs.size == 0:
        if nominal is None:
            raise ValueError("no transitions: cannot find the bit period")
        return nominal
    period = float(np.percentile(runs, 10)) if nominal is None else nominal
    for _ in range(8):
        counts = np.maximum(1, np.rint(runs / period))
        usable = counts <= BITS_PER_FRAME - 1  # longer runs include idle time
        if not np.any(usable):
            break
        period = float(runs[usable].sum() / counts[usable].sum())
    return period


def read_uart(levels: np.ndarray, bit_period: float) -> list[DecodedByte]:
    """UART 8N1 bytes from logic levels (True = mark/idle), sampling mid-bit by majority."""
    n = levels.size
    cumulative = np.concatenate(([0], np.cumsum(levels, dtype=np.int64)))
    half_window = max(1, int(bit_period / 4))

    def bit_at(centre: float) -> bool | None:
        c = round(centre)
        lo, hi = c - half_window, c + half_window + 1
        if lo < 0 or hi > n:
            return None
        return bool(cumulative[hi] - cumulative[lo] > (hi - lo) / 2)

    falling = np.flatnonzero(levels[:-1] & ~levels[1:]) + 1
    decoded: list[DecodedByte] = []
    position = 0
    i = int(np.searchsorted(falling, position))
    while i < falling.size:
        edge = int(falling[i])
        bits = [bit_at(edge + (k + 0.5) * bit_period) for k in range(BITS_PER_FRAME)]
        if any(b is None for b in bits):
            break
        if bits[0] is False and bits[-1] is True:
            value = sum(1 << k for k, b in enumerate(bits[1:9]) if b)
            decoded.append(DecodedByte(value, edge))
            position = int(edge + (BITS_PER_FRAME - 0.5) * bit_period)
            i = int(np.searchsorted(falling, position))
        else:
            i += 1
    return decoded


def decode_waveform(
    samples: np.ndarray,
    sample_rate: float,
    inverted: bool | None = None,
    baud: float | None = None,
) -> AudioDecodeResult:
    """Stackmat packets in a stretch of audio (`baud=None` finds the bit rate itself)."""
    levels = binarise(samples, sample_rate, baud or NOMINAL_BAUD)
    period = estimate_bit_period(levels, None if baud is None else sample_rate / baud)
    best: AudioDecodeResult | None = None
    for invert in (False, True) if inverted is None else (inverted,):
        uart = read_uart(~levels if invert else levels, period)
        parser = StackmatParser()
        packets: list[StackmatPacket] = []
        ends: list[int] = []
        for byte in uart:
            end = int(byte.start_sample + BITS_PER_FRAME * period)
            found = parser.feed(bytes([byte.value]))
            packets.extend(found)
            ends.extend([end] * len(found))
        result = AudioDecodeResult(tuple(packets), tuple(ends), len(uart), period, invert)
        if best is None or len(result.packets) > len(best.packets):
            best = result
    assert best is not None
    return best


class StackmatAudioDecoder:
    """Streaming decoder: feed chunks of samples, get each packet once, stamped in time.

    It keeps the last `history_s` seconds and decodes them again with every chunk (cheap at
    audio rates), reporting only packets that end after the last one reported.
    """

    def __init__(
        self, sample_rate: float, history_s: float = 1.0, inverted: bool | None = None
    ) -> None:
        self.sample_rate = sample_rate
        self._history = int(history_s * sample_rate)
        self._inverted = inverted
        self._buffer = np.zeros(0, dtype=np.float64)
        self._buffer_start = 0  # absolute sample index of self._buffer[0]
        self._last_end = -1
        self._start_ns: int | None = None

    def feed(self, samples: np.ndarray, start_ns: int) -> list[StackmatPacket]:
        """Decode a chunk whose first sample was taken at `start_ns` (station clock)."""
        chunk = to_mono_float(samples)
        if self._start_ns is None:
            self._start_ns = start_ns
        self._buffer = np.concatenate((self._buffer, chunk))
        excess = self._buffer.size - self._history - chunk.size
        if excess > 0:
            self._buffer = self._buffer[excess:]
            self._buffer_start += excess
        try:
            result = decode_waveform(self._buffer, self.sample_rate, self._inverted)
        except ValueError:  # silence: no transitions yet
            return []
        if self._inverted is None and result.packets:
            self._inverted = result.inverted  # decided once there is a packet
        fresh = []
        for packet, end in zip(result.packets, result.packet_end_samples, strict=True):
            absolute_end = self._buffer_start + end
            if absolute_end > self._last_end + result.bit_period * BITS_PER_FRAME:
                self._last_end = absolute_end
                timestamp = self._start_ns + round(absolute_end / self.sample_rate * 1e9)
                fresh.append(
                    StackmatPacket(packet.status, packet.time_ms, packet.generation, timestamp)
                )
        return fresh


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    """Samples (first channel, int16 or uint8 as stored) and the sample rate of a WAV file."""
    with wave.open(str(path), "rb") as wav:
        rate, width, channels = wav.getframerate(), wav.getsampwidth(), wav.getnchannels()
        raw = wav.readframes(wav.getnframes())
    dtype = {1: np.uint8, 2: np.int16, 4: np.int32}[width]
    data = np.frombuffer(raw, dtype=dtype).reshape(-1, channels)[:, 0]
    if dtype is np.uint8:
        data = (data.astype(np.int16) - 128).astype(np.int16) * 256
    return data, rate


def arecord_chunks(
    device: str = "default", sample_rate: int = 48_000, chunk_s: float = 0.1
) -> Iterator[np.ndarray]:
    """Live int16 mono chunks from an ALSA capture device through `arecord`."""
    command = ["arecord", "-q", "-D", device, "-f", "S16_LE", "-c", "1", "-r", str(sample_rate)]
    command += ["-t", "raw"]
    chunk_bytes = int(sample_rate * chunk_s) * 2
    with subprocess.Popen(command, stdout=subprocess.PIPE) as process:
        assert process.stdout is not None
        try:
            while data := process.stdout.read(chunk_bytes):
                yield np.frombuffer(data, dtype=np.int16)
        finally:
            process.terminate()
