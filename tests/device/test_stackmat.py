"""Stackmat packets: encoding, decoding, a byte stream with damage, and stop detection."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from judgecam.device.stackmat import (
    StackmatPacket,
    StackmatParser,
    StopDetector,
    checksum,
    decode_packet,
    encode_packet,
)


def test_gen3_packet_layout_matches_the_protocol() -> None:
    # 1:23.45 stopped: status S, digits 1 2 3 4 5, checksum 64 + 15 = 79 ('O'), CR LF.
    assert encode_packet("S", 83_450, generation=3) == b"S12345O\r\n"


def test_gen4_packet_layout_matches_the_protocol() -> None:
    # 0:09.876 running: digits 0 0 9 8 7 6, checksum 64 + 30 = 94 ('^').
    assert encode_packet(" ", 9_876, generation=4) == b" 009876^\r\n"


def test_checksum_is_64_plus_digit_sum() -> None:
    assert checksum([0, 0, 0, 0, 0]) == 64
    assert checksum([9, 5, 9, 9, 9, 9]) == 64 + 50


@given(
    status=st.sampled_from("IA SLRC"),
    time_ms=st.integers(0, 9 * 60_000 + 59_999),
    generation=st.sampled_from([3, 4]),
)
def test_decode_inverts_encode(status: str, time_ms: int, generation: int) -> None:
    if generation == 3:
        time_ms -= time_ms % 10  # gen 3 shows hundredths only
    packet = decode_packet(encode_packet(status, time_ms, generation), timestamp_ns=7)
    assert packet == StackmatPacket(status, time_ms, generation, 7)


@pytest.mark.parametrize(
    "data",
    [
        b"S12345P\r\n",  # checksum off by one
        b"X12345O\r\n",  # unknown status
        b"S12A45O\r\n",  # not a digit
        b"S1234O\r\n",  # too short
        b"S12345O\n\r",  # wrong terminator
        b"S17345S\r\n",  # 77 seconds: checksum right, time impossible
    ],
)
def test_damaged_packets_are_rejected(data: bytes) -> None:
    assert decode_packet(data) is None


def test_parser_resynchronises_on_garbage_dropped_bytes_and_bad_checksums() -> None:
    good = [encode_packet(" ", t, 4) for t in (1_000, 1_100, 1_200, 1_300)]
    damaged = bytearray(good[1])
    damaged[4] ^= 0x01  # a flipped bit in a digit: checksum no longer matches
    dropped = good[2][:3] + good[2][4:]  # one byte lost on the line
    stream = b"\x00\xffgarbage" + good[0][5:] + good[0] + bytes(damaged) + dropped + good[3]
    parser = StackmatParser()
    # Fed in awkward pieces, as a serial port hands them over.
    packets = []
    for start in range(0, len(stream), 7):
        packets += parser.feed(stream[start : start + 7], timestamp_ns=start)
    assert [p.time_ms for p in packets] == [1_000, 1_300]
    assert parser.rejected == 3  # the cut first packet, the corrupted one, the short one


def test_parser_reads_gen3_and_gen4_mixed() -> None:
    parser = StackmatParser()
    stream = (
        encode_packet("A", 0, 3) + encode_packet(" ", 12_340, 4) + encode_packet("S", 12_340, 3)
    )
    packets = parser.feed(stream)
    assert [(p.generation, p.status, p.time_ms) for p in packets] == [
        (3, "A", 0),
        (4, " ", 12_340),
        (3, "S", 12_340),
    ]


def _packets(displays: list[tuple[str, int]], period_ns: int = 100_000_000) -> list[StackmatPacket]:
    return [
        StackmatPacket(status, time_ms, 4, i * period_ns)
        for i, (status, time_ms) in enumerate(displays)
    ]


def _stops(displays: list[tuple[str, int]]) -> list[tuple[int, int]]:
    detector = StopDetector(confirm_packets=3)
    stops = []
    for packet in _packets(displays):
        stop = detector.update(packet)
        if stop is not None:
            stops.append((stop.time_ms, stop.timestamp_ns))
    return stops


def test_stop_is_reported_once_with_the_displayed_time() -> None:
    running = [(" ", t) for t in range(0, 1_000, 100)]  # 0.0 .. 0.9 s, one packet per 100 ms
    stopped = [("S", 950)] * 6 + [("C", 950)] * 4  # then hands on the pads: still the same time
    stops = _stops([("I", 0), *running, *stopped])
    # The last running packet (0.900) arrived at 1.0 s on the station clock; the timer ran
    # 50 ms more, so it stopped at 1.05 s.
    assert stops == [(950, 1_050_000_000)]


def test_a_single_stopped_packet_does_not_decide() -> None:
    running = [(" ", t) for t in range(100, 600, 100)]
    stops = _stops([*running, ("S", 550), ("S", 550)])  # only two: not yet confirmed
    assert stops == []


def test_no_stop_without_running_first() -> None:
    # A timer switched on showing an old time, hands on and off: never a stop.
    assert _stops([("I", 0), ("S", 4_560), ("S", 4_560), ("L", 4_560), ("S", 4_560)] * 3) == []


def test_status_byte_unreliable_time_still_decides() -> None:
    running = [(" ", t) for t in range(100, 600, 100)]
    frozen = [(" ", 560)] * 6  # status says running but the time no longer increases
    assert [t for t, _ in _stops([*running, *frozen])] == [560]


def test_reset_rearms_for_the_next_solve() -> None:
    first = [(" ", t) for t in range(100, 400, 100)] + [("S", 350)] * 3
    second = [("I", 0)] + [(" ", t) for t in range(100, 700, 100)] + [("S", 640)] * 3
    assert [t for t, _ in _stops(first + second)] == [350, 640]


def test_dropped_packets_while_running_do_not_fake_a_stop() -> None:
    # Packets lost while running: the time jumps (as the clock does), never repeats: no stop.
    detector = StopDetector(3)
    times = (100, 200, 500, 600, 1_200, 1_300)
    packets = [StackmatPacket(" ", t, 4, t * 1_000_000) for t in times]
    assert [detector.update(p) for p in packets] == [None] * len(times)


def test_dropped_packets_after_the_stop_still_give_the_stop() -> None:
    detector = StopDetector(3)
    packets = [StackmatPacket(" ", t, 4, t * 1_000_000) for t in (100, 200, 300)]
    packets += [StackmatPacket("S", 333, 4, t * 1_000_000) for t in (400, 700, 1_200)]
    stops = [s for s in map(detector.update, packets) if s is not None]
    assert [(s.time_ms, s.timestamp_ns) for s in stops] == [(333, 333_000_000)]


def test_confirm_packets_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        StopDetector(0)
