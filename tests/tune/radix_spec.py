"""A spec for radix sort's `muh tune` tests (imported by them: tests/tune is on sys.path under pytest)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def radix_space_spec(tmp_path: Path, space: str) -> Path:
    """A copy of specs/h200.muh whose radix_sort `space` block is ``space`` (the spec's own replaced)."""
    text = (ROOT / "specs" / "h200.muh").read_text()
    at = text.index("algorithm radix_sort on h200")
    end = text.index("\n}\n", at)
    own = text.find("\n  space {", at, end)
    path = tmp_path / "h200.muh"
    path.write_text(text[: own if own >= 0 else end] + f"\n  {space}" + text[end:])
    return path
