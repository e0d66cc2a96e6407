"""One strict jinja2 environment; escaping filters per output language.

Templates only loop and print; arithmetic and decisions happen in derive or in the emitter.
"""

from __future__ import annotations

import json
import re
import shlex
from functools import lru_cache

import jinja2

_PLAIN = re.compile(r"[ !#-\[\]-~]*")  # printable ASCII without " and \\


def cxx_str(s: object) -> str:
    """A C++ string literal."""
    text = str(s)
    if _PLAIN.fullmatch(text):
        return '"' + text + '"'
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif not ch.isprintable() or ord(ch) > 126:
            out.extend(f"\\x{b:02x}" for b in ch.encode("utf-8"))
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def yaml_str(s: object) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(str(s), ensure_ascii=False)


def shell_word(s: object) -> str:
    return shlex.quote(str(s))


def py_repr(v: object) -> str:
    return repr(v)


def cxx_comment(s: object) -> str:
    """Text safe inside a // comment (no line breaks, no trigraph-ish surprises)."""
    return re.sub(r"[\r\n]+", " ", str(s)).replace("*/", "* /")


@lru_cache(maxsize=1)
def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates kept between runs (jinja checks each template's checksum on load)."""
    from muh import cache

    folder = cache.private("jinja")
    return jinja2.FileSystemBytecodeCache(str(folder)) if folder is not None else None


def _folder(package: str, sub: str) -> str:
    from importlib.resources import files

    return str(files(package).joinpath(sub)) if sub else str(files(package))


@lru_cache(maxsize=None)
def environment(package: str, *more: tuple[str, str]) -> jinja2.Environment:
    """The environment of ``package``'s ``templates/`` folder, then each further (package, subfolder)
    (``""``: the package's own folder) searched in that order."""
    loader = (
        jinja2.PackageLoader(package, "templates")
        if not more
        else jinja2.FileSystemLoader([_folder(p, s) for p, s in more])
    )
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=_bytecode_cache(),
    )
    env.filters.update(
        cxx_str=cxx_str, yaml_str=yaml_str, shell_word=shell_word, py_repr=py_repr, cxx_comment=cxx_comment
    )
    return env


def render(package: str, template: str, **variables) -> str:
    """Render ``templates/<template>`` found beside the emitter module ``package``."""
    return environment(package).get_template(template).render(**variables)


def render_from(search: tuple[tuple[str, str], ...], template: str, **variables) -> str:
    """Render ``template``, found in the first of ``search`` ((package, subfolder), ``""``: the package's
    own folder) that holds it: a family's sources in its folder (muh/families/<name>/), the shared ones after."""
    return environment("", *search).get_template(template).render(**variables)
