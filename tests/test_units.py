import pytest

from sim.units import format_size, parse_duration_s, parse_size_bytes


@pytest.mark.parametrize("text,expected", [
    ("16K", 16384), ("3G", 3 << 30), ("128M", 128 << 20), ("512", 512), ("1.5K", 1536),
    ("4KiB", 4096), ("2KB", 2048), (4096, 4096), ("1T", 1 << 40),
])
def test_sizes(text, expected):
    assert parse_size_bytes(text) == expected


@pytest.mark.parametrize("bad", ["", "abc", "-1K", "1.3", "16Q", True, None, [1], -5, 1.5])
def test_bad_sizes(bad):
    with pytest.raises(ValueError):
        parse_size_bytes(bad)


@pytest.mark.parametrize("text,expected", [
    ("250ms", 0.25), ("2s", 2.0), ("1min", 60.0), ("100us", 1e-4), (3, 3.0), ("0.5", 0.5), ("1h", 3600.0),
])
def test_durations(text, expected):
    assert parse_duration_s(text) == pytest.approx(expected)


@pytest.mark.parametrize("bad", ["fast", "10 parsecs", -1, True, "ms"])
def test_bad_durations(bad):
    with pytest.raises(ValueError):
        parse_duration_s(bad)


def test_format_size():
    assert format_size(16384) == "16K"
    assert format_size(3 << 30) == "3G"
    assert format_size(1536) == "1536"
