"""A SQL request is parsed once: the service reads its tables (for the statistics store) from the same parse the
adapter then translates, and the answer is the one a service without a store gives."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlglot.parser import Parser

from service.optimize import OptimizeInput, OptimizeService
from service.statistics import StatisticsStore

TPCH = Path(__file__).resolve().parents[2] / "bench" / "tpch"
CATALOG = json.loads((TPCH / "catalog.json").read_text())


def without_ids(answer: dict) -> dict:
    return {k: v for k, v in answer.items() if k not in ("request_id", "statistics")}


@pytest.mark.parametrize("query", ["q01", "q21"])
def test_a_sql_request_is_parsed_once_with_a_store(query: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sql = (TPCH / "queries" / f"{query}.sql").read_text()
    expected = OptimizeService().optimize(OptimizeInput(sql=sql, catalog=CATALOG))
    parses: list[str] = []
    real = Parser.parse

    def counted(self: Parser, raw_tokens: list, sql: str | None = None) -> list:
        parses.append(sql or "")
        return real(self, raw_tokens, sql)

    monkeypatch.setattr(Parser, "parse", counted)
    with_store = OptimizeService(StatisticsStore(tmp_path / "pushdown.db", tmp_path / "samples"))
    answer = with_store.optimize(OptimizeInput(sql=sql, catalog=CATALOG))
    assert parses.count(sql) == 1  # its tables and its plan from one parse (the answer's hints need none here)
    assert without_ids(answer) == without_ids(expected)


def test_sql_that_does_not_parse_is_still_reported_by_the_adapter(tmp_path: Path) -> None:
    from service.errors import InputError

    with_store = OptimizeService(StatisticsStore(tmp_path / "pushdown.db", tmp_path / "samples"))
    with pytest.raises(InputError) as refused:
        with_store.optimize(OptimizeInput(sql="SELECT FROM WHERE", catalog=CATALOG))
    assert refused.value.code == "parse_error"
