"""The shipped forgetting data: what the files hold, and every check on load."""

import pytest

from forgetting.pipeline.paths import repo_root
from forgetting.studies.curves.savings_data import (
    BENCHMARK_FILE,
    SAVINGS_FILES,
    load_curve_benchmark,
    load_savings,
    parse_savings,
    savings_table,
)

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


CORRECTED = "delay_hours,savings_percent,probable_error_percent,formula_t_minutes\n"


def test_ebbinghaus_exact_times_are_his_and_reproduce_his_calculated_column():
    """p. 78: t = 20, 64, 526, 1440, 2x1440, 6x1440, 31x1440 minutes, and k = 1.84, c = 1.25 at
    those t give his calculated column (he worked with log tables, so to within 0.1)."""
    from forgetting.curves.families import ebbinghaus_log_savings

    curve = load_savings(ROOT / SAVINGS_FILES["ebbinghaus1885"])
    assert curve.formula_t_minutes == (20.0, 64.0, 526.0, 1440.0, 2880.0, 8640.0, 44640.0)
    calculated = [ebbinghaus_log_savings(t, 1.84, 1.25) for t in curve.formula_t_minutes]
    assert calculated == pytest.approx([57.0, 46.7, 34.5, 30.4, 28.1, 24.9, 21.2], abs=0.1)
    # the delay after the end of learning is t - 1 minutes
    assert [round(60 * h, 9) for h in curve.corrected_delay_hours] == [t - 1 for t in curve.formula_t_minutes]


def test_without_exact_times_the_corrected_delays_are_the_nominal_ones():
    curve = parse_savings(HEADER + "1,50,1\n2,40,1\n3,30,1\n", "plain")
    assert curve.formula_t_minutes is None
    assert curve.corrected_delay_hours == curve.delay_hours == (1.0, 2.0, 3.0)


def test_savings_table_lists_nominal_exact_and_fitted_delays():
    curve = parse_savings(CORRECTED + "1,50,1,61\n2,40,1,120\n3,30,1,181\n", "exact")
    rows = savings_table(curve)
    assert [r["formula_t_minutes"] for r in rows] == [61.0, 120.0, 181.0]
    assert [r["fit_delay_hours"] for r in rows] == [1.0, round(119 / 60, 6), 3.0]
    assert [r["delay_hours"] for r in rows] == [1.0, 2.0, 3.0]
    plain = savings_table(parse_savings(HEADER + "1,50,1\n2,40,1\n3,30,1\n", "plain"))
    assert [r["formula_t_minutes"] for r in plain] == [None] * 3


@pytest.mark.parametrize(
    "text, message",
    [
        (CORRECTED + "1,50,1,0.5\n2,40,1,121\n3,30,1,181\n", "formula_t_minutes must be >= 1"),
        (CORRECTED + "1,50,1,61\n2,40,1,61\n3,30,1,181\n", "formula_t_minutes must increase strictly"),
        (CORRECTED + "1,50,1,121\n2,40,1,181\n3,30,1,241\n", "within 10% of 60 \\* delay_hours = 60"),
        (CORRECTED + "1,50,1\n2,40,1,121\n3,30,1,181\n", "expected 4 fields"),
        ("delay_hours,savings_percent,probable_error_percent,t\n1,50,1,61\n", "header must be"),
    ],
)
def test_bad_exact_times_are_refused(text, message):
    with pytest.raises(ValueError, match=message):
        parse_savings(text, "bad", "bad.csv")
