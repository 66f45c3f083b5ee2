"""forgetting.pipeline.tables: the book's tables, read back as a reader's page reads them."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from docutils import nodes
from docutils.core import publish_doctree
from hypothesis import given
from hypothesis import strategies as st
from myst_parser.parsers.docutils_ import Parser

from forgetting.pipeline.tables import MISSING, TABLE_CLASS, cell_text, header_text, myst_table, raw_tables


def parsed(text: str) -> nodes.table:
    """The one table MyST makes of ``text`` (docutils alone, as Sphinx would parse it)."""
    tree = publish_doctree(text, parser=Parser(), settings_overrides={"report_level": 4, "halt_level": 2})
    tables = list(tree.findall(nodes.table))
    assert len(tables) == 1, tree.pformat()
    return tables[0]


def cells(table: nodes.table) -> list[list[str]]:
    return [[entry.astext() for entry in row.findall(nodes.entry)] for row in table.findall(nodes.row)]


@pytest.mark.parametrize(
    ("name", "header"),
    [
        ("policy", "Policy"),
        ("frr_mean", "FRR mean"),
        ("n_seeds", "n seeds"),
        ("success after shift", "success after shift"),
        ("S0", "S0"),
        ("S_se", "S se"),
        ("aicc", "AICc"),
        ("mean__sd", "Mean sd"),
        ("rho_mean", "ρ mean"),
        ("stale_p_plus_after", "Stale p⁺ after"),
        ("p_plus_min", "p⁺ min"),
        ("terminal_frr_ci95", "Terminal FRR 95 % CI"),
    ],
)
def test_headers_read_as_words(name, header):
    assert header_text(name) == header


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (97, "97"),
        (np.int64(97), "97"),
        (0.5, "0.500"),
        (np.float64(-0.7166), "-0.717"),
        (None, MISSING),
        (math.nan, MISSING),
        (pd.NA, MISSING),
        (True, "yes"),
        (np.bool_(False), "no"),
        (math.inf, "∞"),
        (-math.inf, "−∞"),
        ("kept", "kept"),
    ],
)
def test_each_cell_is_shown_by_its_own_type(value, text):
    assert cell_text(value, 3) == text


def test_a_table_is_numbered_captioned_and_links_its_csv():
    rows = [
        {"policy": "decay", "facts_lost": 0, "frr": 1.0},
        {"policy": "window", "facts_lost": 97, "frr": None},
    ]
    text = myst_table(rows, label="table-x-summary", caption="Two *policies*.", csv="results/x-summary.csv")
    table = parsed(text)
    assert table["ids"] == ["table-x-summary"] and TABLE_CLASS in table["classes"]
    title = next(iter(table.findall(nodes.title)))
    link = '<a class="reference download" href="results/x-summary.csv">results/x-summary.csv</a>'
    assert "".join(n.astext() for n in title.findall(nodes.raw)) == link.replace(
        "results/x-summary.csv</a>", "</a>"
    )
    assert title.astext() == f"Two policies. Data: {link}."  # the caption is read as MyST
    assert cells(table) == [
        ["Policy", "Facts lost", "FRR"],
        ["decay", "0", "1.000"],
        ["window", "97", MISSING],
    ]


def test_a_dataframe_keeps_its_integer_columns_and_takes_column_digits_headers_and_missing():
    frame = pd.DataFrame({"k": [5, 10], "rate": [0.12345, math.nan], "label": ["a", None]})
    text = myst_table(
        frame, label="t", caption="c", digits={"rate": 2}, headers={"rate": "Rate (per turn)"}, missing="none"
    )
    assert cells(parsed(text)) == [
        ["k", "Rate (per turn)", "Label"],
        ["5", "0.12", "a"],
        ["10", "none", "none"],
    ]


def test_a_column_can_take_a_format_spec_and_an_index_becomes_columns():
    frame = pd.DataFrame({"error": [0.000123]}, index=pd.Index(["decay"], name="policy"))
    assert cells(parsed(myst_table(frame, label="t", caption="c", digits={"error": ".1e"}))) == [
        ["Policy", "Error"],
        ["decay", "1.2e-04"],
    ]


def test_columns_choose_and_order_what_is_shown():
    text = myst_table([{"a": 1, "b": 2, "c": 3}], label="t", caption="c", columns=["c", "a"])
    assert cells(parsed(text)) == [["C", "A"], ["3", "1"]]


def test_a_line_break_in_a_cell_is_a_space():
    assert cells(parsed(myst_table([{"a": "two\nlines"}], label="t", caption="c"))) == [["A"], ["two lines"]]


def test_rows_with_different_keys_give_every_column_in_first_seen_order():
    text = myst_table([{"a": 1}, {"b": 2.0, "a": 3}], label="t", caption="c")
    assert cells(parsed(text)) == [["A", "B"], ["1", MISSING], ["3", "2.000"]]


texts = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12)


@given(
    st.lists(
        st.tuples(texts, st.integers(-(10**6), 10**6), st.floats(-1e6, 1e6, allow_nan=False)),
        min_size=1,
        max_size=5,
    ),
    st.integers(0, 6),
)
def test_every_cell_reads_back_as_its_text_whatever_its_characters(rows, precision):
    """Punctuation of every kind (a leading minus, ``|``, backticks, braces) is shown, never read as Markdown."""
    table = [{"name": name, "count": count, "value": value} for name, count, value in rows]
    expected = [[name.strip(), str(count), f"{value:.{precision}f}"] for name, count, value in rows]
    assert cells(parsed(myst_table(table, label="t", caption="c", precision=precision)))[1:] == expected


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"caption": " "}, "caption is empty"),
        ({"precision": -1}, r"precision=-1; allowed: an integer >= 0"),
        ({"precision": 2.5}, r"precision=2.5; allowed: an integer >= 0 or a format spec"),
        ({"digits": {"a": "%d"}}, r"a='%d' is no format spec for a float"),
        ({"digits": {"nope": 2}}, r"no column \['nope'\]"),
        ({"headers": {"nope": "N"}}, r"no column \['nope'\]"),
        ({"columns": ["b"]}, r"columns=\['b'\]; allowed: distinct names among \['a'\]"),
        ({"columns": ["a", "a"]}, r"columns=\['a', 'a'\]; allowed"),
        ({"columns": []}, r"columns=\[\]; allowed"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        myst_table([{"a": 1}], **{"label": "t", "caption": "c", **kwargs})


def test_a_table_without_columns_is_refused():
    with pytest.raises(ValueError, match="has no columns"):
        myst_table([], label="t", caption="c")


def test_a_dataframe_left_as_a_cell_s_result_is_found():
    frame = pd.DataFrame({"a": [1]})
    markdown = myst_table(frame, label="t", caption="c")

    def cell(data):
        return {"cell_type": "code", "outputs": [{"output_type": "execute_result", "data": data}]}

    notebook = {
        "cells": [
            {"cell_type": "markdown", "source": "<table></table>"},  # prose may hold HTML
            cell({"text/html": frame._repr_html_(), "text/plain": repr(frame)}),
            cell({"text/markdown": markdown, "text/plain": "<IPython.core.display.Markdown object>"}),
            cell({"text/html": frame.style.to_html()}),
        ]
    }
    assert raw_tables(notebook) == [1, 3]
