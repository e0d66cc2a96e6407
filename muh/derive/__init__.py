"""Derive: resolved policies per element type, each number with its rule and inputs."""

from muh.derive.model import Derived, DerivedAlgorithm, Resolved, ResolvedPolicy
from muh.derive.resolve import derive, hardware_fingerprint, policy_keys, scaling_budget

__all__ = [
    "Derived",
    "DerivedAlgorithm",
    "Resolved",
    "ResolvedPolicy",
    "derive",
    "hardware_fingerprint",
    "policy_keys",
    "scaling_budget",
]
