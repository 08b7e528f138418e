from datetime import date, datetime
from decimal import Decimal

from tdebench.workloads.tpch.answers import (
    COLUMNS, compare_answers, normalize_row, read_answer_csv, reference_dir, write_answer_csv)
from tdebench.workloads.tpch.params import QUERY_NUMBERS


def test_normalize_row():
    row = [None, date(1995, 3, 5), datetime(1995, 3, 5, 12, 0), Decimal("1.005"), 2.675, 7, b"abc ",
           "  Brand#12  ", Decimal("-0.004"), Decimal("1995"), Decimal("64.0")]
    assert normalize_row(row) == ["", "1995-03-05", "1995-03-05", "1.01", "2.67", "7", "abc", "Brand#12",
                                  "0.00", "1995", "64.00"]


def test_csv_round_trip(tmp_path):
    path = tmp_path / "sub" / "q01.csv"
    write_answer_csv(path, ["L_RETURNFLAG", "Sum_Qty", "avg_yearly"], [("A ", Decimal("12.345"), None)])
    assert read_answer_csv(path) == (["l_returnflag", "sum_qty", "avg_yearly"], [["A", "12.35", ""]])


def test_equal_answers():
    rows = [["A", "F", "100.00", "1.00", "2.00", "3.00", "25.50", "100.00", "0.05", "10"]]
    assert compare_answers(1, rows, rows) == []


def test_raw_values_compare_with_text():
    expected = [["1995-03-15", "1234.50"]]
    assert compare_answers(99, expected, [(date(1995, 3, 15), 1234.5)]) == []


def test_count_off_by_one_fails():
    problems = compare_answers(4, [["1-URGENT", "100"]], [["1-URGENT", "101"]])
    assert problems == ["q04 row 1 col order_count: expected 100, got 101"]


def test_sum_within_100_passes_and_off_by_150_fails():
    assert compare_answers(6, [["1000.00"]], [["1099.99"]]) == []
    assert compare_answers(6, [["1000.00"]], [["1150.00"]]) == [
        "q06 row 1 col revenue: expected 1000.00, got 1150.00"]


def test_string_differing_in_case_fails_but_blanks_are_ignored():
    assert compare_answers(20, [["Supplier#1", "abc"]], [["Supplier#1 ", " abc"]]) == []
    assert compare_answers(20, [["Supplier#1", "abc"]], [["supplier#1", "abc"]]) == [
        "q20 row 1 col s_name: expected Supplier#1, got supplier#1"]


def test_average_within_one_percent():
    assert compare_answers(14, [["15.49"]], [[15.62]]) == []
    assert compare_answers(14, [["15.49"]], [[15.66]]) != []
    assert compare_answers(14, [["15.49"]], [[15.3]]) != []


def test_exact_decimal_singleton():
    row = ["c", "1", "2", "2000-01-01", "439687.23", "305.00"]
    assert compare_answers(18, [row], [row[:4] + ["439687.23", "350"]]) == []
    assert compare_answers(18, [row], [row[:4] + ["439687.24", "305"]]) == [
        "q18 row 1 col o_totalprice: expected 439687.23, got 439687.24"]


def test_years_compare_numerically():
    assert compare_answers(8, [["1995.00", "0.03"]], [[1995, 0.0301]]) == []


def test_null_only_equals_null():
    assert compare_answers(17, [[""]], [[None]]) == []
    assert compare_answers(17, [[""]], [[Decimal("0.00")]]) == ["q17 row 1 col avg_yearly: expected NULL, got 0.00"]


def test_row_count_mismatch():
    assert compare_answers(6, [["1"]], []) == ["q06: expected 1 rows, got 0"]


def test_unlisted_numeric_column_default():
    assert compare_answers(99, [["100.00"]], [["100.90"]]) == []
    assert compare_answers(99, [["100.00"]], [["102.00"]]) != []


def test_mismatch_list_is_short():
    expected = [["x", str(i)] for i in range(20)]
    actual = [["x", str(i + 1)] for i in range(20)]
    problems = compare_answers(21, expected, actual)
    assert len(problems) == 6 and problems[-1] == "q21: ... and 15 more differences"


def test_reference_answers_bundled():
    folder = reference_dir(0.01)
    assert folder is not None and reference_dir(123.0) is None
    for number in QUERY_NUMBERS:
        columns, rows = read_answer_csv(folder / f"q{number:02d}.csv")
        assert columns == [name for name, _ in COLUMNS[number]]
        assert rows
    assert read_answer_csv(folder / "q17.csv")[1] == [[""]]
