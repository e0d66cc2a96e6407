"""The one base model of every typed stage output: frozen, strict about unknown keys."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    # Attribute docstrings are the fields' documentation; they are read on demand (``with_docs``),
    # since pydantic's use_attribute_docstrings reads every model's source at import (~30 ms a run).
    model_config = ConfigDict(frozen=True, extra="forbid")


def matching(v: str, pattern: str, refusal: str) -> str:
    """A validator's check that all of ``v`` matches ``pattern``: ``v``, else a ValueError saying ``refusal``."""
    import re

    if not re.fullmatch(pattern, v):
        raise ValueError(refusal)
    return v


class SpecModel(Model):
    """A model of what a user writes: also strict about types (`threads = "256"` or `sm_count = 1e3`
    is an error, not an integer)."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


def _attribute_docs(cls: type) -> dict[str, str]:
    """``{field: docstring}`` of the string literals written right under a class's annotated fields."""
    import ast
    import inspect
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError, SyntaxError):
        return {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    out = {}
    for a, b in zip(body, body[1:]):
        if (
            isinstance(a, ast.AnnAssign)
            and isinstance(a.target, ast.Name)
            and isinstance(b, ast.Expr)
            and isinstance(b.value, ast.Constant)
            and isinstance(b.value.value, str)
        ):
            out[a.target.id] = inspect.cleandoc(b.value.value)
    return out


_DOCUMENTED: set[type] = set()


def with_docs(root: type[BaseModel]) -> type[BaseModel]:
    """Give every field of ``root`` and of the models it contains its attribute docstring as the
    description (once; for `muh schema` and the generated reference)."""
    if root in _DOCUMENTED:
        return root
    _DOCUMENTED.add(root)
    seen: set[type] = set()

    def visit(cls) -> None:
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls in seen:
            return
        seen.add(cls)
        docs: dict[str, str] = {}
        for klass in reversed(cls.__mro__):
            if isinstance(klass, type) and issubclass(klass, BaseModel) and klass is not BaseModel:
                docs.update(_attribute_docs(klass))
        for name, f in cls.model_fields.items():
            if f.description is None and name in docs:
                f.description = docs[name]
            for t in _inner_types(f.annotation):
                visit(t)
        cls.model_rebuild(force=True)

    visit(root)
    return root


def _inner_types(t) -> list:
    import typing

    out, todo = [], [t]
    while todo:
        x = todo.pop()
        args = typing.get_args(x)
        if args:
            todo.extend(args)
        else:
            out.append(x)
    return out
