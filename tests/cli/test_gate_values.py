"""Class 2 of issue 12: values that would switch a gate off (NaN thresholds), make it
always trip (negative ones) or that Blender cannot take (frames beyond its range) are
refused with exit 2 and one line, before the file is even opened. (The parsers
themselves are property-tested in tests/model: test_inspection, test_frames.)"""

from __future__ import annotations

import pytest
from cli_runner import run_cli


@pytest.mark.parametrize(
    "option, value, message",
    [
        ("--fail-on-shear", "nan", "expected a finite number >= 0"),
        ("--fail-on-shear", "inf", "expected a finite number >= 0"),
        ("--fail-on-shear", "-1", "expected a finite number >= 0"),
        ("--shear-threshold", "nan", "expected a finite number >= 0"),
        ("--corner-threshold", "-0.5", "expected a finite number >= 0"),
        ("--shear-threshold", "lots", "is not a number"),
        ("--frame", "2147483648", "outside Blender's frames"),
        ("--frame", "-2147483649", "outside Blender's frames"),
        ("--frame", "1.5", "expected a whole number"),
    ],
)
def test_bad_gate_values_exit_2_with_one_line(demo_dir, tmp_path, option, value, message):
    out = tmp_path / "r.json"
    result = run_cli("report", demo_dir / "demo.blend", option, value, "--json", out)
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and message in result.stderr
    assert "nodes," not in result.stdout and not out.exists()  # nothing was inspected


def test_zero_is_a_valid_gate(demo_dir):
    result = run_cli("report", demo_dir / "demo.blend", "--fail-on-shear", "0")
    assert result.returncode == 1  # the demo is sheared: a zero tolerance trips
