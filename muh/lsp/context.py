"""What may be written at a cursor in a half-typed buffer: the blocks around it and the statement
under way, read from the grammar's own LALR parser state (lark's interactive parser) over the text
before the cursor — so completion works while the rest of the file does not parse.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from lark import Token, Tree
from lark.exceptions import LarkError

from muh.grammar.parser import grammar

_WORD_TAIL = re.compile(r"[A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Frame:
    kind: str
    label: str | None = None
    target: str | None = None


@dataclass
class Context:
    """``frames``: the open blocks, outermost first. ``where``: what the cursor is about to write —

    - ``key``: a key or a block inside ``frames[-1]`` (or a top-level block);
    - ``label``: the name after a block kind (``head`` holds the kind);
    - ``on``: ``on <hardware>`` after a block's label (``head`` = kind, label);
    - ``target``: a hardware name after ``on``;
    - ``value``: a value of ``key`` (``in_list``: inside ``[…]``; ``in_call``: the argument names of a call);
    - ``unit``: a unit right after a number of ``key`` (a new key may start here too);
    - ``none``: nothing sensible (inside a string, a comment, or after a syntax error).
    """

    where: str
    frames: list[Frame] = field(default_factory=list)
    key: tuple[str, ...] = ()
    head: tuple[str, ...] = ()
    prefix: str = ""
    in_list: bool = False
    in_call: str | None = None


def _names(item) -> tuple[str, ...]:
    if isinstance(item, Token):
        return (str(item),) if item.type == "NAME" else ()
    if isinstance(item, Tree):
        if item.data == "path":
            return tuple(str(t) for t in item.children)
        if item.data in ("label", "target"):
            out: tuple[str, ...] = ()
            for c in item.children:
                out += _names(c)
            return out
    return ()


def _kind(item) -> str | None:
    if isinstance(item, Token):
        return item.type
    if isinstance(item, Tree):
        return str(item.data)
    return None


def context_at(text: str, offset: int) -> Context:
    """The completion context at character ``offset`` of ``text``."""
    before = text[:offset]
    prefix = _WORD_TAIL.search(before).group(0)
    before = before[: len(before) - len(prefix)]
    line = before[before.rfind("\n") + 1 :]
    if "#" in line or line.count('"') % 2:
        return Context("none", prefix=prefix)  # a comment or a string (a rare `#` in a string loses completion)
    try:
        ip = grammar().parse_interactive(before)
        ip.exhaust_lexer()
    except LarkError:
        return Context("none", prefix=prefix)
    frames, current = _open_blocks(list(ip.parser_state.value_stack))
    ctx = Context("key", frames, prefix=prefix)
    kinds = [_kind(x) for x in current]
    if "EQUAL" in kinds:
        return _in_assignment(ctx, current, kinds)
    if not current:
        return ctx
    return _in_block_head(ctx, current, kinds)


def _open_blocks(stack: list) -> tuple[list[Frame], list]:
    """(the blocks open at the end of the parser's value stack, outermost first; the items of the
    statement under way)."""
    frames: list[Frame] = []
    current: list = []
    for item in stack:
        kind = _kind(item)
        if kind == "LBRACE":
            frames.append(_frame(current))
            current = []
        elif kind == "RBRACE":
            if frames:
                frames.pop()
            current = []
        elif kind in ("__start_star_0", "assign", "block", "version") or (
            isinstance(item, Tree) and item.data.startswith("__")
        ):
            current = []
        else:
            current.append(item)
    return frames, current


def _frame(head_items: list) -> Frame:
    """The block a `{` opens, from the statement before it: its kind, label and `on` target."""
    head = [x for x in head_items if _kind(x) in ("path", "NAME", "label", "target")]
    names = [_names(x) for x in head]
    frame = Frame(".".join(names[0]) if names else "?")
    for x, n in zip(head[1:], names[1:]):
        if _kind(x) == "target":
            frame = Frame(frame.kind, frame.label, ".".join(n))
        else:
            frame = Frame(frame.kind, ".".join(n), frame.target)
    return frame


def _in_assignment(ctx: Context, current: list, kinds: list) -> Context:
    """After `key =`: a value (in a list or a call's arguments), a unit after a number, or a new key."""
    eq = kinds.index("EQUAL")
    ctx.key = tuple(n for x in current[:eq] for n in _names(x))
    rest = current[eq + 1 :]
    rk = [_kind(x) for x in rest]
    depth_list = rk.count("LSQB") - rk.count("RSQB")
    depth_call = rk.count("LPAR") - rk.count("RPAR")
    if depth_call > 0:
        return _in_call(ctx, rest, rk)
    if not rest or (depth_list > 0 and rk[-1] in ("LSQB", "COMMA")):
        ctx.where, ctx.in_list = "value", depth_list > 0
        return ctx
    if rk[-1] in ("NUMBER", "number"):
        ctx.where = "unit"
        return ctx
    ctx.where = "key" if depth_list <= 0 else "none"
    return ctx


def _in_call(ctx: Context, rest: list, rk: list) -> Context:
    """Inside a call's parentheses: an argument name, an argument's value, or a unit after its number."""
    call = next((x for x in reversed(rest) if _kind(x) == "NAME"), None)
    ctx.where, ctx.in_call = ("value", str(call) if call is not None else None)
    if rk and rk[-1] == "EQUAL":  # a keyword argument's value
        ctx.in_call = None
        ctx.key = ctx.key + (str(rest[-2]) if len(rest) >= 2 else "",)
    elif rk and rk[-1] not in ("LPAR", "COMMA"):
        ctx.where = "none" if rk[-1] != "NUMBER" else "unit"
        if ctx.where == "unit" and len(rest) >= 3 and _kind(rest[-2]) == "EQUAL":
            ctx.key = ctx.key + (str(rest[-3]),)
    return ctx


def _in_block_head(ctx: Context, current: list, kinds: list) -> Context:
    """In a block's head: its label after the kind, `on` after the label, the target after `on`."""
    heads = [_names(x) for x in current]
    if kinds[-1] == "ON":
        ctx.where, ctx.head = "target", tuple(".".join(n) for n in heads[:-1])
    elif len(current) == 1 and kinds[0] in ("NAME", "path"):
        ctx.where, ctx.head = "label", heads[0]
    elif len(current) == 2 and kinds[-1] == "label":
        ctx.where, ctx.head = "on", tuple(".".join(n) for n in heads)
    else:
        ctx.where = "none"
    return ctx
