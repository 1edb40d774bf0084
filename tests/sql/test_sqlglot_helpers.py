"""The adapter's shortcuts around sqlglot give what sqlglot's own calls give: a node's children
(``child_nodes`` against ``iter_expressions``) and a type's wire spelling (``wire_type``, remembered per type
name, against writing the type each time)."""

from __future__ import annotations

from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from service.sql.common import child_nodes, wire_type, written_type

TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch" / "queries"


@pytest.mark.parametrize("query", sorted(p.name for p in TPCH.glob("q*.sql")))
def test_child_nodes_are_iter_expressions_in_order(query: str) -> None:
    tree = sqlglot.parse_one((TPCH / query).read_text(), read="spark")
    for node in tree.walk():
        assert child_nodes(node) == list(node.iter_expressions())
        assert all(a is b for a, b in zip(child_nodes(node), node.iter_expressions(), strict=True))


@pytest.mark.parametrize("kind", list(exp.DataType.Type))
def test_a_type_without_parameters_is_spelled_as_written_every_time(kind: exp.DataType.Type) -> None:
    dtype = exp.DataType(this=kind)
    try:
        expected = written_type(dtype)
    except Exception:  # noqa: BLE001 - a type Spark's generator cannot write: nothing to remember
        pytest.skip(f"{kind} is not written in spark")
    assert wire_type(dtype) == expected
    assert wire_type(exp.DataType(this=kind, nested=False, expressions=None)) == expected  # remembered


@pytest.mark.parametrize("text", ["decimal(15, 2)", "varchar(3)", "array<int>", "struct<a: int, b: string>"])
def test_a_type_with_parameters_is_written_each_time(text: str) -> None:
    dtype = exp.DataType.build(text, dialect="spark")
    assert wire_type(dtype) == written_type(dtype)
    assert wire_type(dtype) == written_type(dtype)
