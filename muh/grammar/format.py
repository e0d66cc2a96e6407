"""`muh fmt`: print a syntax tree in the canonical layout, comments kept.

Rules: two-space indent; one member per line, except a block of plain assignments with no comments
inside that fits in ``WIDTH`` columns, which is printed on one line with two spaces between
members; a trailing comment follows its line after two spaces; a blank line in the source between
two members is kept (at most one); top-level blocks are separated by one blank line.
Formatting is a fixed point: fmt(parse(fmt(x))) == fmt(x).
"""

from __future__ import annotations

from muh.grammar import ast

WIDTH = 100
INDENT = "  "


def value_text(v: ast.Value) -> str:
    return str(v)


def assign_text(a: ast.Assign) -> str:
    text = f"{a.name} = {value_text(a.value)}"
    if a.annotation is not None:
        text += f" @{a.annotation}"
    return text


class _Printer:
    def __init__(self, module: ast.Module):
        self.m = module
        self.lines_src = module.source.splitlines()
        self.comments = sorted(module.comments, key=lambda c: (c.line, c.col))
        self.used: set[int] = set()
        self.out: list[str] = []

    # comments ------------------------------------------------------------------------------------
    def _leading(self, before_line: int, indent: str) -> None:
        for i, c in enumerate(self.comments):
            if i not in self.used and c.line < before_line:
                self.used.add(i)
                if self.out and self._blank_before(c.line) and self.out[-1] != "" and not self.out[-1].endswith("{"):
                    self.out.append("")
                self.out.append(indent + c.text.rstrip())

    def _trailing(self, line: int, after_col: int) -> str:
        for i, c in enumerate(self.comments):
            if i not in self.used and c.line == line and c.col >= after_col:
                self.used.add(i)
                return "  " + c.text.rstrip()
        return ""

    def _blank_before(self, line: int) -> bool:
        return line >= 2 and not self.lines_src[line - 2].strip()

    def _first_line(self, node) -> int:
        """The first source line of a member, counting the comments that lead it."""
        line = node.span.line
        for c in reversed(self.comments):
            if c.line == line - 1 and c.col == self._indent_col(c.line):
                line = c.line
        return line

    def _indent_col(self, line: int) -> int:
        text = self.lines_src[line - 1]
        return len(text) - len(text.lstrip()) + 1

    # members -------------------------------------------------------------------------------------
    def members(self, members, indent: str) -> None:
        for n, m in enumerate(members):
            first = self._first_line(m)
            if n > 0 and self._blank_before(first) and self.out and self.out[-1] != "":
                self.out.append("")
            self._leading(m.span.line, indent)
            if isinstance(m, ast.Assign):
                text = indent + assign_text(m)
                self.out.append(text + self._trailing(m.span.end_line, m.span.end_col))
            else:
                self.block(m, indent)

    def _head(self, b: ast.Block) -> str:
        if b.condition is not None:
            return f"when {b.condition}"
        head = b.kind
        if b.label:
            head += f" {b.label}"
        if b.target:
            head += f" on {b.target}"
        return head

    def block(self, b: ast.Block, indent: str) -> None:
        head = indent + self._head(b)
        if not b.members:
            self.out.append(head + " {}" + self._trailing(b.span.end_line, b.span.end_col))
            return
        if all(isinstance(m, ast.Assign) for m in b.members) and not self._has_comments_inside(b):
            inline = head + " { " + "  ".join(assign_text(m) for m in b.members) + " }"
            if len(inline) <= WIDTH:
                self.out.append(inline + self._trailing(b.span.end_line, b.span.end_col))
                return
        opens_alone = all(m.span.line > b.span.line for m in b.members)
        self.out.append(head + " {" + (self._trailing(b.span.line, b.kind_span.end_col) if opens_alone else ""))
        self.members(b.members, indent + INDENT)
        self._leading(b.span.end_line, indent + INDENT)
        self.out.append(indent + "}" + self._trailing(b.span.end_line, b.span.end_col))

    def _has_comments_inside(self, b: ast.Block) -> bool:
        for c in self.comments:
            if b.span.line <= c.line <= b.span.end_line:
                if c.line == b.span.end_line and c.col >= b.span.end_col:
                    continue
                return True
        return False

    def module(self) -> str:
        if self.m.version is not None:
            self._leading(self.m.version_span.line, "")
            self.out.append(
                f"muh {self.m.version}" + self._trailing(self.m.version_span.line, self.m.version_span.end_col)
            )
        for m in self.m.members:
            if self.out and self.out[-1] != "":
                self.out.append("")
            self._leading(m.span.line, "")
            if isinstance(m, ast.Assign):
                self.out.append(assign_text(m) + self._trailing(m.span.end_line, m.span.end_col))
            else:
                self.block(m, "")
        rest = [c for i, c in enumerate(self.comments) if i not in self.used]
        if rest:
            if self.out and self.out[-1] != "":
                self.out.append("")
            self.out.extend(c.text.rstrip() for c in rest)
        while self.out and self.out[-1] == "":
            self.out.pop()
        return "\n".join(self.out) + "\n"


def format_module(module: ast.Module) -> str:
    return _Printer(module).module()
