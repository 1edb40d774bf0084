"""Every refusal the SQL adapter can make is listed in docs/sql-adapter.md ("Refused, and why").

The test reads each ``unsupported(...)`` call in service/sql (and the SELECT arguments refused by name) and looks
for its construct in that section: a plain text must appear as written, a text built at run time (``f"{kind}
JOIN"``) through the phrases listed for it in ``PHRASES``. A new refusal fails here until it is documented; a stale
entry in ``PHRASES`` fails too. The corpus's deliberate refusals (tests/sql/corpus/runner.py) must be listed as well.
"""

from __future__ import annotations

import ast
from pathlib import Path

from service.sql.plan_select import _REFUSED_SELECT_ARGS
from tests.sql.corpus.runner import REFUSED as CORPUS_REFUSED

ROOT = Path(__file__).resolve().parents[2]
SQL = ROOT / "service" / "sql"
DOC = ROOT / "docs" / "sql-adapter.md"

#: A construct text built at run time -> phrases in the docs that cover it. ``{}`` marks each run-time part;
#: ``<...>`` an argument that is not a string literal.
PHRASES: dict[str, list[str]] = {
    "GROUP BY ... WITH {}": ["GROUP BY ... WITH ROLLUP"],
    "GROUP BY with more than {} grouping sets": ["GROUP BY with more than 4096 grouping sets"],
    "CUBE over more than {} keys": ["CUBE over more than 10 keys"],
    "{} statement (only queries are supported)": ["INSERT statement"],
    "expression {} ({})": ["expression <KIND>"],
    "{} with {}": ["<NODE> with <OPTION>"],
    "IS {}": ["IS <value>"],
    "TABLESAMPLE {}": ["TABLESAMPLE <METHOD>"],
    "{} subquery comparison": ["ALL subquery comparison", "ANY subquery comparison"],
    "INTERVAL {}": ["INTERVAL <unit>"],
    "date arithmetic in {}": ["date arithmetic in <UNIT>"],
    "function {}": ["function <NAME>"],
    "function {} in this form": ["function <NAME> in this form"],
    "function {} with option {}": ["function <NAME> with option <OPTION>"],
    "{} outside SELECT/HAVING/ORDER BY": ["GROUPING(x) outside SELECT/HAVING/ORDER BY"],
    "numeric literal {}": ["numeric literal"],
    "{} that is not an integer literal": [
        "LIMIT that is not an integer literal",
        "OFFSET that is not an integer literal",
    ],
    "<'UNPIVOT' if pivot.args.get('unpivot') else 'PIVOT'>": ["PIVOT", "UNPIVOT"],
    "{} in FROM": ["VALUES in FROM"],
    "{} query": ["<KIND> query"],
    "<q.key.upper()>": ["any other set operation"],
    "{} JOIN": ["NATURAL JOIN", "POSITIONAL JOIN"],
    "RIGHT {} JOIN": ["RIGHT SEMI JOIN", "RIGHT ANTI JOIN"],
    "SELECT AS {}": ["SELECT AS STRUCT"],
    "LATERAL VIEW {}": ["LATERAL VIEW POSEXPLODE"],
    "{} window frame": ["GROUPS window frame"],
    "<what>": list(_REFUSED_SELECT_ARGS.values()),  # plan_select's SELECT arguments refused by name
}


def refusal_texts(root: Path = SQL) -> dict[str, list[str]]:
    """Construct text of every ``unsupported(...)`` call under ``root`` -> where it is (``file:line``)."""
    out: dict[str, list[str]] = {}
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "unsupported" and node.args):
                continue
            arg = node.args[0]
            if isinstance(arg, ast.Constant):
                text = str(arg.value)
            elif isinstance(arg, ast.JoinedStr):
                text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in arg.values)
            else:
                text = f"<{ast.unparse(arg)}>"
            out.setdefault(text, []).append(f"{path.name}:{node.lineno}")
    return out


def refused_section(doc: str) -> str:
    start = doc.index("## Refused, and why")
    end = doc.find("\n## ", start + 1)
    return doc[start : end if end != -1 else len(doc)].lower()


def undocumented(texts: dict[str, list[str]], section: str) -> list[str]:
    missing = []
    for text, where in texts.items():
        phrases = PHRASES.get(text, [] if ("{}" in text or text.startswith("<")) else [text])
        if not phrases:
            missing.append(f"{text!r} ({', '.join(where)}): built at run time, add it to PHRASES")
        missing += [f"{p!r} ({', '.join(where)})" for p in phrases if p.lower() not in section]
    return missing


def test_every_refusal_in_the_adapter_is_documented() -> None:
    missing = undocumented(refusal_texts(), refused_section(DOC.read_text()))
    assert not missing, "not in docs/sql-adapter.md's refusals:\n" + "\n".join(missing)


def test_no_stale_phrase_entries() -> None:
    assert set(PHRASES) <= set(refusal_texts())


def test_every_corpus_refusal_is_documented() -> None:
    section = refused_section(DOC.read_text())
    assert all(construct.lower() in section for construct in CORPUS_REFUSED.values())


def test_the_check_is_real(tmp_path: Path) -> None:
    """A new refusal, plain or built at run time, is reported until the docs list it."""
    (tmp_path / "new.py").write_text('raise unsupported("MERGE INTO")\nraise unsupported(f"{x} SAMPLE")\n')
    texts = refusal_texts(tmp_path)
    assert texts == {"MERGE INTO": ["new.py:1"], "{} SAMPLE": ["new.py:2"]}
    assert len(undocumented(texts, "| `merge into` | ... |")) == 1
    assert len(undocumented(texts, "")) == 2
