"""Property-based fuzzing: no input, however malformed, gets anything but a diagnostic or a build.

Inputs: arbitrary unicode text, and bundled specs mutated by deleting, duplicating, swapping and
replacing characters, tokens and lines (a few hundred examples per run). Each goes through the
whole pipeline in memory (parse → validate → derive → generate); an exception other than
``MuhError`` fails the test with the input that caused it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from muh.derive import derive
from muh.diagnostics import MuhError
from muh.pipeline import Loaded, render
from muh.schema import load

SPECS = [p.read_text() for p in sorted((Path(__file__).resolve().parents[2] / "specs").glob("*.muh"))]
TOKENS = [
    "{",
    "}",
    "[",
    "]",
    "(",
    ")",
    "=",
    ",",
    "..",
    "step",
    "on",
    "muh",
    '"',
    "#",
    "@",
    ".",
    "-1",
    "0",
    "1e9",
    "99999999999999999999",
    "KiB",
    "GB/s",
    "ns",
    "true",
    "threads",
    "items",
    "policy",
    "space",
    "default",
    "float64",
    "hardware",
    "algorithm",
    "deploy",
    "\u00e9",
    "\U0001f600",
    "\x00",
    "\t",
    "\n",
    " ",
]


def run_pipeline(text: str) -> None:
    try:
        spec = load(text, "fuzz.muh")
        render(Loaded(spec, derive(spec), text))
    except MuhError as err:
        for d in err.diagnostics:
            d.render(text)  # rendering must not fail either
            assert d.message


@st.composite
def mutated(draw):
    text = draw(st.sampled_from(SPECS))
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["delete", "insert", "replace", "dup_line", "drop_line", "swap_lines"]))
        lines = text.splitlines(keepends=True)
        pos = draw(st.integers(0, max(0, len(text) - 1)))
        if kind == "delete":
            n = draw(st.integers(1, 20))
            text = text[:pos] + text[pos + n :]
        elif kind == "insert":
            text = text[:pos] + draw(st.sampled_from(TOKENS)) + text[pos:]
        elif kind == "replace":
            text = text[:pos] + draw(st.sampled_from(TOKENS)) + text[pos + 1 :]
        elif lines:
            i = draw(st.integers(0, len(lines) - 1))
            j = draw(st.integers(0, len(lines) - 1))
            if kind == "dup_line":
                lines.insert(i, lines[j])
            elif kind == "drop_line":
                del lines[i]
            else:
                lines[i], lines[j] = lines[j], lines[i]
            text = "".join(lines)
    return text


@pytest.mark.slow  # ~95% of tests/grammar + tests/schema; CI runs slow tests, with this full budget
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_specs_give_clean_errors_or_builds(text):
    run_pipeline(text)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_arbitrary_text(text):
    run_pipeline(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=60))
def test_token_soup(tokens):
    run_pipeline(" ".join(tokens))
