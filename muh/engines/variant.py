"""An engine variant as data: what one build of an engine has, lacks, or leaves ``unknown``.

Every generator and check reads a ``Variant``; nothing about a fork is written in a template. A
variant names the flag table it shares with its upstream release (``base``) and lists its
divergences: files it rewrote, vendor ops (present / missing / unknown), extra flags and parsers,
whether Triton is importable, its typed environment knobs, and — per model architecture — which
code paths the model really runs (so muh can say which tuning points are reached).

``unknown`` is a value: muh then emits the thing as an optional, build-time-checked step.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, Optional, Union

from pydantic import Field

from muh.schema.base import Model

Tri = Union[bool, Literal["unknown"]]
"""present (True), absent (False), or not known without access to the image ("unknown")."""


class EnvKnob(Model):
    type: Literal["bool01", "int", "enum", "str"]
    """``bool01``: the strings ``0``/``1``; ``enum``: one of ``choices``."""
    choices: list[str] = []
    default: Optional[str] = None
    """The engine's default when the variable is unset (``None``: unknown)."""
    meaning: str
    source: str
    """Where the fact comes from (facts file and section)."""


class VendorOp(Model):
    vendor: str
    """The vendor library's name for it (``ixformer.functions.<vendor>``)."""
    present: Tri
    note: str = ""


class OptionalFlag(Model):
    """A flag (with a fixed value shape) the variant may or may not have."""

    present: Tri
    check: list[str] = Field(min_length=1)
    """Literal strings whose presence in the installed engine's Python sources proves the flag/parser exists."""
    note: str = ""


class RunEvidence(Model):
    """What the facts report about the values one deploy key (``serve.max_model_len``, ``env.X``) was run with."""

    worked: dict[str, str] = {}
    """Value as the run file writes it (``80000``, ``0.9``, ``true``/``false``) → the reported run, cited."""
    failed: dict[str, str] = {}
    """Value → what went wrong in the reported run, cited."""
    note: str = ""
    """Anything else the facts say (e.g. values written in a run file no report shows running)."""
    default: Optional[str] = None
    """The value a spec that leaves the key out runs with (a switch: ``false``), for the verdict."""
    opt_in: str = ""
    """Why the value is off unless a spec turns it on (never measured on this engine, and the evidence
    against it); ``muh explain`` shows it for a deploy that leaves the key out."""


class ModelPaths(Model):
    """The code paths one architecture runs in this variant (evidence in ``source``)."""

    decode_attention: str
    prefill_attention: str
    moe: str
    norm: str
    """``rms_norm`` (stock RMSNorm → ops.rms_norm), ``gemma`` (rms_norm(x)·(1+w), never ops.rms_norm)."""
    head_norm: Optional[str] = None
    """Per-head RMSNorm of q/k (last dim = head_dim): ``gemma`` (GemmaRMSNorm modules applied to
    ``[tokens, heads, head_dim]``), else the name of what implements it (no rebind target)."""
    head_norm_note: str = ""
    """Evidence and caveats for ``head_norm``."""
    moe_routing: str = "ops.topk_softmax"
    activation: str = "ops.silu_and_mul"
    runs: dict[str, RunEvidence] = {}
    """Deploy key (``serve.<flag key>``, ``env.<NAME>``) → the values reported run with this model on this
    variant, and those that failed: ``muh explain SPEC deploy`` says which of a spec's values rest on a run."""
    confirm: dict[str, tuple[str, str]] = {}
    """Tuning point → (file under site-packages, literal): what the image build looks for to confirm that
    the model's code takes the point's path (a report line; nothing depends on it)."""
    source: str


class ProbeMarker(Model):
    """A path the engine probe looks for on the image (``contains``: a text the file must hold)."""

    path: str
    """Relative to site-packages, or absolute."""
    what: str
    contains: Optional[str] = None


class ProbeTargets(Model):
    """What ``muh probe``'s engine probe asks the image about this variant, beyond its ``vendor_ops``."""

    functions: list[str] = []
    """More ``vendor_module`` functions to report present or missing (the vendor_ops' are always asked)."""
    markers: list[ProbeMarker] = []
    source: str = ""


class Variant(Model):
    engine: str
    version: str
    base: str
    """The upstream release whose flag table and file anchors this variant starts from."""
    description: str
    source: str
    base_image: Optional[str] = None
    site_packages: list[str] = []
    """Known install folders of the engine's package parent (searched before asking Python)."""
    triton: Tri = True
    paged_attention_v2: Tri = True
    """False: the variant's ``paged_attention_v2`` raises NotImplementedError (decode is v1 only)."""
    max_shared_memory: Optional[int] = None
    """What the variant's own shared-memory query returns (bytes), when it differs from the card."""
    rewritten_files: dict[str, str] = {}
    """File (relative to site-packages) → what the variant changed: stock anchors there may be absent."""
    vendor_module: Optional[str] = None
    vendor_ops: dict[str, VendorOp] = {}
    """``vllm._custom_ops`` name → the vendor function it delegates to."""
    op_signatures: dict[str, list[str]] = {}
    """``vllm._custom_ops`` functions whose parameters differ from the base release (names in order)."""
    flags: dict[str, OptionalFlag] = {}
    tool_call_parsers: dict[str, OptionalFlag] = {}
    expected_flags: dict[str, str] = {}
    """Flags every known good run of this variant had (flag → evidence); a spec without one gets a warning."""
    env: dict[str, EnvKnob] = {}
    env_prefixes: list[str] = []
    """Variables with these prefixes are the variant's knobs: an unknown one is a warning listing the known."""
    env_unread: dict[str, str] = {}
    """Prefix → why no code the image ships reads such a variable (a deploy that sets one gets a warning)."""
    models: dict[str, ModelPaths] = {}
    """Architecture (config.json ``architectures[0]``) → the paths it runs in this variant."""
    probe: ProbeTargets = ProbeTargets()
    model_registry_subprocess: str = "vllm.model_executor.models.registry"
    """Module vLLM runs as ``python -m`` to inspect models; it loads general plugins, so the plugin must not patch
    there."""

    @property
    def label(self) -> str:
        return f"{self.engine} {self.version}"


def load_variants(folder: Path) -> dict[str, Variant]:
    """Every ``<engine>-<version>.json`` of an engine's ``variants/`` folder, by version."""
    out = {}
    for p in sorted(folder.glob("*.json")):
        v = Variant.model_validate(json.loads(p.read_text(encoding="utf-8")))
        out[v.version] = v
    return out
