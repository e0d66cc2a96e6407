"""The shared editor of the language-server tests (one server per test module)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from lsp_client import Editor  # noqa: E402


@pytest.fixture(scope="module")
def editor():
    ed = Editor()
    yield ed
    if ed.alive():
        ed.shutdown()
