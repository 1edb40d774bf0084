"""Which functions of an analyzed Spark plan are priced, under the SQL adapter's names, and how a run's Python
evaluation metrics become per-call costs (no Spark: the plan and metrics as Spark's JSON writes them)."""

from __future__ import annotations

from typing import Any

import pytest

from pushdown_client.calibration import Calibration
from pushdown_client.feedback.python_udfs import (
    PythonEvaluation,
    function_observations,
    python_evaluations,
    seconds,
    udf_names,
)
from pushdown_client.functions import DEFAULT_COSTS, DetectedFunction, detect_in_json
from pushdown_client.udf_timing import measured
from service.client import PushdownClient

E = "org.apache.spark.sql.catalyst.expressions."


def udf(name: str, eval_type: int = 100, deterministic: bool = True) -> dict[str, Any]:
    return {"class": E + "PythonUDF", "name": name, "evalType": eval_type, "udfDeterministic": deterministic}


def plan(*conditions: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"class": "org.apache.spark.sql.catalyst.plans.logical.Filter", "condition": list(conditions)},
        {"class": "org.apache.spark.sql.execution.LogicalRDD"},
    ]


@pytest.mark.parametrize(
    ("expr", "name", "kind"),
    [
        (udf("Score"), "score", "python_udf"),
        (udf("score", 101), "score", "python_udf"),
        (udf("score", 200), "score", "pandas_udf"),
        (udf("score", 204), "score", "pandas_udf"),
        (udf("score", 250), "score", "arrow_udf"),
        ({"class": E + "ScalaUDF", "udfName": {"product-class": "scala.Some", "value": "Score"}}, "score", "scala_udf"),
        ({"class": E + "ScalaUDF", "udfName": "score"}, "score", "scala_udf"),
        ({"class": E + "RLike"}, "rlike", "regex"),
        ({"class": E + "RegExpReplace"}, "regexp_replace", "regex"),
        ({"class": E + "RegExpExtract"}, "regexp_extract", "regex"),
        ({"class": E + "GetJsonObject"}, "get_json_object", "json"),
        ({"class": E + "JsonTuple"}, "json_tuple", "json"),
        ({"class": E + "JsonToStructs"}, "from_json", "json"),
        ({"class": E + "Levenshtein"}, "levenshtein", "similarity"),
        ({"class": E + "SoundEx"}, "soundex", "phonetic"),
    ],
)
def test_each_kind_is_found_under_the_adapter_s_name_with_a_default_cost(expr, name, kind):
    found = detect_in_json(plan(expr))
    assert list(found) == [name]
    assert found[name].kind == kind
    assert found[name].cost == DEFAULT_COSTS[kind]
    assert found[name].source == f"detected: {kind} default"


def test_comparisons_columns_and_known_cheap_functions_are_not_priced():
    cheap = [{"class": E + c} for c in ("EqualTo", "AttributeReference", "Literal", "Upper", "Like", "And")]
    assert detect_in_json(plan(*cheap)) == {}


def test_determinism_is_spark_s_and_one_non_deterministic_call_makes_the_name_so():
    assert detect_in_json(plan(udf("r", deterministic=False)))["r"].deterministic is False
    found = detect_in_json(plan(udf("f"), {"class": "x.Not", "child": [udf("F", deterministic=False)]}))
    assert found["f"].deterministic is False
    assert detect_in_json(plan({"class": E + "RLike"}))["rlike"].deterministic is True


def test_subquery_plans_and_nested_fields_are_searched():
    subquery = {"class": E + "ScalarSubquery", "plan": [{"class": "x.Filter", "condition": [udf("inner_udf")]}]}
    assert "inner_udf" in detect_in_json(plan(subquery))


def test_a_udf_the_sql_text_does_not_call_is_left_out_builtins_are_kept():
    sql = "SELECT * FROM v WHERE score(x) AND x RLIKE 'a'"
    found = detect_in_json(plan(udf("score"), udf("from_view"), {"class": E + "RLike"}), sql)
    assert sorted(found) == ["rlike", "score"]


def test_specs_are_what_the_service_accepts_and_a_pattern_match_says_only_its_cost():
    found = detect_in_json(plan(udf("score", deterministic=False), {"class": E + "RLike"}))
    specs = {name: f.to_spec() for name, f in found.items()}
    assert specs["score"] == {
        "cost": 200.0,
        "source": "detected: python_udf default",
        "deterministic": False,
        "interval": [20.0, 2000.0],
    }
    assert specs["rlike"] == {"cost": 10.0, "source": "detected: regex default", "interval": [1.0, 100.0]}
    sql = "SELECT a FROM t WHERE score(s) AND s RLIKE 'x'"
    catalog = {"tables": {"t": {"columns": [{"name": "a", "type": "int"}, {"name": "s", "type": "string"}]}}}
    answer = PushdownClient().optimize(sql, catalog=catalog, functions=specs)
    by_name = {c["name"]: c for c in answer["function_costs"]}
    assert by_name["score"]["source"] == "detected: python_udf default"
    assert by_name["rlike"]["cost"] == 10.0


def test_a_measured_cost_is_driver_time_plus_the_row_transfer_in_units_with_an_interval():
    calibration = Calibration(1e-8, (0.5e-8, 2e-8), 2e-6, (1e-6, 4e-6))
    got = measured(DetectedFunction("f", "python_udf"), [1e-3, 1.2e-3, 0.9e-3], 200, calibration)
    assert got.cost == pytest.approx((2e-6 + 1e-3) / 1e-8)
    low, high = got.interval or (0, 0)
    assert low == pytest.approx((1e-6 + 0.9e-3) / 2e-8) and high == pytest.approx((4e-6 + 1.2e-3) / 0.5e-8)
    assert got.source.startswith("measured: 200 sample rows")


def test_timing_metrics_and_node_descriptions_are_read_as_spark_prints_them():
    assert seconds("total (min, med, max (stageId: taskId))\n2.4 s (1.2 s, 1.2 s, 1.2 s (stage 1.0: task 2))") == 2.4
    assert seconds("1,250 ms") == 1.25
    assert seconds("total (min, med, max)\n12 us (6 us, 6 us, 6 us)") == pytest.approx(12e-6)
    assert seconds("") is None and seconds("n/a") is None
    assert udf_names("BatchEvalPython [slow_check(o_comment#2)#8], [pythonUDF0#12]") == ("slow_check",)


def test_a_run_s_python_nodes_give_per_call_costs_only_for_a_node_of_one_udf():
    graph = {
        "nodes": [
            {
                "id": 1,
                "name": "WholeStageCodegen (1)",
                "nodes": [
                    {
                        "id": 2,
                        "name": "BatchEvalPython",
                        "desc": "BatchEvalPython [slow(s#1)#5], [pythonUDF0#6]",
                        "metrics": [
                            {"name": "time to execute Python code", "accumulatorId": 10},
                            {"name": "number of output rows", "accumulatorId": 11},
                        ],
                    }
                ],
            },
            {
                "id": 3,
                "name": "ArrowEvalPython",
                "desc": "ArrowEvalPython [f(a#1)#5, g(b#2)#6], [pythonUDF0#7, pythonUDF1#8], 200",
                "metrics": [
                    {"name": "time to execute Python code", "accumulatorId": 12},
                    {"name": "number of output rows", "accumulatorId": 13},
                ],
            },
        ]
    }
    values = {"10": "total (min, med, max)\n2.5 s (1.2 s, 1.3 s, 1.3 s)", "11": "2,500", "12": "3 s", "13": "10"}
    evaluations = python_evaluations([(graph, values)])
    assert sorted(evaluations, key=lambda e: e.names) == [
        PythonEvaluation(("f", "g"), 10, 3.0),
        PythonEvaluation(("slow",), 2500, 2.5),
    ]
    sent = function_observations(evaluations, 1e-8, 0.0, ["SLOW", "f"])
    assert sent == [{"name": "slow", "calls": 2500, "per_call_s": 0.001, "unit_s": 1e-8}]
