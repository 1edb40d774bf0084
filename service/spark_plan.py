"""What Spark needs to run an answer and keep every placement we decided: the ``spark`` object.

Under its default settings Catalyst pushes every *deterministic* filter conjunct as far down as its rules allow
(``PushPredicateThroughJoin``, ``PushPredicateThroughNonJoin`` through aggregates, windows, sorts and unions), so
a predicate we deliberately keep above a join would land below it again. Excluding those rules for the whole
query (``spark.sql.optimizer.excludedRules``) also stops every pushdown Catalyst makes after its own rewrites
(on TPC-H q20 the filter it derives from a decorrelated subquery: 909,455 rows aggregated instead of 9,741).

So each predicate we keep above an operator gets its own *barrier*: the conjunct ``p`` is rendered as
``(p OR spark_partition_id() < 0)``. ``spark_partition_id()`` is non-deterministic, which makes the whole
conjunct non-deterministic, and Catalyst never moves a non-deterministic conjunct across a join, aggregate or
window (its split keeps them where they are). The right side is never true, so the conjunct selects exactly
the rows ``p`` selects (a NULL ``p`` stays NULL, i.e. rejected), and costs one integer read on rows ``p`` rejects.
``rand() < 0`` would not do: Spark's ``OptimizeRand`` folds it to false and the barrier disappears.

What a barrier blocks besides the move (read off Spark 4's optimized plans, tests/spark/test_barrier.py):

- constraint inference from that conjunct: Catalyst no longer derives ``col IS NOT NULL`` from ``p``. The
  rewrite adds those conjuncts itself (deterministic, so Catalyst pushes them to the scan) for every column
  ``p`` rejects NULLs on;
- filters above the barrier are not combined with it; other conjuncts of the same WHERE still move.

A kept predicate holding a subquery (``EXISTS``, ``IN (SELECT ...)``) gets no barrier: Spark turns such a
conjunct into a semi or anti join where it stands only while it is a plain conjunct; under an ``OR`` it would
become an existence join over every row. Those are listed in ``left_to_spark`` and Spark places them itself.

Everything else Catalyst does stays on: no settings are needed, so ``conf`` is empty. Spark refuses
non-deterministic join conditions, so a kept conjunct of an inner join's condition moves to a filter right above
the join (the same rows) behind its barrier. One of an outer, semi or anti join's condition cannot move out of
the join; settings do not hold it either (with ``FALLBACK_EXCLUDED_RULES`` excluded, ``InferFiltersFromConstraints``
still copies it into the join's side) and would cost the whole query its other pushdowns, so it is left to Spark,
named in ``left_to_spark`` and in a warning.

An orchestrator runs the answer with ``service.spark_runner.run_sql`` (settings applied and restored around the
run), or by hand::

    answer = httpx.post(f"{base}/optimize", json=request).json()
    df = spark.sql(answer["spark"]["sql"])  # answer["spark"]["conf"] is {} unless a warning says otherwise
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import orjson

from costmodel.finite import finite, may_hold_null
from costmodel.wire.nodes import node_ids, nodes_in_order
from service.sql import plan_to_sql

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

_RULES = "org.apache.spark.sql.catalyst.optimizer."
#: The smallest set that keeps a deterministic WHERE conjunct above a join: the join rule alone is not enough,
#: because PushDownPredicates calls its logic directly, and it runs again in the subquery-rewrite batch. Not used
#: by ``spark_target`` (see the module docstring); kept for callers comparing against whole-query exclusions.
FALLBACK_EXCLUDED_RULES = f"{_RULES}PushDownPredicates,{_RULES}PushPredicateThroughJoin"
EXCLUDED_RULES_KEY = "spark.sql.optimizer.excludedRules"

#: Never true, non-deterministic: see the module docstring.
NEVER_TRUE: dict[str, Any] = {"fn": "<", "args": [{"fn": "spark_partition_id", "args": []}, {"lit": 0, "type": "int"}]}

#: Functions that are NULL whenever any argument is NULL (enough for ``col IS NOT NULL`` to follow from them).
_STRICT = frozenset(
    {"=", "!=", "<>", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "div", "mod", "neg", "not", "cast"}
    | {"like", "ilike", "not_like", "rlike", "regexp", "regexp_like", "lower", "upper", "length", "substring"}
    | {"substr", "trim", "abs"}
)
#: A kept predicate Spark must be kept from moving (a derived predicate we chose not to add is not in the plan).
_HELD_REASONS = frozenset({"not_beneficial", "mode_never"})
#: Actions that leave a predicate above an operator Catalyst would push it below (kept there, or pulled up past it).
_HOLDING = frozenset({"kept", "pulled_up"})
#: Join types whose condition conjuncts may move to a filter above the join unchanged.
_INNER = frozenset({"inner", "cross"})
#: Functions NULL whenever their *first* argument is NULL.
_STRICT_FIRST = frozenset({"in", "not_in", "between"})


@dataclass(frozen=True, slots=True)
class SparkTarget:
    """The ``spark`` object of an answer: the SQL to run, the session settings it needs, the barriers in it.

    ``unheld``: kept predicates neither a barrier nor settings hold (also in ``left_to_spark``)."""

    sql: str
    conf: dict[str, str] = field(default_factory=dict)
    barriers: list[str] = field(default_factory=list)
    unheld: list[str] = field(default_factory=list)
    left_to_spark: list[str] = field(default_factory=list)
    #: ``sql`` is the request's own text (``spark_target``'s ``as_written``)
    as_written: bool = False

    def as_json(self) -> dict[str, Any]:
        out = {
            "sql": self.sql,
            "conf": dict(self.conf),
            "barriers": list(self.barriers),
            "left_to_spark": list(self.left_to_spark),
        }
        return {**out, "as_written": True} if self.as_written else out


def register_tables(spark: SparkSession, paths: Mapping[str, str], file_format: str = "parquet") -> None:
    """Register each ``name -> path`` as a temporary view the plans' scans can read."""
    for name, path in paths.items():
        spark.read.format(file_format).load(path).createOrReplaceTempView(name)


def to_sql(plan: Mapping[str, Any], catalog: Mapping[str, Any] | None = None) -> str:
    """The Spark SQL of ``plan`` with no barriers: what the plan says, which Catalyst may still rearrange."""
    return plan_to_sql(dict(plan), "spark", catalog=dict(catalog) if catalog is not None else None)


def to_dataframe(spark: SparkSession, plan: Mapping[str, Any], catalog: Mapping[str, Any] | None = None) -> DataFrame:
    """``plan`` as a DataFrame over the session's registered tables (lazy: nothing runs until an action)."""
    return spark.sql(to_sql(plan, catalog))


def spark_target(
    plan: Mapping[str, Any],
    decisions: list[Mapping[str, Any]],
    catalog: Mapping[str, Any] | None = None,
    as_written: str | None = None,
    texts: Callable[[], dict[str, list[str]] | None] | None = None,
) -> SparkTarget:
    """The SQL and settings under which Spark keeps every placement of ``plan`` (the answer's rewritten plan).

    ``as_written``: the request's own Spark SQL. When no barrier is needed (and no setting ever is), Catalyst's
    own pushdown places every predicate where the answer does, so the query runs as written and is not rendered.
    ``texts``: the conjunct texts of ``plan``'s filters and joins by id from the engine that made it
    (``FullParts.conjunct_texts``), or None there; without them ``plan`` is read again to spell them.

    >>> scan = {"op": "scan", "id": "s", "table": "t", "filters": []}
    >>> plan = {"op": "filter", "id": "f", "input": {"op": "aggregate", "id": "a", "input": scan,
    ...         "group_by": [{"expr": {"col": "t.k"}, "as": "k"}], "aggregates": []},
    ...         "predicate": {"fn": ">", "args": [{"col": "k"}, {"lit": 1, "type": "int"}]}}
    >>> catalog = {"tables": {"t": {"columns": [{"name": "k", "type": "int"}]}}}
    >>> target = spark_target(plan, [{"predicate": "k > 1", "operator": "a", "action": "kept"}], catalog)
    >>> target.barriers, target.conf
    (['k > 1'], {})
    >>> "k > 1 OR SPARK_PARTITION_ID() < 0" in target.sql
    True
    """
    if as_written is not None and not any(d.get("action") in _HOLDING for d in decisions):
        return _written(as_written)  # nothing kept: not even the plan's scans need reading
    kept = _kept_pairs(decisions, _scan_ids(plan))
    if not kept:
        return _written(as_written) if as_written is not None else SparkTarget(sql=to_sql(plan, catalog))
    known = texts() if texts is not None else None
    texts_by_id = known if known is not None else _conjunct_texts(plan, catalog)
    fenced = _copied(plan)
    barriers: list[str] = []
    held: set[tuple[str, str]] = set()
    left: set[tuple[str, str]] = set()
    for node in nodes_in_order(fenced):
        if node.get("op") == "join" and node.get("type", "inner") in _INNER and node.get("on"):
            lifted = _lift_kept_join_conjuncts(node, texts_by_id.get(str(node.get("id")), []), kept)
            if lifted:
                texts_by_id[node["id"]] = lifted
        if node.get("op") != "filter":
            continue
        below = node_ids(node["input"])
        parts = wire_conjuncts(node["predicate"])
        marks = [
            next(((t, op) for t, op in kept if t == text and op in below), None)
            for text in texts_by_id.get(node["id"], [])
        ]
        if len(marks) != len(parts) or not any(marks):
            continue
        for i, part in enumerate(parts):  # Spark turns these into semi/anti joins only as plain conjuncts
            mark = marks[i]
            if mark is not None and nodes_in_order(part):
                left.add(mark)
                marks[i] = None
        plain = [p for p, m in zip(parts, marks, strict=True) if m is None]
        guarded = [p for p, m in zip(parts, marks, strict=True) if m is not None]
        held.update(pair for m in marks if m is not None for pair in kept if pair[0] == m[0] and pair[1] in below)
        barriers += [m[0] for m in marks if m is not None]
        implied = sorted({c for p in guarded for c in null_rejected_columns(p)} - _is_not_null_columns(plain))
        plain += [{"fn": "is_not_null", "args": [{"col": c}]} for c in implied]
        fenced_parts = plain + [{"fn": "or", "args": [p, NEVER_TRUE]} for p in guarded]
        node["predicate"] = fenced_parts[0] if len(fenced_parts) == 1 else {"fn": "and", "args": fenced_parts}
    unheld = sorted({text for text, op in kept - held - left})
    left_to_spark = sorted({text for text, _ in left} | set(unheld))
    if as_written is not None and not barriers:
        return _written(as_written, unheld, left_to_spark)
    return SparkTarget(sql=to_sql(fenced, catalog), barriers=barriers, unheld=unheld, left_to_spark=left_to_spark)


def _copied(plan: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of a wire plan, through orjson (about ten times ``copy.deepcopy``'s speed on JSON data);
    ``copy.deepcopy`` for what orjson cannot write as it is (an integer beyond 64 bits, a non-finite number).

    >>> plan = {"op": "scan", "filters": [{"lit": 1.5}]}
    >>> copied = _copied(plan)
    >>> copied == plan and copied["filters"] is not plan["filters"]
    True
    """
    try:
        text = orjson.dumps(plan)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return copy.deepcopy(dict(plan))
    if may_hold_null(text) and not finite(plan):  # orjson writes a NaN or an infinity as null
        return copy.deepcopy(dict(plan))
    copied: dict[str, Any] = orjson.loads(text)
    return copied


def _written(sql: str, unheld: list[str] | None = None, left_to_spark: list[str] | None = None) -> SparkTarget:
    return SparkTarget(sql=sql, unheld=unheld or [], left_to_spark=left_to_spark or [], as_written=True)


def _lift_kept_join_conjuncts(join: dict[str, Any], texts: list[str], kept: set[tuple[str, str]]) -> list[str]:
    """Kept conjuncts of an inner join's condition move to a filter right above the join (same rows), where a
    barrier can hold them: Spark refuses a non-deterministic join condition. Rewrites ``join`` in place and
    returns the texts of the conjuncts it moved."""
    parts = wire_conjuncts(join["on"])
    if len(parts) != len(texts):
        return []
    lifted = [p for p, t in zip(parts, texts, strict=True) if (t, str(join.get("id"))) in kept]
    if not lifted:
        return []
    rest = [p for p, t in zip(parts, texts, strict=True) if (t, str(join.get("id"))) not in kept]
    inner = dict(join)
    inner["on"] = None if not rest else rest[0] if len(rest) == 1 else {"fn": "and", "args": rest}
    if inner["on"] is None:
        inner["type"] = "cross"
    predicate = lifted[0] if len(lifted) == 1 else {"fn": "and", "args": lifted}
    join.clear()
    join.update({"op": "filter", "id": f"{inner['id']}_kept", "predicate": predicate, "input": inner})
    return [t for t in texts if (t, str(inner.get("id"))) in kept]


def null_rejected_columns(expr: Any) -> set[str]:
    """Columns whose NULL makes ``expr`` NULL or false, i.e. rejected by a filter.

    >>> sorted(null_rejected_columns({"fn": ">", "args": [{"fn": "+", "args": [{"col": "a"}, {"col": "b"}]},
    ...                                                       {"lit": 1, "type": "int"}]}))
    ['a', 'b']
    >>> null_rejected_columns({"fn": "udf", "name": "f", "args": [{"col": "a"}], "cost": 9})
    set()
    """
    if not isinstance(expr, dict):
        return set()
    fn = expr.get("fn")
    if fn == "and":
        return set().union(*(null_rejected_columns(a) for a in expr.get("args", [])))
    if fn == "or":
        sides = [null_rejected_columns(a) for a in expr.get("args", [])]
        return set.intersection(*sides) if sides else set()
    return _strict_columns(expr)


def _strict_columns(expr: Any) -> set[str]:
    """Columns whose NULL makes ``expr`` NULL."""
    if not isinstance(expr, dict):
        return set()
    if "col" in expr:
        return {expr["col"]}
    fn, args = expr.get("fn"), expr.get("args") or []
    if fn in _STRICT:
        return set().union(*(_strict_columns(a) for a in args))
    if fn in _STRICT_FIRST and args:
        return _strict_columns(args[0])
    return set()


def _is_not_null_columns(parts: list[Any]) -> set[str]:
    return {
        p["args"][0]["col"]
        for p in parts
        if isinstance(p, dict) and p.get("fn") == "is_not_null" and "col" in (p.get("args") or [{}])[0]
    }


def _kept_pairs(decisions: list[Mapping[str, Any]], scans: set[str]) -> set[tuple[str, str]]:
    """(predicate text, operator) for each predicate kept above (or pulled up past) an operator Catalyst would push
    it through."""
    return {
        (str(d["predicate"]), str(d["operator"]))
        for d in decisions
        if (
            (d.get("action") == "kept" and d.get("reason", "not_beneficial") in _HELD_REASONS)
            or d.get("action") == "pulled_up"
        )
        and d.get("source") != "constant"  # folds to TRUE or FALSE: where Spark evaluates it does not matter
        and d.get("operator") not in scans
        and "predicate" in d
    }


def _conjunct_texts(plan: Mapping[str, Any], catalog: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """Per filter id, its conjuncts as the decisions spell them (the engine's own rendering)."""
    from costmodel import catalog_from_wire, plan_from_wire
    from costmodel.conjunct_texts import conjunct_texts

    bound = plan_from_wire(dict(plan), catalog_from_wire(dict(catalog) if catalog is not None else {}))
    texts = conjunct_texts(bound)
    assert texts is not None, "the wire reader refuses a plan that repeats an id"
    return texts


def wire_conjuncts(expr: Any) -> list[Any]:
    """The conjuncts of a wire expression, nested ANDs flattened, in order."""
    if isinstance(expr, dict) and expr.get("fn") == "and":
        return [c for a in expr.get("args", []) for c in wire_conjuncts(a)]
    return [expr]


def _scan_ids(plan: Mapping[str, Any]) -> set[str]:
    return {str(n.get("id")) for n in nodes_in_order(dict(plan)) if n.get("op") == "scan"}
