"""Every diagnostic code the source uses is registered (muh/codes.py) with a meaning and an example;
every registered code is used; docs/diagnostics.md is the registry's generated table."""

from __future__ import annotations

import re
from pathlib import Path

from muh.codes import CODES, markdown

ROOT = Path(__file__).resolve().parents[1]
CODE = re.compile(r"""["']([EW]-[A-Z0-9]+(?:-[A-Z0-9]+)*)["']""")


def used() -> dict[str, str]:
    out = {}
    for p in sorted((ROOT / "muh").rglob("*.py")):
        if p.name == "codes.py":
            continue
        for m in CODE.finditer(p.read_text(encoding="utf-8")):
            out.setdefault(m.group(1), f"{p.relative_to(ROOT)}")
    return out


def test_every_code_used_is_registered():
    missing = {c: where for c, where in used().items() if c not in CODES}
    assert not missing, "register these in muh/codes.py (meaning, example): " + repr(missing)


def test_every_registered_code_is_used():
    assert not sorted(set(CODES) - set(used()))


def test_entries_say_something():
    assert all(c.meaning and c.example for c in CODES.values())


def test_docs_table_is_generated():
    text = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    assert text == markdown(), "run `python -m muh.codes > docs/diagnostics.md`"
