"""The shipped forgetting data: what the files hold, and every check on load."""

import pytest

from forgetting.decay.savings_data import (
    BENCHMARK_FILE,
    SAVINGS_FILES,
    load_curve_benchmark,
    load_savings,
    parse_savings,
)
from forgetting.pipeline.paths import repo_root

ROOT = repo_root()
HEADER = "delay_hours,savings_percent,probable_error_percent\n"


def test_ebbinghaus_file_holds_his_table():
    curve = load_savings(ROOT / SAVINGS_FILES["ebbinghaus1885"])
    assert curve.name == "ebbinghaus1885"
    assert round(60 * curve.delay_hours[0]) == 20  # the first delay, a third of an hour
    assert curve.delay_hours[1:] == (1.0, 8.8, 24.0, 48.0, 144.0, 744.0)
    assert [round(100 * s, 1) for s in curve.savings] == [58.2, 44.2, 35.8, 33.7, 27.8, 25.4, 21.1]
    assert curve.delay_days[-1] == 31.0


def test_benchmark_file_loads_with_numbers():
    rows = load_curve_benchmark(ROOT / BENCHMARK_FILE)
    assert {row["algorithm"] for row in rows} == {"FSRS v4", "FSRS-4.5"}
    assert all(isinstance(row["log_loss"], float) for row in rows)


@pytest.mark.parametrize(
    "text, message",
    [
        ("delay,savings\n1,2\n", "header must be"),
        (HEADER + "1,50,1\n2,40,1\n", "at least 3 data rows"),
        (HEADER + "1,50,1\n1,40,1\n2,30,1\n", "increase strictly"),
        (HEADER + "0,50,1\n1,40,1\n2,30,1\n", "delay_hours must be > 0"),
        (HEADER + "1,150,1\n2,40,1\n3,30,1\n", r"savings_percent must be in \[0, 100\]"),
        (HEADER + "1,0.5,1\n2,-0.4,1\n3,0.3,1\n", r"savings_percent must be in \[0, 100\]"),
        (HEADER + "1,50,-1\n2,40,1\n3,30,1\n", "probable_error_percent must be >= 0"),
        (HEADER + "1,fifty,1\n2,40,1\n3,30,1\n", "savings_percent must be a number"),
        (HEADER + "1,nan,1\n2,40,1\n3,30,1\n", "must be finite"),
        (HEADER + "1,50\n2,40,1\n3,30,1\n", "expected 3 fields"),
    ],
)
def test_bad_files_are_refused_with_line_and_field(text, message):
    with pytest.raises(ValueError, match=message):
        parse_savings(text, "bad", "bad.csv")


def test_missing_file_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="cannot be read"):
        load_savings(tmp_path / "absent.csv")


@pytest.mark.parametrize(
    "line, message",
    [
        ("FSRS,power,0,reviews,0.3,0.05,10", "decay must be > 0"),
        ("FSRS,power,0.5,reviews,1.3,0.05,10", "log_loss must be"),
        ("FSRS,power,0.5,reviews,0.3,0.05,0", "users must be >= 1"),
        ("FSRS,power,0.5,reviews,0.3,0.05", "expected 7 fields"),
    ],
)
def test_bad_benchmark_rows_are_refused(tmp_path, line, message):
    path = tmp_path / "bench.csv"
    path.write_text("algorithm,curve,decay,weighting,log_loss,rmse_bins,users\n" + line + "\n")
    with pytest.raises(ValueError, match=message):
        load_curve_benchmark(path)
