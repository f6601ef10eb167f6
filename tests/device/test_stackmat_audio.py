"""The Stackmat decoder on synthesised audio: noise, level changes, DC offset, inversion, damage."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from judgecam.device.stackmat import StopDetector, encode_packet
from judgecam.device.stackmat_audio import (
    StackmatAudioDecoder,
    binarise,
    decode_waveform,
    estimate_bit_period,
    read_uart,
    read_wav,
)

RATE = 44_100


def uart_bits(data: bytes, idle_bits: int = 0) -> list[int]:
    """Logic levels of 8N1 frames (1 = mark/idle), LSB first."""
    bits: list[int] = []
    for byte in data:
        bits += [0, *((byte >> k) & 1 for k in range(8)), 1]
        bits += [1] * idle_bits
    return bits


def waveform(
    data: bytes,
    baud: float = 1200.0,
    rate: int = RATE,
    inverted: bool = True,
    gain: tuple[float, float] = (0.5, 0.5),
    offset: float = 0.0,
    noise: float = 0.0,
    seed: int = 0,
    lead_in_bits: int = 20,
) -> np.ndarray:
    """A sound card's view of the timer: levels, gain ramp, offset, white noise, one-pole RC."""
    bits = np.array([1] * lead_in_bits + uart_bits(data) + [1] * 20, dtype=np.float64)
    n = int(bits.size * rate / baud)
    level = bits[(np.arange(n) * baud / rate).astype(int)]
    signal = (1.0 - 2.0 * level) if inverted else (2.0 * level - 1.0)
    signal = signal * np.linspace(gain[0], gain[1], n) + offset
    # The coupling capacitor / input filter: a little smoothing of every edge.
    smoothed = np.empty_like(signal)
    state = signal[0]
    for i, value in enumerate(signal):
        state += 0.35 * (value - state)
        smoothed[i] = state
    rng = np.random.default_rng(seed)
    return smoothed + rng.normal(0.0, noise, n)


def solve_stream(final_ms: int = 7_310, generation: int = 4) -> tuple[bytes, list[int]]:
    times = [*range(0, final_ms, 400), final_ms]
    packets = [encode_packet(" ", t, generation) for t in times[:-1]]
    packets += [encode_packet("S", final_ms, generation)] * 4
    return b"".join(packets), [*times[:-1], *[final_ms] * 4]


@pytest.mark.parametrize("inverted", [True, False])
@pytest.mark.parametrize("generation", [3, 4])
def test_clean_signal_decodes_every_packet(inverted: bool, generation: int) -> None:
    data, times = solve_stream(generation=generation)
    if generation == 3:
        times = [t - t % 10 for t in times]
    result = decode_waveform(waveform(data, inverted=inverted), RATE)
    assert [p.time_ms for p in result.packets] == times
    assert result.inverted is inverted
    assert {p.generation for p in result.packets} == {generation}


def test_noise_level_change_and_dc_offset() -> None:
    data, times = solve_stream()
    # Gain falls from 0.8 to 0.15 (a cable moved), offset 0.4, noise 15 % of the weakest swing.
    x = waveform(data, gain=(0.8, 0.15), offset=0.4, noise=0.0225, seed=3)
    result = decode_waveform(x, RATE)
    assert [p.time_ms for p in result.packets] == times


def test_bit_period_is_found_for_an_off_nominal_timer() -> None:
    data, times = solve_stream()
    baud = 1_163.0  # a timer whose clock runs 3 % slow
    result = decode_waveform(waveform(data, baud=baud, noise=0.02), RATE)
    assert result.bit_period == pytest.approx(RATE / baud, rel=0.005)
    assert [p.time_ms for p in result.packets] == times


def test_estimate_bit_period_from_runs() -> None:
    levels = np.repeat(np.array(uart_bits(b"\x55\x0f\x33", idle_bits=2), dtype=bool), 40)
    assert estimate_bit_period(levels) == pytest.approx(40.0, abs=0.01)


def test_uart_reads_bytes_lsb_first_with_start_and_stop_bits() -> None:
    data = bytes(range(0, 256, 17))
    levels = np.repeat(np.array([1] * 5 + uart_bits(data) + [1] * 5, dtype=bool), 16)
    assert bytes(b.value for b in read_uart(levels, 16.0)) == data


def test_bad_checksums_and_dropped_bytes_lose_only_those_packets() -> None:
    good = [encode_packet(" ", t, 4) for t in (1_000, 1_400, 1_800, 2_200)]
    corrupted = bytearray(good[1])
    corrupted[3] = ord("7") if corrupted[3] != ord("7") else ord("8")  # a wrong digit
    dropped = good[2][:4] + good[2][5:]  # one byte (the digit 8) never sent
    data = good[0] + bytes(corrupted) + dropped + good[3]
    result = decode_waveform(waveform(data, noise=0.03), RATE)
    assert [p.time_ms for p in result.packets] == [1_000, 2_200]


def test_a_dropped_zero_digit_looks_valid_but_cannot_fake_a_stop() -> None:
    # " 001800" minus a "0" reads as a gen 3 packet of 0:18.00 with a correct checksum: the
    # protocol cannot tell. The stop detector refuses a time that jumps faster than the clock.
    running = [encode_packet(" ", t, 4) for t in (1_000, 1_100, 1_200)]
    glitch = encode_packet(" ", 1_800, 4)
    glitch = glitch[:1] + glitch[2:]
    stopped = [encode_packet("S", 18_000, 3)] * 5  # as if the glitch were the final time
    result = decode_waveform(waveform(b"".join([*running, glitch, *stopped])), RATE)
    assert [p.time_ms for p in result.packets] == [1_000, 1_100, 1_200, *[18_000] * 6]
    detector = StopDetector(3)
    stamped = [
        type(p)(p.status, p.time_ms, p.generation, i * 100_000_000)
        for i, p in enumerate(result.packets)
    ]
    assert [s for s in map(detector.update, stamped) if s is not None] == []


def test_silence_has_no_packets() -> None:
    quiet = np.random.default_rng(0).normal(0, 0.01, RATE // 2)
    assert decode_waveform(quiet, RATE, baud=1200).packets == ()


def test_binarise_holds_its_level_on_a_flat_line() -> None:
    x = np.concatenate([np.full(2_000, 0.5), np.full(2_000, -0.5), np.full(20_000, -0.5)])
    noisy = x + np.random.default_rng(1).normal(0, 0.02, x.size)
    levels = binarise(noisy, RATE)
    assert not levels[3_000]  # low after the falling edge
    # No invented edges in the long flat stretch.
    assert np.count_nonzero(levels[4_500:] != levels[4_500]) == 0


def test_streaming_decoder_reports_each_packet_once_and_the_stop() -> None:
    data, times = solve_stream(final_ms=5_230)
    x = waveform(data, noise=0.03, offset=-0.2)
    decoder = StackmatAudioDecoder(RATE)
    detector = StopDetector(3)
    chunk = RATE // 20  # 50 ms chunks, as arecord would hand them
    seen, stops = [], []
    for start in range(0, x.size, chunk):
        for packet in decoder.feed(x[start : start + chunk], start_ns=start * 10**9 // RATE):
            seen.append(packet.time_ms)
            stop = detector.update(packet)
            if stop is not None:
                stops.append(stop.time_ms)
    assert seen == times
    assert stops == [5_230]


def test_read_wav_int16(tmp_path: Path) -> None:
    data, times = solve_stream()
    samples = np.clip(waveform(data, noise=0.01) * 20_000, -32_768, 32_767).astype(np.int16)
    path = tmp_path / "stackmat.wav"
    with wave.open(str(path), "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(RATE)
        wav.writeframes(samples.tobytes())
    read, rate = read_wav(path)
    assert rate == RATE
    np.testing.assert_array_equal(read, samples)
    assert [p.time_ms for p in decode_waveform(read, rate).packets] == times
