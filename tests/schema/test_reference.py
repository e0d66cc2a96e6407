from pathlib import Path

from muh.schema.reference import splice

DOC = Path(__file__).resolve().parents[2] / "docs" / "language.md"


def test_language_reference_is_current():
    text = DOC.read_text()
    assert splice(text) == text, "docs/language.md is stale: run `python -m muh.schema.reference`"
