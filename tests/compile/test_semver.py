import pytest

from secant.compile.semver import VersionRange, format_version, parse_version


def test_parse_version_forms() -> None:
    assert parse_version("0.8.19") == (0, 8, 19)
    assert parse_version("v0.4.26") == (0, 4, 26)
    assert parse_version("0.8.37+commit.f401782d.Emscripten.clang") == (0, 8, 37)
    assert format_version((0, 7, 6)) == "0.7.6"
    with pytest.raises(ValueError):
        parse_version("latest")


@pytest.mark.parametrize(
    ("expr", "inside", "outside"),
    [
        ("^0.4.24", ["0.4.24", "0.4.26"], ["0.4.23", "0.5.0"]),
        ("~0.4.24", ["0.4.25"], ["0.5.0", "0.4.23"]),
        ("^0.8.0", ["0.8.0", "0.8.37"], ["0.7.6", "0.9.0"]),
        (">=0.4.22 <0.6.0", ["0.4.22", "0.5.17"], ["0.6.0", "0.4.21"]),
        (">= 0.5.0 < 0.7.0", ["0.6.12"], ["0.7.0"]),
        ("0.5.17", ["0.5.17"], ["0.5.16", "0.5.18"]),
        ("=0.6.12", ["0.6.12"], ["0.6.11"]),
        ("0.4", ["0.4.0", "0.4.26"], ["0.5.0"]),
        ("0.7.x", ["0.7.6"], ["0.8.0"]),
        (">0.5.0", ["0.5.1"], ["0.5.0"]),
        ("<=0.6.2", ["0.6.2"], ["0.6.3"]),
        ("^0.5.0 || ^0.7.0", ["0.5.3", "0.7.1"], ["0.6.0"]),
        ("0.5.1 - 0.5.3", ["0.5.1", "0.5.3"], ["0.5.4", "0.5.0"]),
        ("*", ["0.4.0", "0.8.1"], []),
        ("^0.0.3", ["0.0.3"], ["0.0.4"]),
    ],
)
def test_ranges(expr: str, inside: list[str], outside: list[str]) -> None:
    rng = VersionRange.parse(expr)
    for text in inside:
        assert rng.contains(parse_version(text)), (expr, text)
    for text in outside:
        assert not rng.contains(parse_version(text)), (expr, text)


def test_intersection_and_newest() -> None:
    rng = VersionRange.parse(">=0.6.0 <0.9.0").intersect(VersionRange.parse("^0.8.0"))
    versions = {parse_version(v) for v in ["0.6.12", "0.8.19", "0.8.26", "0.9.1"]}
    assert rng.newest(versions) == (0, 8, 26)
    empty = VersionRange.parse("^0.4.0").intersect(VersionRange.parse("^0.8.0"))
    assert empty.intervals == ()
    assert empty.newest(versions) is None
