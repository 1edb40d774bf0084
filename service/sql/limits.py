"""Documented size limits for SQL the adapter accepts: what sqlglot and the translator can take without
deep recursion under Python's default recursion limit, checked before the work starts.

sqlglot parses flat chains of binary operators (``a OR b OR ...``, ``a + b + ...``,
``x || y || ...``) with loops, and writes them with loops, so their length is
bounded only by the request size. Nesting is different: every level of
parentheses, function call, subquery or CASE costs sqlglot's parser about 20
Python frames, and every level of the expression tree costs the translator a
few. Rather than raise the interpreter's recursion limit (process-wide, and a
crash risk on a thread's C stack), the adapter refuses nesting deeper than
``MAX_NESTING`` before parsing, and an expression tree deeper than
``MAX_DEPTH`` (after AND/OR/UNION chains are balanced) before translating,
each with ``too_deep`` naming the limit. Real analytic queries stay far below
both: TPC-H and the test corpus nest at most 18 tree levels.
"""

from __future__ import annotations

from sqlglot.tokens import Token, Tokenizer, TokenType

from service.sql.errors import SqlError

#: Levels of parentheses, brackets, CASE and prefix operators (NOT, unary minus) the parser may nest.
MAX_NESTING = 32
#: Levels of the expression tree after balancing (a chain of 150 additions is 150 levels deep).
MAX_DEPTH = 160

_OPEN = {TokenType.L_PAREN, TokenType.L_BRACKET, TokenType.CASE}
_CLOSE = {TokenType.R_PAREN, TokenType.R_BRACKET, TokenType.END}
_PREFIX = {TokenType.NOT, TokenType.DASH, TokenType.PLUS, TokenType.TILDE}
# A prefix-operator token right after one of these is binary (``a - b``, ``x NOT IN``), not a nesting level.
_VALUE_END = {
    TokenType.VAR,
    TokenType.NUMBER,
    TokenType.STRING,
    TokenType.IDENTIFIER,
    TokenType.R_PAREN,
    TokenType.R_BRACKET,
    TokenType.NULL,
    TokenType.TRUE,
    TokenType.FALSE,
    TokenType.STAR,
    TokenType.END,
}


#: ``nesting_spellings`` per tokenizer class, worked out once
_SPELLINGS: dict[type[Tokenizer], tuple[tuple[str, ...], tuple[str, ...]]] = {}


def nesting_spellings(tokenizer: type[Tokenizer]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The characters and (lower-case) keywords ``tokenizer`` reads as a token that opens a level or may be a
    prefix operator: every token ``check_nesting`` counts is spelled by one of them in the query's text. A
    keyword of several words counts by its first word, which its token's text starts with whatever spaces follow.

    >>> chars, words = nesting_spellings(Tokenizer)
    >>> sorted(chars), sorted(words)
    (['!', '(', '+', '-', '[', '~'], ['case', 'not'])
    """
    known = _SPELLINGS.get(tokenizer)
    if known is None:
        counted = _OPEN | _PREFIX
        chars = tuple(sorted(c for c, kind in tokenizer.SINGLE_TOKENS.items() if kind in counted))
        words = {k.split()[0].lower() for k, kind in tokenizer.KEYWORDS.items() if kind in counted and k.strip()}
        known = _SPELLINGS[tokenizer] = (chars, tuple(sorted(words - set(chars))))
    return known


def may_nest_too_deep(sql: str, tokenizer: type[Tokenizer]) -> bool:
    """Whether ``sql`` may hold more than ``MAX_NESTING`` tokens that open a level or may be prefix operators: a
    bound from its text (their spellings counted, in strings and comments too), so the token walk of
    ``check_nesting`` is needed only when it says True. Counting in C, it costs a hundredth of that walk.

    >>> may_nest_too_deep("SELECT a FROM t WHERE NOT b = -1", Tokenizer)
    False
    >>> may_nest_too_deep("SELECT " + "(" * 40 + "a" + ")" * 40, Tokenizer)
    True
    """
    chars, words = nesting_spellings(tokenizer)
    found = sum(sql.count(c) for c in chars)
    if found > MAX_NESTING:
        return True
    lower = sql.lower()
    return found + sum(lower.count(w) for w in words) > MAX_NESTING


def check_nesting(tokens: list[Token]) -> None:
    """Refuse token nesting sqlglot's recursive-descent parser could not take.

    >>> from sqlglot.tokens import Tokenizer
    >>> check_nesting(Tokenizer().tokenize("SELECT (((a))) FROM t WHERE NOT - b = 1"))
    >>> try:
    ...     check_nesting(Tokenizer().tokenize("SELECT " + "(" * 40 + "a" + ")" * 40))
    ... except SqlError as err:
    ...     err.code, err.detail
    ('too_deep', {'limit': 32})
    """
    depth = 0
    run = 0
    previous: TokenType | None = None
    for token in tokens:
        kind = token.token_type
        if kind in _OPEN:
            depth += 1
            run = 0
        elif kind in _CLOSE:
            depth -= 1
            run = 0
        elif kind in _PREFIX and previous not in _VALUE_END:
            run += 1
        else:
            run = 0
        if depth + run > MAX_NESTING:
            raise SqlError(
                "too_deep",
                f"the query nests {depth + run} levels (parentheses, function calls, subqueries, CASE, NOT); "
                f"at most {MAX_NESTING} are accepted",
                token.line,
                token.col,
                {"limit": MAX_NESTING},
            )
        previous = kind


def too_deep(depth: int, line: int | None, column: int | None) -> SqlError:
    """The error for an expression tree deeper than ``MAX_DEPTH`` (a long chain of non-associative operators)."""
    return SqlError(
        "too_deep",
        f"the query's expressions nest {depth} levels deep (for example a chain of that many '+' terms); "
        f"at most {MAX_DEPTH} are accepted",
        line,
        column,
        {"limit": MAX_DEPTH},
    )
