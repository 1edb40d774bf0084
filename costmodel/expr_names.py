"""The functions the engine knows by name, by what legality and cost ask of them: comparisons, arithmetic,
aggregates, window-only and non-deterministic functions, the ones that raise; and what SQL LIKE means.

Plain data with no dependency, so ``costmodel.expr`` (which re-exports all of it), ``costmodel.functions`` and the
renderers read one list.
"""

from __future__ import annotations

import re
from typing import Final

COMPARISONS: Final = frozenset({"=", "!=", "<>", "<", "<=", ">", ">=", "<=>"})
ARITHMETIC: Final = frozenset({"+", "-", "*", "/", "%", "div", "mod", "neg"})
DIVISIONS: Final = frozenset({"/", "%", "div", "mod"})
BOOLEAN: Final = frozenset({"and", "or", "not"})
LIKES: Final = frozenset({"like", "ilike", "not_like"})
REGEXES: Final = frozenset({"rlike", "regexp", "regexp_like", "similar_to", "regexp_extract", "regexp_replace"})
AGGREGATES: Final = frozenset(
    {
        "count",
        "sum",
        "avg",
        "mean",
        "min",
        "max",
        "array_agg",
        "collect_list",
        "collect_set",
        "stddev",
        "stddev_samp",
        "stddev_pop",
        "variance",
        "var_samp",
        "var_pop",
        "first",
        "last",
        "any_value",
        "approx_count_distinct",
        "count_if",
        "bool_and",
        "bool_or",
        "every",
        "some",
        "median",
        "percentile",
        "percentile_approx",
        "string_agg",
        "listagg",
        "group_concat",
        "corr",
        "covar_pop",
        "covar_samp",
        "max_by",
        "min_by",
        "mode",
        "product",
    }
)
WINDOW_ONLY: Final = frozenset(
    {
        "row_number",
        "rank",
        "dense_rank",
        "percent_rank",
        "cume_dist",
        "ntile",
        "lag",
        "lead",
        "first_value",
        "last_value",
        "nth_value",
    }
)
NONDETERMINISTIC: Final = frozenset(
    {
        "rand",
        "random",
        "randn",
        "uuid",
        "shuffle",
        "monotonically_increasing_id",
        "spark_partition_id",
        "input_file_name",
        "random_uniform",
    }
)
RAISING: Final = frozenset({"assert_true", "raise_error", "error"})
STRING_TYPES: Final = ("string", "varchar", "char", "text", "unknown")


def like_regex(pattern: str, ignore_case: bool = False) -> re.Pattern[str]:
    """SQL LIKE as a regex: ``%`` any run, ``_`` one character, everything else literal."""
    body = "".join(".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)
    return re.compile(f"^{body}$", re.DOTALL | (re.IGNORECASE if ignore_case else 0))
