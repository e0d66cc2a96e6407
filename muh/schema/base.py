"""The one base model of every typed stage output: frozen, strict about unknown keys."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)


class SpecModel(Model):
    """A model of what a user writes: also strict about types (`threads = "256"` or `sm_count = 1e3`
    is an error, not an integer)."""

    model_config = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True, strict=True)
