"""Lines of production code at a commit: Python lines that are neither blank, comments nor docstrings.

    python scripts/count_lines.py [COMMIT ...]      (default: HEAD)

Reads each commit's files with ``git show`` (no checkout needed) under the production folders (``FOLDERS``), and
counts per folder the lines that hold code: a line is not counted when it is blank, holds only a comment, or lies
inside a docstring (a string that is a module's, class's or function's first statement).
"""

from __future__ import annotations

import ast
import io
import subprocess
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("service", "costmodel", "api", "pushdown_client", "integrations/airflow/src")


def code_lines(source: str) -> int:
    """The lines of ``source`` that hold code (not blank, not only a comment, not in a docstring)."""
    docstrings: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                docstrings.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    lines: set[int] = set()
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            continue
        if token.type == tokenize.ENDMARKER:
            continue
        lines.update(range(token.start[0], token.end[0] + 1))
    return len(lines - docstrings)


def count(commit: str) -> dict[str, int]:
    listing = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", commit, "--", *FOLDERS],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout.split()
    totals = dict.fromkeys(FOLDERS, 0)
    for path in listing:
        if not path.endswith(".py"):
            continue
        text = subprocess.run(
            ["git", "show", f"{commit}:{path}"], capture_output=True, text=True, check=True, cwd=ROOT
        ).stdout
        folder = next(f for f in FOLDERS if path.startswith(f + "/"))
        totals[folder] += code_lines(text)
    return totals


def main() -> None:
    for commit in sys.argv[1:] or ["HEAD"]:
        totals = count(commit)
        print(f"{commit}: {sum(totals.values())} code lines  " + ", ".join(f"{f} {n}" for f, n in totals.items()))


if __name__ == "__main__":
    main()
