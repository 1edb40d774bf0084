"""Scan-level pushdown, the last step: container pruning, then index access.

Once placement has put predicates into scans' ``filters``:

1. Pruning (``costmodel.pruning``): containers the statistics prove empty of
   matches are dropped; the scan names the ones it keeps, and the cost tables
   count only their rows.
2. Index access (the Dolt seed): equality, IN and range conjuncts on an index's
   leading columns become a lookup on that index when the lookup (rows
   fetched x k of ``index_lookup``) costs less than reading the kept rows.
   A conjunct the lookup answers exactly leaves the filters; the rest stay as
   residual filters. Never on the null-supplying side of an outer join, nor on
   the side of a join that already reaches it through an index on its join key
   (Dolt's IndexedJoin): that lookup is the join's.

    TableScan: cities AS c filters=[c.first_letter = 'A']
  becomes
    Indexed table access on index [cities.first_letter] TableScan: cities AS c
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from costmodel.catalog import Catalog, Index, TableInfo
from costmodel.cost import CostModel, split_join_condition
from costmodel.expr import Call, Column, Expr, Literal, and_
from costmodel.joins import JOIN_TYPES
from costmodel.kinds.registry import kind_of
from costmodel.plan import IndexLookup, Join, Node, Scan, children, output_cids, with_children
from costmodel.pruning import prune
from costmodel.reasons import Reason
from costmodel.render import to_sql
from costmodel.rounding import rounded
from costmodel.trampoline import Done, Step, run


@dataclass
class ScanReport:
    """What scan-level pushdown did for one scan, for the response's ``scans`` list."""

    scan: str
    table: str
    containers_total: int = 0
    pruned: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    pruning_predicate: str | None = None
    index: dict[str, Any] | None = None

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"scan": self.scan, "table": self.table}
        if self.containers_total:
            out["containers"] = {
                "total": self.containers_total,
                "pruned": self.pruned,
                "kept": self.kept,
                "predicate": self.pruning_predicate,
            }
        if self.index is not None:
            out["index"] = self.index
        return out


def _lookup_parts(predicate: Expr, column: str, names: dict[int, str]) -> tuple[str, bool] | None:
    """('eq' | 'range', exact) when ``predicate`` constrains ``column`` as an index can look up."""
    if not isinstance(predicate, Call) or not predicate.args:
        return None
    target = predicate.args[0]
    if predicate.fn in ("=", "<", "<=", ">", ">=") and len(predicate.args) == 2:
        left, right = predicate.args
        if isinstance(left, Literal) and isinstance(right, Column):
            left, right = right, left
        target = left
        if not isinstance(right, Literal) or right.value is None:
            return None
    elif predicate.fn == "in" or predicate.fn == "between":
        if not all(isinstance(a, Literal) and a.value is not None for a in predicate.args[1:]):
            return None
    else:
        return None
    if not isinstance(target, Column) or names.get(target.cid, "").lower() != column.lower():
        return None
    kind = "eq" if predicate.fn in ("=", "in") else "range"
    return kind, True


def _match_index(index: Index, filters: tuple[Expr, ...], names: dict[int, str]) -> list[Expr]:
    """The filters an index can answer: equalities on a prefix of its columns, then at most one range."""
    matched: list[Expr] = []
    for column in index.columns:
        eqs = [f for f in filters if (_lookup_parts(f, column, names) or ("", False))[0] == "eq"]
        if eqs:
            matched.append(eqs[0])
            continue
        ranges = [f for f in filters if (_lookup_parts(f, column, names) or ("", False))[0] == "range"]
        matched.extend(ranges)
        break
    return matched


def _scan_below(node: Node) -> Scan | None:
    """The scan a join input reads, through kinds that keep the scan's rows as they are (aliases, filters...)."""
    while not isinstance(node, Scan):
        if not kind_of(node).index_join_through:
            return None
        node = children(node)[0]
    return node


def _joined_through_index(join: Join, catalog: Catalog) -> Scan | None:
    """The right input's scan when the join can look it up through an index on its join key."""
    if not JOIN_TYPES[join.type].index_join or join.on is None:
        return None
    scan = _scan_below(join.right)
    if scan is None:
        return None
    table = catalog.table(scan.table)
    if table is None or not table.indexes:
        return None
    left_cids = output_cids(join.left)
    keys, _ = split_join_condition(join, left_cids)
    names = {f.cid: f.name.lower() for f in scan.fields}
    key_columns = {names.get(rk.cid) for _, rk in keys if isinstance(rk, Column)}
    for index in table.indexes:
        if index.columns and index.columns[0].lower() in key_columns:
            return scan
    return None


class ScanAccess:
    """Applies pruning and index choice to every scan of a plan."""

    def __init__(self, catalog: Catalog, model: CostModel):
        self.catalog = catalog
        self.model = model
        self.reports: list[ScanReport] = []
        self.decisions: list[dict[str, Any]] = []

    def apply(self, plan: Node) -> Node:
        if not any(table.containers or table.indexes for table in self.catalog.tables.values()):
            return plan  # nothing to prune and no index to look up: every scan stays as it is, nothing to report
        return run(self._visit(plan, null_supplying=False, index_joined=frozenset()))

    def _visit(self, node: Node, null_supplying: bool, index_joined: frozenset[str]) -> Step[Node]:
        """Trampolined (``costmodel.trampoline``): a plan may be 10,000 levels deep."""
        if isinstance(node, Scan):
            yield Done(self._scan(node, null_supplying, node.id in index_joined))
            return
        if isinstance(node, Join):
            joined = _joined_through_index(node, self.catalog)
            index_joined = index_joined | ({joined.id} if joined is not None else set())
        flags = kind_of(node).null_supplying(node, null_supplying)
        kids = children(node)
        visited = []
        for kid, flag in zip(kids, flags, strict=True):
            visited.append((yield self._visit(kid, flag, index_joined)))
        yield Done(with_children(node, visited))

    def _scan(self, scan: Scan, null_supplying: bool, index_joined: bool) -> Node:
        table = self.catalog.table(scan.table)
        if table is None:
            return scan
        report = ScanReport(scan.id, scan.table)
        names = {f.cid: f.name for f in scan.fields}
        if table.containers and scan.filters:
            result = prune(list(scan.filters), table.containers, names)
            report.containers_total = len(table.containers)
            report.pruned, report.kept = list(result.pruned), list(result.kept)
            report.pruning_predicate = result.describe()
            if result.pruned:
                scan = replace(scan, containers=result.kept)
        if table.indexes and scan.filters:
            scan = self._index(scan, table, names, report, null_supplying, index_joined)
        if report.containers_total or report.index is not None:
            self.reports.append(report)
        return scan

    def _index(
        self,
        scan: Scan,
        table: TableInfo,
        names: dict[int, str],
        report: ScanReport,
        null_supplying: bool,
        index_joined: bool,
    ) -> Scan:
        candidates = [(index, _match_index(index, scan.filters, names)) for index in table.indexes]
        candidates = [(index, matched) for index, matched in candidates if matched]
        if not candidates:
            return scan
        index, matched = max(candidates, key=lambda item: len(item[1]))
        label = f"{table.name}.{', '.join(index.columns)}"
        text = " AND ".join(to_sql(p) for p in matched)
        if null_supplying or index_joined:
            reason = Reason.NULL_SUPPLYING_SIDE if null_supplying else Reason.INDEX_USED_BY_JOIN
            detail = (
                "rows of this input may be NULL-padded: the filter must run after the join"
                if null_supplying
                else "the join already reads this table through an index on its key"
            )
            report.index = {"name": index.name, "columns": list(index.columns), "chosen": False, "reason": reason}
            self.decisions.append(
                {
                    "predicate": text,
                    "operator": scan.id,
                    "action": "blocked",
                    "reason": reason,
                    "detail": detail,
                    "index": label,
                }
            )
            return scan
        rows = self.model.node_cost(scan).inputs[0]
        selectivity = self.model.estimator.estimate(and_(matched)).selectivity
        full = table.row_count if table.row_count is not None else rows
        fetched = full * selectivity
        k_index = self.model.options.k("index_lookup")
        cost_index = fetched * k_index
        cost_scan = rows * self.model.options.k("scan")
        chosen = cost_index < cost_scan
        report.index = {
            "name": index.name,
            "columns": list(index.columns),
            "predicates": [to_sql(p) for p in matched],
            "rows_fetched": rounded(fetched, 4),
            "cost_index": rounded(cost_index, 4),
            "cost_scan": rounded(cost_scan, 4),
            "chosen": chosen,
        }
        self.decisions.append(
            {
                "predicate": text,
                "operator": scan.id,
                "action": "pushed" if chosen else "kept",
                "reason": Reason.INDEX_LOOKUP if chosen else Reason.INDEX_NOT_CHEAPER,
                "index": label,
                "cost_if_kept": rounded(cost_scan, 4),
                "cost_if_pushed": rounded(cost_index, 4),
            }
        )
        if not chosen:
            return scan
        residual = tuple(f for f in scan.filters if not any(f is m for m in matched))
        lookup = IndexLookup(index.name, tuple(index.columns), tuple(matched))
        return replace(scan, filters=residual, index=lookup)
