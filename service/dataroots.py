"""Where analyze may read: only under the configured data roots (``PUSHDOWN_DATA_ROOTS``).

A path is resolved (symlinks, ``..``) before the check, and a directory's entries are checked too, since
Spark reads every file below it and a symlink inside could lead anywhere. The refusal is the same whether
or not the path exists, so the check is no oracle for other paths. Glob characters and ``%`` are refused:
Hadoop expands globs after the check (``{a,../..}``) and the check cannot see what they would match.
"""

from __future__ import annotations

import os
import re
from urllib.parse import unquote, urlparse

from service.errors import InputError

SETTING = "PUSHDOWN_DATA_ROOTS"
#: Characters Hadoop's path globbing interprets, and ``%``, which Hadoop and Python decode differently.
_UNSAFE = frozenset("*?[]{}\\%")
#: A Spark catalog table: one to three dotted identifiers, no backquotes (which would let ``csv.`/etc/x``` in).
TABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*){0,2}")
#: Reader options that name what to read; the path is the request's ``path``, checked here.
_PATH_OPTIONS = frozenset({"path", "paths"})
#: Most directory entries checked for escaping symlinks before giving up (and refusing).
MAX_ENTRIES = 100_000


def refusal(path: str, where: str = "$.path") -> InputError:
    """The one answer for any path outside the roots, present or not: the same bytes for every such path."""
    del path  # not echoed: the answer must not differ between paths
    return InputError(
        "outside_data_roots",
        f"analyze reads only under the directories and URL prefixes in {SETTING}; this path is not under one",
        where,
        {"setting": SETTING},
    )


def _under(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def _local_roots(roots: list[str]) -> list[str]:
    return [os.path.realpath(r[len("file:") :] if r.startswith("file:") else r) for r in roots if _is_local(r)]


def _is_local(path: str) -> bool:
    return urlparse(path).scheme in ("", "file")


def resolve_source(path: str, roots: list[str]) -> str:
    """The path to give Spark: ``path`` resolved, if it lies under one of ``roots``; else 403 ``outside_data_roots``.

    >>> resolve_source("s3a://bucket/t/", ["s3a://bucket/"])
    's3a://bucket/t/'
    """
    if not path or _UNSAFE & set(path):
        raise refusal(path)
    parsed = urlparse(path)
    if parsed.scheme in ("", "file"):
        return _resolve_local(path, parsed.path if parsed.scheme else path, parsed.netloc, roots)
    segments = unquote(parsed.path).split("/")
    if ".." in segments or "." in segments:
        raise refusal(path)
    for root in roots:
        if _is_local(root):
            continue
        prefix = root if root.endswith("/") else root + "/"
        if path.startswith(prefix) or path == root.rstrip("/"):
            return path
    raise refusal(path)


def _resolve_local(path: str, local: str, netloc: str, roots: list[str]) -> str:
    if netloc not in ("", "localhost"):
        raise refusal(path)
    real = os.path.realpath(local)
    local_roots = _local_roots(roots)
    if not any(_under(real, root) for root in local_roots):
        raise refusal(path)
    if os.path.isdir(real):
        _check_entries(path, real, local_roots)
    return real


def _check_entries(path: str, directory: str, roots: list[str]) -> None:
    """Refuse a directory holding a symlink that leads outside the roots (Spark would follow it)."""
    seen = 0
    for current, dirs, files in os.walk(directory, followlinks=False):
        for name in dirs + files:
            seen += 1
            if seen > MAX_ENTRIES:
                raise InputError(
                    "too_many_files",
                    f"{path!r} holds more than {MAX_ENTRIES} entries",
                    "$.path",
                    {"limit": MAX_ENTRIES},
                )
            entry = os.path.join(current, name)
            if os.path.islink(entry) and not any(_under(os.path.realpath(entry), root) for root in roots):
                raise refusal(path)


def check_reader_options(options: dict[str, str]) -> None:
    """Refuse reader options that would name another source than the checked ``path``."""
    for key in options:
        if key.lower() in _PATH_OPTIONS:
            raise InputError(
                "reserved_option",
                f"reader option {key!r} is not allowed: give the source as path",
                f"$.reader_options.{key}",
            )


def check_table_name(table: str) -> None:
    """A catalog table name, never a ``format.`path``` reference to a file."""
    if not TABLE_NAME.fullmatch(table):
        raise InputError(
            "invalid_table", "table must be a catalog name: identifiers joined by dots, no quotes", "$.table"
        )
