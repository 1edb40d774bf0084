"""Why a predicate went where it did: every ``reason`` a decision can carry, as one enum.

Members are strings equal to their wire spelling (``Reason.LIMIT == "limit"``), so the answer's JSON is
unchanged; docs/legality.md and docs/cost-model.md explain them.
"""

from __future__ import annotations

from enum import StrEnum


class Reason(StrEnum):
    AFTER_NONDETERMINISTIC_CONJUNCT = "after_nondeterministic_conjunct"
    AGGREGATE_IN_PREDICATE = "aggregate_in_predicate"
    BENEFICIAL = "beneficial"
    BLOCK_SAMPLE = "block_sample"
    CAN_RAISE_GUARD = "can_raise_guard"
    CHEAP_PREDICATE = "cheap_predicate"
    GENERATOR = "generator"
    COMPUTED_BY_AGGREGATE = "computed_by_aggregate"
    CORRELATED_SUBQUERY = "correlated_subquery"
    DERIVED_FROM_OR = "derived_from_or"
    DERIVED_NOT_BENEFICIAL = "derived_not_beneficial"
    FILTER_READS_AGGREGATE = "filter_reads_aggregate"
    FULL_JOIN = "full_join"
    GLOBAL_AGGREGATE = "global_aggregate"
    GRAND_TOTAL = "grand_total"
    GUARDED_BY_EARLIER_CONJUNCT = "guarded_by_earlier_conjunct"
    INDEX_LOOKUP = "index_lookup"
    INDEX_NOT_CHEAPER = "index_not_cheaper"
    INDEX_USED_BY_JOIN = "index_used_by_join"
    INFERRED_FROM_JOIN_KEYS = "inferred_from_join_keys"
    INTO_JOIN_CONDITION = "into_join_condition"
    INTO_SCAN = "into_scan"
    LIMIT = "limit"
    LOWER_TOTAL_COST = "lower_total_cost"
    MODE_ALWAYS = "mode_always"
    MODE_NEVER = "mode_never"
    NO_COLUMNS = "no_columns"
    NONDETERMINISTIC_FILTER = "nondeterministic_filter"
    NONDETERMINISTIC_PREDICATE = "nondeterministic_predicate"
    NONDETERMINISTIC_PROJECTION = "nondeterministic_projection"
    NOT_BENEFICIAL = "not_beneficial"
    NOT_COSTED = "not_costed"
    NOT_IN_EVERY_GROUPING_SET = "not_in_every_grouping_set"
    NOT_ON_GROUP_KEYS = "not_on_group_keys"
    NOT_ON_PARTITION_KEYS = "not_on_partition_keys"
    NULL_AWARE_ANTI_JOIN = "null_aware_anti_join"
    NULL_SUPPLYING_SIDE = "null_supplying_side"
    OFFSET = "offset"
    PRESERVED_SIDE_ON_PREDICATE = "preserved_side_on_predicate"
    REFERENCES_BOTH_SIDES = "references_both_sides"
    REFERENCES_WINDOW_OUTPUT = "references_window_output"
    SAMPLE = "sample"
    SORT_LIMIT = "sort_limit"
    UNKNOWN_FUNCTION = "unknown_function"
