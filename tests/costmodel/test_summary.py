"""The per-predicate summary, and every decision of every TPC-H query recomputed from the numbers it logs."""

from __future__ import annotations

import copy
import json
import math
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from costmodel.operator_paths import _EXPLAIN_LINE, explain_line, operators, plan_operators
from costmodel.summary import INFERRED_REASONS, comparisons, deciding, group, summarize
from service.optimize import OptimizeInput, OptimizeService
from tests.service.test_cli import REPO, pushdown_command

TPCH = REPO / "bench" / "tpch"
QUERIES = sorted((TPCH / "queries").glob("q*.sql"))
CATALOG = json.loads((TPCH / "catalog.json").read_text())


def low_cardinality_strings(catalog: dict[str, Any]) -> dict[str, Any]:
    """TPC-H's catalog with two distinct values in every string column that has statistics: its equality filters
    then remove half the rows, and the predicates derived from q07's OR stop paying (``derived_not_beneficial``)."""
    changed = copy.deepcopy(catalog)
    for table in changed["tables"].values():
        for stats in table.get("column_stats", {}).values():
            if "ndv" in stats and isinstance(stats.get("min"), str):
                stats["ndv"] = 2
    return changed


CATALOGS = {"tpch": CATALOG, "low_cardinality": low_cardinality_strings(CATALOG)}


def answer(query: Path, mode: str = "cost", catalog: str = "tpch") -> dict[str, Any]:
    request = OptimizeInput(sql=query.read_text(), catalog=CATALOGS[catalog], options={"mode": mode})
    return OptimizeService().optimize(request)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-5, abs_tol=2e-6)


@pytest.mark.parametrize("catalog", CATALOGS)
@pytest.mark.parametrize("query", QUERIES, ids=[q.stem for q in QUERIES])
def test_every_decision_recomputes_from_its_logged_numbers(query: Path, catalog: str) -> None:
    body = answer(query, catalog=catalog)
    assert body["decisions"], query.stem
    for rows in group(body["decisions"]):
        for i, row in enumerate(rows):
            # the labelled terms are what they say they are
            if "lhs" in row:
                assert close(row["lhs"], 1 - row["r"]) and close(row["rhs"], row["p"] * row["r1"]), row
            if "selectivity" in row and "p" in row:
                assert close(row["p"], 1 - row["selectivity"]), row
            decided = deciding(row, rows[i + 1] if i + 1 < len(rows) else None)
            reason = row["reason"]
            if decided is None:  # structural: legality, a scan's filters, the mode
                assert row["action"] == "blocked" or reason in ("into_scan", "mode_always", "mode_never"), row
                if row["action"] == "blocked":
                    assert row.get("detail"), row
                continue
            # recompute the comparison from the logged terms alone, not from the summary's verdict
            terms = decided["terms"]
            if decided["kind"] == "cost":
                pushed, kept = terms["cost if pushed"], terms["cost if kept"]
                holds = pushed <= kept + 1e-9 * max(1.0, abs(kept))
            elif decided["kind"] == "benefit":
                holds = terms["1 - r"] <= terms["p·r1"] + 1e-12
            else:
                without = terms["cost without"]
                holds = terms["cost with it"] < without - 1e-9 * max(1.0, abs(without))
            assert holds == (row["action"] == "pushed"), (query.stem, row, decided["text"])
            if reason == "beneficial" and decided["kind"] == "cost":
                assert row["lhs"] <= row["rhs"] + 1e-12  # the label agrees with the benefit model too
            if reason == "lower_total_cost":
                assert row["lhs"] > row["rhs"] and decided["kind"] == "cost"


def test_derived_predicates_log_the_cost_with_and_without_them_whether_or_not_they_are_added() -> None:
    """Both outcomes of a derived predicate occur over the 22 queries and the two catalogs, and each logs the two
    totals its decision compares, on its own row (so the recomputation above covers the ones not added)."""
    outcomes = set()
    for catalog in CATALOGS:
        for query in QUERIES:
            for row in answer(query, catalog=catalog)["decisions"]:
                if row["reason"] in INFERRED_REASONS:
                    assert {"cost_with", "cost_without"} <= set(row), (query.stem, catalog, row)
                    outcomes.add(row["reason"])
    assert "derived_not_beneficial" in outcomes and "derived_from_or" in outcomes


@pytest.mark.parametrize("query", QUERIES, ids=[q.stem for q in QUERIES])
def test_the_summary_has_one_entry_per_predicate_ending_where_the_plan_has_it(query: Path) -> None:
    body = answer(query)
    summary = body["summary"]
    assert sum(len(item["steps"]) for item in summary) == len(body["decisions"])
    scans_after = {op.kind for op in plan_operators(body["plan"]).values() if op.kind.startswith("TableScan")}
    for item in summary:
        assert item["stopped"] and item["final_position"]
        if item["final_position"].startswith("in the filters of"):
            # the scan it reached is in the plan after (subqueries included), under the scan's name
            assert item["scans_reached"]
            for scan in item["scans_reached"]:
                assert scan.rsplit(" (", 1)[0] in scans_after, (scan, scans_after)
        for step in item["steps"]:
            assert step["operator"] and " (n" in step["operator"], step  # named by kind, with its id
            assert step["path"] and step["path"].endswith(step["operator"].rsplit(" (", 1)[0])
        if item["inferred"]:
            assert item["inferred"] in INFERRED_REASONS


def test_a_kept_predicate_says_which_comparison_decided_and_shows_the_other() -> None:
    row = {
        "predicate": "a > 1", "operator": "n2", "action": "kept", "reason": "not_beneficial",
        "p": 0.9, "r": 1.0, "r1": 1.0, "lhs": 0.0, "rhs": 0.9, "cost_if_kept": 100.0, "cost_if_pushed": 130.0,
    }  # fmt: skip
    explain = "Projection: a  [n1 rows=1 cost=1]\n  Aggregate: groupBy=[a]  [n2 rows=1 cost=1]"
    (item,) = summarize({"decisions": [row], "explain": {"before": explain}})
    assert item["final_position"] == "above Aggregate (n2)"
    assert item["stopped"] == (
        "not_beneficial: cost if pushed = 130 > cost if kept = 100 (not deciding: 1 - r = 0 <= p·r1 = 0.9 × 1 = 0.9)"
    )
    assert [c["kind"] for c in comparisons(row)] == ["cost", "benefit"]
    assert operators(explain)["n2"].path == "Projection > Aggregate"


def test_pushdown_explain_prints_the_summary_and_the_matrix_on_request(clean_env: dict[str, str]) -> None:
    query, catalog = TPCH / "queries" / "q03.sql", TPCH / "catalog.json"
    args = [*pushdown_command(), "explain", str(query), "--catalog", str(catalog)]
    plain = subprocess.run(args, capture_output=True, text=True, env=clean_env, timeout=120)
    full = subprocess.run([*args, "--matrix"], capture_output=True, text=True, env=clean_env, timeout=120)
    assert plain.returncode == 0 and full.returncode == 0, plain.stderr + full.stderr
    summary = answer(query)["summary"]
    for item in summary:
        assert f"{item['predicate']}\n  ends: {item['final_position']}" in plain.stdout
        assert f"  stopped: {item['stopped']}" in plain.stdout
    assert "1 - r = " in plain.stdout and "p·r1 = " in plain.stdout
    assert "== decisions ==" not in plain.stdout and "== decisions ==" in full.stdout


def _filters(levels: int) -> dict[str, Any]:
    plan: dict[str, Any] = {"op": "scan", "id": "s", "table": "t"}
    for i in range(levels):
        plan = {"op": "filter", "id": f"f{i}", "predicate": {"col": "a"}, "input": plan}
    return plan


@pytest.mark.parametrize("levels", [14, 15, 16, 40, 3000])
def test_a_path_names_the_first_operators_the_count_left_out_and_the_nearest(levels: int) -> None:
    plan = _filters(levels)
    explain = (
        "\n".join(f"{'  ' * depth}Filter: a  [f{levels - 1 - depth} rows=1 cost=1]" for depth in range(levels))
        + f"\n{'  ' * levels}TableScan: t  [s rows=1 cost=1]"
    )
    for ops in (plan_operators(plan), operators(explain)):
        path = ops["s"].path.split(" > ")
        if levels + 1 <= 15:
            assert path == ["Filter"] * levels + ["TableScan t"]
        else:  # three from the root, how many were left out, the twelve nearest
            assert path[:3] == ["Filter"] * 3 and path[3] == f"… {levels + 1 - 15} more …"
            assert path[4:] == ["Filter"] * 11 + ["TableScan t"]
        assert ops["f0"].path.endswith("Filter") and len(ops["f0"].path.split(" > ")) <= 16


def test_only_the_wanted_operators_are_named_each_as_in_the_whole_list() -> None:
    plan = _filters(30)
    explain = (
        "\n".join(f"{'  ' * depth}Filter: a  [f{29 - depth} rows=1 cost=1]" for depth in range(30))
        + f"\n{'  ' * 30}TableScan: t  [s rows=1 cost=1]"
    )
    wanted = {"s", "f3", "f29", "absent"}
    for whole, some in (
        (plan_operators(plan), plan_operators(plan, wanted)),
        (operators(explain), operators(explain, wanted)),
    ):
        assert set(some) == wanted - {"absent"}
        assert all(some[key] == whole[key] for key in some)


def _by_the_regex(line: str) -> tuple[int, str, str] | None:
    hit = _EXPLAIN_LINE.match(line)
    return None if hit is None else (len(hit["indent"]), hit["label"], hit["id"])


def test_explain_lines_are_read_as_the_regex_reads_them() -> None:
    """``explain_line`` looks for ``[id`` first instead of trying the regex at every position; on random lines
    of spaces, brackets, Unicode whitespace and label characters it finds what the regex finds."""
    alphabet = [" ", " ", " ", "\t", "[", "]", "a", "n", "1", ":", "\u3000", "\xa0", "\x1c", "(", "=", "."]
    rnd = random.Random(5)
    lines = ["".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 20))) for _ in range(30_000)]
    lines += [line for q in ("q02", "q19", "q21") for line in _explain_before(q).splitlines()]
    assert [explain_line(line) for line in lines] == [_by_the_regex(line) for line in lines]
    assert sum(_by_the_regex(line) is not None for line in lines) > 1_000  # the lines exercise both outcomes


def _explain_before(query: str) -> str:
    sql = (TPCH / "queries" / f"{query}.sql").read_text()
    answer = OptimizeService().optimize(OptimizeInput(sql=sql, catalog=CATALOG))  # the full answer
    return str(answer["explain"]["before"])
