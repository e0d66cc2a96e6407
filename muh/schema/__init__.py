"""Validate: the typed model of a spec (pydantic) and the checks against its hardware."""

from muh.schema.models import Algorithm, Deploy, Hardware, Measured, Policy, Space, Spec, Toolchain
from muh.schema.validate import from_module, load

__all__ = ["Algorithm", "Deploy", "Hardware", "Measured", "Policy", "Space", "Spec", "Toolchain", "from_module", "load"]
