"""Answers of two checkouts, side by side: the same requests through each, every difference listed by cause.

    python bench/answer_diff.py [--baseline DIR] [--current DIR] [--generated 600] [--seed 1]

Issue 45's first "done when": answers byte-identical to the ones before the reshaping on TPC-H and on generated
requests, or every difference listed and justified. Each checkout answers in its own subprocess with
``PYTHONPATH`` set to it (``--worker``), through what ``POST /optimize`` runs from the body's bytes to the answer's
bytes (``service.optimize.answer_body`` now, ``api.routes._answer`` before the layers moved); an error answer is
its code, message and path. Requests:

  * TPC-H: the 22 queries (bench/tpch) as plans and as Spark SQL, with the SF1 catalog the TPC-H tests and
    benches use, in modes ``cost`` (the default), ``always`` and ``never``;
  * generated: ``--generated`` requests, half plans from the differential campaign's generator
    (tests/correctness/plangen.py, with its catalog) and half Spark SQL from the round-trip campaign's
    (tests/roundtrip/sqlgen.py, with its catalog), seeded, in the default mode.

The current checkout also answers every request with ``options.expensive_threshold: 0`` (cheap predicates placed by
cost again, the one new behaviour an option switches off). Answers are compared after dropping what differs from
run to run (``RUN_SPECIFIC``, checked by answering twice in one checkout); each difference is put under the causes
its changed fields show (``CAUSES``, each with the commits that made it). Writes bench/results/answer_diff.json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results" / "answer_diff.json"
SUMMARY = ROOT / "bench" / "results" / "answer_diff.md"

#: keys whose values differ from one answer to the next of the same request in one checkout
RUN_SPECIFIC = ("request_id",)


# ------------------------------------------------------------------ the worker (runs inside one checkout)


def worker(requests_file: Path, out_file: Path) -> None:
    """Answer every request with the checkout on ``PYTHONPATH``, as its ``POST /optimize`` does."""
    # the editable install points at the main checkout: its finders would supply modules this checkout lacks
    sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith("__editable__")]
    from service.optimize import OptimizeService

    try:  # after the reshaping: the request schema and the body -> answer function live in service/
        from service.optimize import answer_body as answer
        from service.request import parse_ordinary_request
    except ImportError:  # before it: in api/
        from api.models import parse_ordinary_request  # type: ignore[no-redef]

        from api.routes import _answer as answer  # type: ignore[no-redef]

    import service

    switch_off(os.environ.get("ANSWER_DIFF_OFF", ""))
    checkout = Path(os.environ["PYTHONPATH"].split(os.pathsep)[0]).resolve()
    assert Path(service.__file__).resolve().is_relative_to(checkout), service.__file__
    optimizer = OptimizeService()
    out = {}
    for name, body in json.loads(requests_file.read_text()).items():
        try:
            parsed = parse_ordinary_request(json.dumps(body).encode(), max_json_depth=2500)
            out[name] = json.loads(answer(optimizer, parsed, (None, None), False, False).payload)
        except Exception as exc:  # an error answer: what the route would say, not where it was raised
            out[name] = {
                "error": {
                    "code": getattr(exc, "code", type(exc).__name__),
                    "message": getattr(exc, "message", str(exc)),
                    "path": getattr(exc, "path", None),
                }
            }
    out_file.write_text(json.dumps(out))


#: behaviours added since the baseline that no option switches off, and how the worker switches each off in its
#: own process (a bench instrument over this project's own functions, never in the service): the commit that
#: added each is in ``BEHAVIOURS``
SWITCHES: dict[str, tuple[tuple[str, str, Any], ...]] = {
    "join_order": (("costmodel.optimizer", "catalyst_join_order", lambda plan: plan),),
    "pull_up": (("costmodel.passes.legality", "_may_rise", lambda work: lambda pred: False),),
    "conjunct_order": (("costmodel.passes.rewrite", "order_conjuncts", lambda plan, cost, sel: (plan, [])),),
    "robust": (("costmodel.passes.place", "robust_placement", lambda work, pred: None),),
    "rule_based_instead": (("costmodel.optimizer", "_EPS", float("inf")),),
    "portable_as_written": (("service.answer_parts", "portable_as_written", lambda response, spark: None),),
    "immaterial_savings": (("service.answer_parts", "_immaterial", lambda cost, min_savings: False),),
    # bounds on one column estimated as a product again: in the estimator's AND, a filter's rows, the statistics
    # source (an index's fetch reads the estimator's AND, so it follows)
    "range_interval": (
        ("costmodel.estimate", "grouped_bounds", lambda args: None),
        ("costmodel.cost", "bound_groups", lambda predicates: []),
        ("costmodel.estimate_stats.ColumnStatsSource", "_interval", lambda self, parts, columns: None),
    ),
}


def switch_off(names: str) -> None:
    """Switch off the behaviours named (comma-separated keys of ``SWITCHES``)."""

    for name in filter(None, names.split(",")):
        for path, attribute, replacement in SWITCHES[name]:
            target = _resolve(path)
            assert hasattr(target, attribute), f"{path}.{attribute}"
            setattr(target, attribute, replacement)


def _resolve(path: str) -> Any:
    """The module, or the class in a module, that ``path`` names (``costmodel.estimate_stats.ColumnStatsSource``)."""
    import importlib

    module, rest = path, ""
    while True:
        try:
            target = importlib.import_module(module)
            break
        except ModuleNotFoundError:
            module, _, last = module.rpartition(".")
            rest = f"{last}.{rest}" if rest else last
    for part in filter(None, rest.split(".")):
        target = getattr(target, part)
    return target


def answers(
    checkout: Path, requests: dict[str, Any], folder: Path, label: str, off: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``requests`` answered by ``checkout`` in a subprocess of its own, with the behaviours ``off`` switched off."""
    asked = folder / f"{label}-requests.json"
    got = folder / f"{label}-answers.json"
    asked.write_text(json.dumps(requests))
    env = {
        **os.environ,
        "PYTHONPATH": str(checkout),
        "PUSHDOWN_DATA_DIR": str(folder / f"{label}-data"),
        "ANSWER_DIFF_OFF": ",".join(off),
    }
    subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--worker", str(asked), str(got)],
        env=env,
        cwd=folder,
        check=True,
    )
    return dict(json.loads(got.read_text()))


# ------------------------------------------------------------------ requests


def tpch_requests() -> dict[str, Any]:
    tpch = ROOT / "bench" / "tpch"
    catalog = json.loads((tpch / "catalog.json").read_text())
    out: dict[str, Any] = {}
    for query in sorted((tpch / "queries").glob("q*.sql")):
        plan = json.loads((tpch / "plans" / f"{query.stem}.json").read_text())
        for mode in ("cost", "always", "never"):
            out[f"tpch/{query.stem}/plan/{mode}"] = {"plan": plan, "catalog": catalog, "options": {"mode": mode}}
            out[f"tpch/{query.stem}/sql/{mode}"] = {
                "sql": query.read_text(),
                "dialect": "spark",
                "catalog": catalog,
                "options": {"mode": mode},
            }
    return out


def generated_requests(count: int, seed: int) -> dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    from tests.correctness.plangen import TABLES, PlanGenerator, catalog, make_rows
    from tests.roundtrip.schema import CATALOG
    from tests.roundtrip.test_sql_plan_sql import generated

    rng = random.Random(seed)
    plan_catalog = catalog({name: make_rows(rng, name, 30) for name in TABLES})
    out: dict[str, Any] = {}
    plans = count // 2
    for i in range(plans):  # as bench/differential.py draws them
        plan = PlanGenerator(random.Random(seed * 1_000_003 + i)).query()
        out[f"generated/plan/{i}"] = {"plan": plan, "catalog": plan_catalog}
    for i, sql in enumerate(generated(count - plans, seed)):
        out[f"generated/sql/{i}"] = {"sql": sql, "dialect": "spark", "catalog": CATALOG}
    return out


def without_cheap_rule(requests: dict[str, Any]) -> dict[str, Any]:
    """The requests in mode cost with ``expensive_threshold`` 0: every predicate placed by the model."""
    out = {}
    for name, body in requests.items():
        options = dict(body.get("options") or {})
        if options.get("mode", "cost") == "cost":
            out[name] = {**body, "options": {**options, "expensive_threshold": 0}}
    return out


# ------------------------------------------------------------------ comparing


#: fields the answer gained since the baseline (``_generic`` paths), with the commit and issue that added each
ADDED_FIELDS: dict[str, str] = {
    "$.sql_portable": "01ef434 (issue 46): one query to run; the engine-neutral rewrite moved from sql to "
    "sql_portable, sql is Spark's with its barriers (for the Spark dialect)",
    "$.summary[].steps[].verdict": "01ef434 (issue 46): each step says what decided it (total cost, local rule, "
    "cheap-predicate rule) and whether the tests agree",
    "$.cost.baseline.savings_interval": "7b884e8 (issue 46): savings with the range the estimates allow",
    "$.cost.baseline.on_defaults": "7b884e8 (issue 46): whether a default estimate is in that range",
    "$.cost.savings_vs_baseline_interval": "7b884e8 (issue 46): the same range, beside savings_vs_baseline",
    "$.cost.savings_rest_on_defaults": "7b884e8 (issue 46): the same flag, beside savings_vs_baseline",
    "$.cost.time_saved_vs_baseline_s": "abc76d4 (issue 44): savings in seconds, with the unit's source",
    "$.function_costs": "abc76d4 (issue 44): the costs of the functions the query calls, and where each came from",
}

#: behaviours added since the baseline, with the commit and issue that added each; ``cheap_predicate`` is
#: switched off by ``options.expensive_threshold: 0``, the others by ``SWITCHES``
BEHAVIOURS: dict[str, str] = {
    "cheap_predicate": "d8aa75e (issue 41, do no harm): in mode cost a predicate cheaper than "
    "options.expensive_threshold (10) is placed where rule-based pushdown puts it (reason cheap_predicate)",
    "join_order": "d8aa75e (issue 41): inner join chains decided in Catalyst's ReorderJoin order "
    "(costmodel/join_order.py), so the answer's plan lists the joins as Spark runs them",
    "rule_based_instead": "d8aa75e (issue 41): an answer the model prices above rule-based pushdown is replaced "
    "by the rule-based one (with a warning)",
    "pull_up": "984ef56, 0b60c53 (issue 42): an expensive predicate may rise above where the query wrote it "
    "(action pulled_up), only past operators that may drop rows",
    "conjunct_order": "4b26fb3 (issue 42): conjuncts in rank order within every filter and scan filter list "
    "(rewrite conjunct_order)",
    "portable_as_written": "d592baf (issue 41): where Spark runs the query as written, sql_portable is the query "
    "as written too, not the rendering (which inlined a CTE used twice and wrote out derived filters; "
    "bench/corpus_duckdb.py)",
    "immaterial_savings": "9443887 (issue 41): an answer whose estimated savings against rule-based pushdown are "
    "below options.min_savings (1%), or whose interval reaches below 0, runs on Spark as written "
    "(spark.immaterial, with a warning)",
    "range_interval": "f06dafd (issue 42): bounds on one column (d >= x AND d <= y) are estimated as one interval, "
    "as BETWEEN is, not as the product of their fractions",
    "robust": "54a27b0 (issue 42): a predicate held by cost whose decision flips inside its selectivity interval "
    "takes the smaller worst-case loss (decisions' uncertain and robust)",
}


def canonical(answer: Any) -> Any:
    """``answer`` without what differs from run to run."""
    if isinstance(answer, dict):
        return {k: canonical(v) for k, v in answer.items() if k not in RUN_SPECIFIC}
    if isinstance(answer, list):
        return [canonical(v) for v in answer]
    return answer


def as_before(answer: Any) -> Any:
    """``answer`` in the baseline's presentation: the added fields dropped, and ``sql`` the engine-neutral
    rewrite again (``sql_portable``)."""
    out = json.loads(json.dumps(canonical(answer)))
    if not isinstance(out, dict) or "error" in out:
        return out
    if "sql_portable" in out:
        out["sql"] = out.pop("sql_portable")
    out.pop("function_costs", None)
    cost = out.get("cost") or {}
    for key in ("time_saved_vs_baseline_s", "savings_vs_baseline_interval", "savings_rest_on_defaults"):
        cost.pop(key, None)
    for key in ("savings_interval", "on_defaults"):
        (cost.get("baseline") or {}).pop(key, None)
    for item in out.get("summary") or []:
        for step in item.get("steps") or []:
            step.pop("verdict", None)
    return out


def differences(before: Any, after: Any, path: str = "$") -> list[tuple[str, str]]:
    """``(kind, path)`` of every place the two JSON values differ: ``added``, ``removed``, ``changed``."""
    if isinstance(before, dict) and isinstance(after, dict):
        out = []
        for key in sorted(before.keys() | after.keys()):
            here = f"{path}.{key}"
            if key not in after:
                out.append(("removed", here))
            elif key not in before:
                out.append(("added", here))
            else:
                out.extend(differences(before[key], after[key], here))
        return out
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        return [
            d for i, (b, a) in enumerate(zip(before, after, strict=True)) for d in differences(b, a, f"{path}[{i}]")
        ]
    return [] if before == after else [("changed", path)]


def _generic(path: str) -> str:
    """``$.summary[3].steps[0].verdict`` -> ``$.summary[].steps[].verdict``."""
    out, depth = [], 0
    for ch in path:
        if ch == "[":
            depth += 1
            out.append("[]")
        elif ch == "]":
            depth -= 1
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def _without_added(answer: Any) -> Any:
    """``answer`` without the fields ``ADDED_FIELDS`` names."""
    out = as_before(answer)
    if isinstance(out, dict) and isinstance(answer, dict) and "sql" in answer:
        out["sql"] = answer["sql"]
    return out


def _top_fields(before: Any, after: Any) -> list[str]:
    """The answer's top-level fields (``cost.*`` one level deeper) whose values differ."""
    return sorted(
        {
            ".".join(_generic(path).split(".")[: 3 if path.startswith("$.cost.") else 2])
            for _, path in differences(before, after)
        }
    )


def classify(
    name: str,
    base: Any,
    current: Any,
    all_off: Any,
    one_off: dict[str, Any],
    only_on: dict[str, Any],
) -> dict[str, Any]:
    """One request's differences: the fields added, whether the rest is the same in the baseline's presentation,
    and if not, which behaviours make the difference (``one_off``: the current answer with that behaviour off;
    ``only_on``: with only that one on) and whether anything is left with every behaviour off."""
    added = sorted(
        {_generic(path) for kind, path in differences(canonical(base), canonical(current)) if kind == "added"}
        & ADDED_FIELDS.keys()
    )
    same = as_before(base) == as_before(current)
    # what each switch changes on its own, with every other behaviour off (shows the switch does something)
    alone = sorted(b for b, answer in only_on.items() if as_before(answer) != as_before(all_off))
    entry: dict[str, Any] = {
        "request": name,
        "identical": canonical(base) == canonical(current),
        "added": added,
        # fields both answers have whose values differ, as each checkout presents them (``sql`` among them: the
        # one query to run, Spark's for the Spark dialect)
        "changed": _top_fields(_without_added(canonical(base)), _without_added(canonical(current))),
        "alone": alone,
    }
    if same:
        return entry
    entry["fields"] = _top_fields(as_before(base), as_before(current))
    # a behaviour makes the difference when switching it off alone changes the answer; where none does alone
    # (two behaviours that each give the same answer), the ones that change the answer with every other one off
    entry["causes"] = sorted(b for b, answer in one_off.items() if as_before(answer) != as_before(current)) or [
        f"{b} (alone)" for b in alone
    ]
    left = differences(as_before(base), as_before(all_off))
    if left:
        entry["left_with_every_behaviour_off"] = [f"{kind} {path}" for kind, path in left[:20]]
    return entry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", type=Path, default=Path("/work/wt/baseline"))
    parser.add_argument("--current", type=Path, default=ROOT)
    parser.add_argument("--generated", type=int, default=600)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--worker", nargs=2, type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(*args.worker)
        return
    started, load_before = time.perf_counter(), os.getloadavg()
    requests = {**tpch_requests(), **generated_requests(args.generated, args.seed)}
    plain = without_cheap_rule(requests)
    every = tuple(SWITCHES)

    def current(off: tuple[str, ...], cheap: bool, folder: Path, label: str) -> dict[str, Any]:
        asked = requests if cheap else {**requests, **plain}
        return answers(args.current, asked, folder, label, off)

    with tempfile.TemporaryDirectory(prefix="answer-diff-") as name:
        folder = Path(name)
        print(f"{len(requests)} requests; baseline {args.baseline}, current {args.current}", flush=True)
        base = answers(args.baseline, requests, folder, "baseline")
        now = current((), True, folder, "current")
        again = current((), True, folder, "current-again")
        all_off = current(every, False, folder, "all-off")
        one_off = {"cheap_predicate": current((), False, folder, "off-cheap_predicate")}
        only_on = {"cheap_predicate": current(every, True, folder, "on-cheap_predicate")}
        for b in every:
            one_off[b] = current((b,), True, folder, f"off-{b}")
            only_on[b] = current(tuple(x for x in every if x != b), False, folder, f"on-{b}")
            print(f"  {b} done", flush=True)
    unstable = sorted({_generic(p) for n in requests for _, p in differences(canonical(now[n]), canonical(again[n]))})
    rows = [
        classify(
            n, base[n], now[n], all_off[n], {b: a[n] for b, a in one_off.items()}, {b: a[n] for b, a in only_on.items()}
        )
        for n in requests
    ]
    result = summarize(rows, requests, unstable)
    result["machine"] = {
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "seconds": round(time.perf_counter() - started, 1),
    }
    result["settings"] = {"generated": args.generated, "seed": args.seed, "baseline": str(args.baseline)}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=1) + "\n")
    SUMMARY.write_text(markdown(result))
    print_summary(result)
    print(f"wrote {RESULTS.relative_to(ROOT)} and {SUMMARY.relative_to(ROOT)}")


def _group(name: str) -> str:
    return "/".join(name.split("/")[:2]) if name.startswith("generated") else f"tpch/{name.split('/')[2]}"


def summarize(rows: list[dict[str, Any]], requests: dict[str, Any], unstable: list[str]) -> dict[str, Any]:
    groups = sorted({_group(n) for n in requests})
    by_group: dict[str, Counter[str]] = {g: Counter() for g in groups}
    causes: dict[str, list[str]] = {}
    added: Counter[str] = Counter()
    changed: Counter[str] = Counter()
    alone: Counter[str] = Counter()
    fields_by_causes: dict[str, Counter[str]] = {}
    for row in rows:
        counts = by_group[_group(row["request"])]
        counts["requests"] += 1
        counts["byte_identical"] += row["identical"]
        counts["same_but_added_fields"] += not row["identical"] and "causes" not in row
        added.update(row["added"])
        changed.update(row["changed"])
        alone.update(row["alone"])
        if "causes" in row:
            counts["decisions_or_plan_differ"] += 1
            key = "+".join(row["causes"]) or "unattributed"
            causes.setdefault(key, []).append(row["request"])
            fields_by_causes.setdefault(key, Counter()).update(row["fields"])
            counts["unattributed"] += not row["causes"] or "left_with_every_behaviour_off" in row
    unattributed = [r for r in rows if "causes" in r and (not r["causes"] or "left_with_every_behaviour_off" in r)]
    return {
        "run_specific_fields_dropped": list(RUN_SPECIFIC),
        "fields_differing_between_two_runs_of_one_checkout": unstable,
        "by_group": {g: dict(c) for g, c in by_group.items()},
        "added_fields": {f: {"answers": added[f], "why": ADDED_FIELDS[f]} for f in sorted(added)},
        "existing_fields_changed": dict(changed.most_common()),
        "behaviours": BEHAVIOURS,
        "answers_each_behaviour_changes_alone": {b: alone[b] for b in BEHAVIOURS},
        "by_causes": {
            k: {"answers": len(v), "fields": dict(fields_by_causes[k].most_common()), "examples": v[:5]}
            for k, v in sorted(causes.items())
        },
        "unattributed": unattributed,
        "answers": [{k: v for k, v in r.items() if k != "alone"} for r in rows if "causes" in r],
    }


def markdown(result: dict[str, Any]) -> str:
    """The result as a page a reviewer reads: counts per group, the fields added, the causes with their commits."""
    machine, settings = result["machine"], result["settings"]
    lines = [
        "# Answers before and after the reshaping (issue 45)",
        "",
        f"Written by `bench/answer_diff.py` (baseline `{settings['baseline']}`, {settings['generated']} generated "
        f"requests, seed {settings['seed']}; {machine['seconds']} s, load average "
        f"{machine['load_average_before'][0]} before, {machine['load_average_after'][0]} after). Each checkout "
        "answers in its own process, as `POST /optimize` does. Dropped before comparing: "
        f"`{', '.join(result['run_specific_fields_dropped'])}` (two runs of the current checkout differ in "
        f"{result['fields_differing_between_two_runs_of_one_checkout'] or 'nothing else'}).",
        "",
        "| requests | answers | byte-identical | only fields added | decisions or plan differ | unattributed |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for group, c in result["by_group"].items():
        lines.append(
            f"| {group} | {c.get('requests', 0)} | {c.get('byte_identical', 0)} | {c.get('same_but_added_fields', 0)} "
            f"| {c.get('decisions_or_plan_differ', 0)} | {c.get('unattributed', 0)} |"
        )
    lines += ["", "## Fields added (every answer they apply to)", ""]
    lines += [f"- `{f}` ({i['answers']} answers): {i['why']}" for f, i in result["added_fields"].items()]
    lines += [
        "",
        "Existing fields whose values differ (answers): "
        + ", ".join(f"`{f}` {n}" for f, n in result["existing_fields_changed"].items())
        + ". `$.sql` differs in every SQL answer: it is now the one query to run (for the Spark dialect the "
        "`spark` object's SQL, the request's own text when Spark runs it as written); the baseline's `sql` is "
        "now `sql_portable`, equal to it wherever no behaviour below changed the decisions.",
        "",
        "## Decisions or plan that differ, by cause",
        "",
        "A behaviour is a cause when switching it off alone in the current checkout changes that answer "
        "(`cheap_predicate` by `options.expensive_threshold: 0`, the others in the worker's process only: "
        "`SWITCHES`). With every behaviour off, the current answers equal the baseline's in the baseline's "
        "presentation on every request but those listed as unattributed.",
        "",
        "| causes | answers | fields that differ | examples |",
        "| --- | ---: | --- | --- |",
    ]
    for key, info in result["by_causes"].items():
        fields = ", ".join(f"`{f}`" for f in info["fields"])
        lines.append(f"| {key} | {info['answers']} | {fields} | {', '.join(info['examples'][:3])} |")
    lines += [
        "",
        "Behaviours, where they come from, and how many answers each changes on its own (every other off):",
        "",
    ]
    lines += [
        f"- `{b}` ({result['answers_each_behaviour_changes_alone'][b]} alone): {why}"
        for b, why in result["behaviours"].items()
    ]
    never = [b for b in result["behaviours"] if not any(b in key.split("+") for key in result["by_causes"])]
    if never:
        lines += [
            "",
            f"Never a cause here: {', '.join(never)}. Pulling up and robust placement act on predicates at or "
            "above `expensive_threshold` (declared or detected expensive functions), which none of these requests "
            "holds (with every predicate placed by cost they act: the counts above); rule-based pushdown's answer "
            "replaces one placed by cost only when the model prices the latter higher.",
        ]
    lines += ["", f"Unattributed differences: {len(result['unattributed'])}."]
    for row in result["unattributed"]:
        lines.append(f"- {row['request']}: {row.get('left_with_every_behaviour_off') or row['fields']}")
    return "\n".join(lines) + "\n"


def print_summary(result: dict[str, Any]) -> None:
    print(f"\nrun-specific fields dropped: {result['run_specific_fields_dropped']}")
    unstable = result["fields_differing_between_two_runs_of_one_checkout"]
    print(f"fields that differ between two runs of the current checkout: {unstable}")
    for group, counts in result["by_group"].items():
        print(f"  {group}: {counts}")
    print("fields added:")
    for field, info in result["added_fields"].items():
        print(f"  {field}: {info['answers']} answers")
    print(f"existing fields whose values changed (answers): {result['existing_fields_changed']}")
    print("answers whose decisions or plan differ, by the behaviours that make the difference:")
    for key, info in result["by_causes"].items():
        print(f"  {key}: {info['answers']}")
    print(f"unattributed (a regression unless explained): {len(result['unattributed'])}")
    for row in result["unattributed"][:10]:
        print(f"  {row['request']}: {row.get('left_with_every_behaviour_off') or row['fields']}")


if __name__ == "__main__":
    if "--worker" in sys.argv and sys.path and Path(sys.path[0]).resolve() == Path(__file__).resolve().parent:
        del sys.path[0]  # bench/'s own modules must not shadow the checkout's
    main()
