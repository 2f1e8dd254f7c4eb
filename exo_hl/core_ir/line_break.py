"""Line breaking for printed procedures (80 columns).

The printer emits one line per statement; a line that fits is kept as it
is, so printing costs one length check per statement. A longer line is
broken only where Python allows it without a backslash, inside brackets,
and only

- between the arguments of a parameter list or call (after a comma),
- otherwise between the operands of the loosest binary operator at the top
  of an expression (after the operator), the expression being put in
  parentheses when it is the value of an assignment, an ``assert`` or an
  ``if`` condition;

never inside a subscript or window (``A[i, 8 * no + ni]`` stays whole).
Continuation lines align with the first operand after the opening bracket
(or hang, indented, after it when that leaves more room). A line with no
such break point stays long. Breaking only inserts newlines and spaces
inside brackets (and one pair of parentheses around an expression), so the
text parses to the same procedure.
"""
from __future__ import annotations

import re
from typing import List, Optional

from ..caches import memo
from . import operators as OPS

#: the width printed procedures aim for
COLUMN_LIMIT = 80

_TOKEN = re.compile(r"""
    (?P<str>"(?:[^"\\]|\\.)*")
  | (?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?)
  | (?P<name>[A-Za-z_]\w*)
  | (?P<op><=|>=|==|!=|\+=|->|\*\*|//|[-+*/%<>=@:,.()\[\]{}])
  | (?P<ws>\s+)
""", re.VERBOSE)

_KEYWORDS = {"and", "or", "not", "in", "is", "if", "elif", "else", "for",
             "assert", "def", "lambda", "return", "pass"}
#: where a line may break: at the loosest binding operator (the printer's
#: precedences, core_ir.operators), commas loosest of all
_PRIORITY = {",": 0, "!=": OPS.PREC_CMP, **OPS.PY_PREC}
_CLOSE = {"(": ")", "[": "]", "{": "}"}


class _Tok:
    __slots__ = ("kind", "text", "start", "end")

    def __init__(self, kind, text, start, end):
        self.kind, self.text, self.start, self.end = kind, text, start, end


class _Group:
    """A bracketed run ``( ... )``; ``items`` are its contents."""

    __slots__ = ("open", "items", "start", "end", "kind")

    def __init__(self, open_, items, start, end):
        self.open, self.items, self.start, self.end = open_, items, start, end
        self.kind = "group"


def _parse(text) -> Optional[list]:
    """Top-level items of ``text`` (tokens and bracket groups), or None if
    it does not tokenize or its brackets do not match."""
    stack: List[list] = [[]]
    opens: list = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            return None
        kind = m.lastgroup
        tok = m.group()
        pos = m.end()
        if kind == "ws":
            continue
        if tok in _CLOSE:
            opens.append((tok, m.start()))
            stack.append([])
        elif tok in (")", "]", "}"):
            if not opens or _CLOSE[opens[-1][0]] != tok:
                return None
            o, start = opens.pop()
            items = stack.pop()
            stack[-1].append(_Group(o, items, start, m.end()))
        else:
            stack[-1].append(_Tok(kind, tok, m.start(), m.end()))
    return stack[0] if not opens else None


def _is_operand(item) -> bool:
    if isinstance(item, _Group):
        return True
    return item.kind in ("num", "str") or (
        item.kind == "name" and item.text not in _KEYWORDS)


def _priority(seq, k) -> Optional[int]:
    """How good a break after ``seq[k]`` is (lower is better), or None."""
    item = seq[k]
    if isinstance(item, _Group) or item.kind not in ("op", "name"):
        return None
    p = _PRIORITY.get(item.text)
    if p is None:
        return None
    if item.text in "+-" and not (k > 0 and _is_operand(seq[k - 1])):
        return None  # unary
    return p


def _span(text, seq) -> str:
    return text[seq[0].start:seq[-1].end]


def _fill(text, seq, col, tail, limit) -> List[str]:
    """Lay out ``seq`` (inside brackets) starting at column ``col``, followed
    by ``tail``. The first line is relative (it continues the current line);
    the others carry their indentation."""
    flat = _span(text, seq) + tail
    if col + len(flat) <= limit:
        return [flat]
    seps = [(p, k) for k in range(len(seq) - 1)
            if (p := _priority(seq, k)) is not None]
    if not seps:
        return _fill_inside_group(text, seq, col, tail, limit)
    best = min(p for p, _ in seps)
    cuts = [k for p, k in seps if p == best]
    pieces, a = [], 0
    for k in cuts:
        pieces.append(seq[a:k + 1])
        a = k + 1
    pieces.append(seq[a:])
    pad = " " * col
    lines: List[str] = []
    cur = None
    for i, piece in enumerate(pieces):
        last = i == len(pieces) - 1
        ptail = tail if last else ""
        ptext = _span(text, piece) + ptail
        if cur is not None:
            gap = text[pieces[i - 1][-1].end:piece[0].start]
            if col + len(cur) + len(gap) + len(ptext) <= limit:
                cur += gap + ptext
                continue
            lines.append(cur)
        if col + len(ptext) <= limit:
            cur = ptext
            continue
        # the piece alone is too long: break it further
        if last:
            sub = _fill(text, piece, col, ptail, limit)
        else:
            sep_tail = text[piece[-2].end:piece[-1].end] if len(piece) > 1 \
                else ""
            sub = _fill(text, piece[:-1], col, sep_tail, limit) \
                if len(piece) > 1 else [ptext]
        lines.append(sub[0])
        lines += [ln[col:] for ln in sub[1:]]
        cur = lines.pop()
    lines.append(cur)
    return [lines[0]] + [pad + ln for ln in lines[1:]]


def _fill_inside_group(text, seq, col, tail, limit) -> List[str]:
    """No break point at this level: break inside the first parenthesized
    group (never a subscript) that reaches past the limit."""
    base = seq[0].start
    for g in seq:
        if isinstance(g, _Group) and g.open == "(" and g.items and \
                col + (g.end - base) > limit:
            before = text[base:g.start + 1]
            after = text[g.end - 1:seq[-1].end] + tail
            inner = _group_lines(text, g, col + len(before), after, limit,
                                 hang=col + 4)
            return [before + inner[0]] + inner[1:]
    return [_span(text, seq) + tail]


def _group_lines(text, g, col, tail, limit, hang) -> List[str]:
    """The contents of group ``g`` opened at ``col - 1``: aligned after the
    bracket, or hanging at column ``hang`` when that fits better."""
    aligned = _fill(text, g.items, col, tail, limit)
    if hang >= col or all(len(ln) <= limit for ln in
                          [" " * col + aligned[0]] + aligned[1:]):
        return aligned
    hanging = _fill(text, g.items, hang, tail, limit)
    hanging = ["", " " * hang + hanging[0]] + hanging[1:]
    if _badness(hanging, limit) < _badness(
            [" " * col + aligned[0]] + aligned[1:], limit):
        return hanging
    return aligned


@memo(maxsize=4096)
def break_line(line: str, limit: int = COLUMN_LIMIT) -> str:
    """``line`` (one printed statement, with its indentation) broken into
    several lines of at most ``limit`` columns where it can be."""
    if len(line) <= limit:
        return line
    body = line.lstrip(" ")
    indent = len(line) - len(body)
    items = _parse(body)
    if not items:
        return line
    first = items[0]
    lines = None
    if isinstance(first, _Tok) and first.text in ("def", "@", "for"):
        # the parameter list, the decorator's or the loop's arguments
        g = next((x for x in items if isinstance(x, _Group)
                  and x.open == "(" and x.items), None)
        if g is not None:
            before = body[:g.start + 1]
            after = body[g.end - 1:]
            hang = indent + (8 if first.text == "def" else 4)
            inner = _group_lines(body, g, indent + len(before), after,
                                 limit, hang)
            lines = [before + inner[0]] + inner[1:]
    elif isinstance(first, _Tok) and first.text in ("if", "elif", "assert"):
        rest = items[1:]
        colon = ":" if rest and isinstance(rest[-1], _Tok) and \
            rest[-1].text == ":" else ""
        if colon:
            rest = rest[:-1]
        if rest:
            lines = _wrapped(body, first.text + " ", rest, colon, indent,
                             limit, block=bool(colon))
    else:
        eq = next((k for k, x in enumerate(items) if isinstance(x, _Tok)
                   and x.text in ("=", "+=")), None)
        if eq is not None and eq + 1 < len(items):
            lhs = body[:items[eq].end] + " "
            lines = _wrapped(body, lhs, items[eq + 1:], "", indent, limit)
        else:  # a call statement
            lines = _fill_inside_group(body, items, indent, "", limit)
    if lines is None:
        return line
    out = [" " * indent + lines[0]] + lines[1:]
    return "\n".join(ln.rstrip() if k < len(out) - 1 else ln
                     for k, ln in enumerate(out))


def _wrapped(body, prefix, expr, suffix, indent, limit,
             block=False) -> List[str]:
    """``prefix expr suffix`` with ``expr`` broken: a single call is broken
    between its arguments; anything else is put in parentheses first.
    ``block``: the line opens a block (``if ...:``), whose continuation
    lines are indented further than the block's body."""
    if len(expr) == 2 and isinstance(expr[1], _Group) and \
            expr[1].open == "(" and _is_operand(expr[0]):
        g = expr[1]
        before = prefix + body[expr[0].start:g.start + 1]
        inner = _group_lines(body, g, indent + len(before),
                             ")" + suffix, limit, hang=indent + 8)
        return [before + inner[0]] + inner[1:]
    if len(expr) == 1 and isinstance(expr[0], _Group) and \
            expr[0].open == "(":
        g = expr[0]
        before = prefix + "("
        inner = _fill(body, g.items, indent + len(before), ")" + suffix,
                      limit) if g.items else ["()" + suffix]
        return [before + inner[0]] + inner[1:]
    before = prefix + "("
    col = indent + len(before)
    if block and col <= indent + 4:
        col = indent + 8
    inner = _fill(body, expr, col, ")" + suffix, limit)
    if len(inner) == 1:  # could not break it: no parentheses either
        return [prefix + _span(body, expr) + suffix]
    aligned = [before + inner[0]] + inner[1:]
    # or hanging: "x = (" then the expression indented on the next lines
    hang = indent + (4 if not suffix else 8)
    inner = _fill(body, expr, hang, ")" + suffix, limit)
    hanging = [before, " " * hang + inner[0]] + inner[1:]
    return min((aligned, hanging),
               key=lambda ls: _badness([" " * indent + ls[0]] + ls[1:],
                                       limit))


def _badness(lines, limit) -> tuple:
    """Fewer lines over the limit, then fewer columns over, then fewer
    lines."""
    over = [len(ln) - limit for ln in lines if len(ln) > limit]
    return (len(over), sum(over), len(lines))
