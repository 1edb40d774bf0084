"""The kind table behind ``ExprBuilder.expr`` sends each sqlglot class where the branches' isinstance order did."""

from __future__ import annotations

from sqlglot import exp

from service.sql.expr_kinds import BINARY, EXPR_KIND, K_ADD_SUB, K_BINARY_OP, K_CAST, K_FUNC, K_OTHER


def _all_classes() -> set[type[exp.Expr]]:
    found: set[type[exp.Expr]] = set()
    stack: list[type[exp.Expr]] = [exp.Expr]
    while stack:
        for sub in stack.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                stack.append(sub)
    return found


def test_no_sqlglot_class_derives_from_a_binary_operator() -> None:
    # the branch for binary operators takes exactly BINARY's classes; a class deriving from one would not be one
    derived = {c for c in _all_classes() for op in BINARY if issubclass(c, op) and c not in BINARY}
    assert derived == set()


def test_kinds_follow_the_branch_order() -> None:
    assert EXPR_KIND.of_type(exp.Add) == K_ADD_SUB  # before the binary operators: an interval is folded first
    assert EXPR_KIND.of_type(exp.EQ) == K_BINARY_OP
    assert EXPR_KIND.of_type(exp.JSONCast) == K_CAST  # a subclass takes its parent's branch
    assert EXPR_KIND.of_type(exp.Sum) == K_FUNC
    assert EXPR_KIND.of_type(exp.Star) == K_OTHER
