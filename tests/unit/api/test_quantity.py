from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.api import (
    ERR_FORMAT_WRONG,
    ERR_NUMERIC,
    ERR_SUFFIX,
    FieldError,
    format_bytes,
    format_milli_cpu,
    int_value,
    milli_value,
    parse_quantity,
)

FIELD = "spec.containers[0].resources.requests[cpu]"


@pytest.mark.parametrize(
    ("value", "exact", "milli", "units"),
    [
        ("100m", Fraction(1, 10), 100, 1),
        ("1.5", Fraction(3, 2), 1500, 2),
        ("2", Fraction(2), 2000, 2),
        ("1Gi", Fraction(2**30), 2**30 * 1000, 1073741824),
        ("500Mi", Fraction(500 * 2**20), 500 * 2**20 * 1000, 524288000),
        ("1e3", Fraction(1000), 1_000_000, 1000),
        ("1E3", Fraction(1000), 1_000_000, 1000),
        ("1e+3", Fraction(1000), 1_000_000, 1000),
        ("25E-2", Fraction(1, 4), 250, 1),
        ("1k", Fraction(1000), 1_000_000, 1000),
        ("1E", Fraction(10**18), 10**21, 10**18),
        ("0.0001", Fraction(1, 10_000), 1, 1),
        ("1.5Gi", Fraction(3 * 2**29), 3 * 2**29 * 1000, 3 * 2**29),
        (".5Ki", Fraction(512), 512_000, 512),
        ("0.1n", Fraction(1, 10**9), 1, 1),  # finer than nano rounds up to 1n
        ("1e-12", Fraction(1, 10**9), 1, 1),
        ("-1", Fraction(-1), -1000, -1),
        ("-1.5", Fraction(-3, 2), -1500, -2),
        ("+5", Fraction(5), 5000, 5),
        ("0", Fraction(0), 0, 0),
        ("000", Fraction(0), 0, 0),
        ("1.", Fraction(1), 1000, 1),
        (".", Fraction(0), 0, 0),  # upstream's scanner accepts these degenerate forms
        ("k", Fraction(0), 0, 0),
        ("8Ei", Fraction(2**63 - 1), (2**63 - 1) * 1000, 2**63 - 1),  # binary SI is capped at int64
        ("1e4294967296", Fraction(1), 1000, 1),  # Go truncates the exponent to int32
        (3, Fraction(3), 3000, 3),
        (0, Fraction(0), 0, 0),
        (-2, Fraction(-2), -2000, -2),
        (0.5, Fraction(1, 2), 500, 1),
    ],
)
def test_parse_valid(value: str | int | float, exact: Fraction, milli: int, units: int) -> None:
    assert parse_quantity(value) == exact
    assert milli_value(value) == milli
    assert int_value(value) == units


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ("", ERR_FORMAT_WRONG),
        (" 1", ERR_FORMAT_WRONG),
        ("1 Gi", ERR_FORMAT_WRONG),
        ("1.2.3", ERR_FORMAT_WRONG),
        ("1KB", ERR_FORMAT_WRONG),
        ("abc", ERR_FORMAT_WRONG),
        ("1e3e", ERR_FORMAT_WRONG),
        (float("inf"), ERR_FORMAT_WRONG),
        ("--1", ERR_SUFFIX),
        ("1Gm", ERR_SUFFIX),
        ("1e", ERR_SUFFIX),
        ("1K", ERR_SUFFIX),
        ("1ee3", ERR_SUFFIX),
        ("1e99999999999999999999", ERR_SUFFIX),
        ("Pi", ERR_NUMERIC),
        ("e-10", ERR_NUMERIC),
    ],
)
def test_parse_invalid(value: str | float, detail: str) -> None:
    with pytest.raises(FieldError) as caught:
        milli_value(value, field=FIELD)
    assert caught.value.field == FIELD
    assert caught.value.value == value
    assert caught.value.detail == detail


def test_invalid_message_text() -> None:
    with pytest.raises(FieldError) as caught:
        parse_quantity("abc", field=FIELD)
    assert str(caught.value) == (
        'spec.containers[0].resources.requests[cpu]: Invalid value: "abc": quantities must match '
        "the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


@pytest.mark.parametrize(
    ("milli", "text"),
    [(0, "0"), (1, "1m"), (100, "100m"), (1500, "1500m"), (2000, "2"), (1_000_000, "1k"), (-1500, "-1500m")],
)
def test_format_milli_cpu(milli: int, text: str) -> None:
    assert format_milli_cpu(milli) == text
    assert milli_value(text) == milli


@pytest.mark.parametrize(
    ("size", "text"),
    [
        (0, "0"),
        (512, "512"),
        (1000, "1k"),  # under 1024 upstream prints DecimalSI
        (1023, "1023"),
        (1024, "1Ki"),
        (1536, "1536"),
        (524288000, "500Mi"),
        (1073741824, "1Gi"),
        (-2048, "-2Ki"),
    ],
)
def test_format_bytes(size: int, text: str) -> None:
    assert format_bytes(size) == text
    assert int_value(text) == size


def test_format_bytes_beyond_exbibytes_stays_in_ei() -> None:
    assert format_bytes(2**70) == "1024Ei"


@given(st.integers(min_value=0, max_value=10**15))
def test_milli_round_trip(m: int) -> None:
    assert milli_value(f"{m}m") == m
    assert milli_value(format_milli_cpu(m)) == m


@given(st.integers(min_value=0, max_value=10**12))
def test_kibibytes(value: int) -> None:
    assert int_value(f"{value}Ki") == value * 1024
    assert int_value(format_bytes(value * 1024)) == value * 1024
