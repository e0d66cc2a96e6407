"""What derive produces: resolved policies whose every number says where it came from."""

from __future__ import annotations

from typing import Literal, Optional, Union

from pydantic import Field, InstanceOf

from muh.derive.kernels import KernelBuilds
from muh.diagnostics import Diagnostic
from muh.families import limits
from muh.schema.base import Model
from muh.schema.models import Delay, Hardware, Measured

Origin = Literal["spec", "inherited", "derived", "measured", "default"]


class Resolved(Model):
    value: Union[bool, int, float, str, Delay]
    origin: Origin
    rule: str
    """Name of the rule (or `spec` / `inherited from default` …) that set the value."""
    inputs: dict[str, Union[int, float, str]] = {}
    where: Optional[str] = Field(default=None, exclude=True)
    """Source location (file:line:col) of the value it came from, if any: for `muh explain`, the editor and
    diagnostics, never written into a generated file (a comment above it would change every file)."""
    measured: Optional[Measured] = None
    stale: bool = False
    """A measured value whose hardware fingerprint no longer matches the spec."""


class _Values:
    """What a model holding ``values: dict[str, Resolved]`` answers."""

    def value(self, dim: str, default=None):
        """The resolved value of ``dim``, or ``default`` where it is not set."""
        r = self.values.get(dim)
        return default if r is None else r.value


class ResolvedBucket(_Values, Model):
    """The values of one size bucket of a policy (lo ≤ size < hi), each with its provenance."""

    size: str = "elements"
    """What the bucket tests (``elements``, ``k``: muh/families/base.py ``BUCKET_SIZES``)."""
    lo: int
    hi: Optional[int]
    label: str
    """The condition as written in the language, e.g. ``elements >= 2^24``."""
    layer: str
    """The policy the bucket is written in."""
    values: dict[str, Resolved]
    smem_bytes: Optional[int] = None


class ResolvedPolicy(_Values, Model):
    family: str
    hardware: str
    key: str
    """Policy key: the element type, optionally `.op` (e.g. float32.plus)."""
    dtype: str
    op: Optional[str]
    """An operator or an operator class (muh/schema/policy_key.py), if the key names one."""
    offset: Optional[int] = None
    """Offset width in bits, if the key names one."""
    value_type: Optional[str] = None
    """By-key families: the values' type, if the key names one (else the values are of ``dtype``)."""
    elem_size: int
    values: dict[str, Resolved]
    subs: dict[str, dict[str, Resolved]] = {}
    smem_bytes: Optional[int] = None
    """Shared memory the tile needs (tile-staging families)."""
    buckets: list[ResolvedBucket] = []
    """Size buckets, ascending and covering every size (none: one policy for every size)."""

    def get(self, dim: str) -> Resolved:
        return self.values[dim]


class DerivedAlgorithm(Model):
    family: str
    hardware: Hardware
    policies: dict[str, ResolvedPolicy]
    """Keyed by policy key (dtype or dtype.op)."""

    def for_type(self, dtype: str, op: str | None = None, offset: int = 32) -> ResolvedPolicy:
        """The most specific resolved policy covering the call (a type's own policy at least)."""
        from muh.schema.policy_key import Query, covering

        keys = covering([k for k in self.policies if k.split(".")[0] == dtype], Query(dtype, op or "", offset))
        if op is None:  # any operator: the type's own policy
            keys = [k for k in self.policies if k == dtype] or keys
        if not keys:
            raise KeyError(dtype)
        return self.policies[keys[-1]]


class OpsPolicy(Model):
    """The launch numbers of the LLM serving ops for one element type (rules: muh/derive/ops.py)."""

    dtype: str
    ctype: str
    code: int
    row_threads: Resolved
    vec: Resolved
    items_min: Resolved
    max_items: Resolved
    elt_threads: Resolved
    elt_items: Resolved
    elt_vec: Resolved
    topk_threads: Resolved
    max_per_lane: Resolved
    lo: int = 0
    hi: Optional[int] = None
    """Size bucket (rows × hidden, ``lo`` ≤ n < ``hi``) these numbers are for; 0, None: every size."""
    buckets: list["OpsPolicy"] = []
    """Size buckets by rows × hidden, ascending and covering every size, where a policy it is read from
    (the ops' own rms_norm / silu_and_mul, or reduce / transform) has buckets (the first one's numbers
    are this policy's own)."""

    @property
    def sized(self) -> list["OpsPolicy"]:
        """The size buckets, or this policy alone (one bucket covering every size)."""
        return self.buckets or [self]

    def values(self) -> list[tuple[str, Resolved]]:
        return [
            (n, getattr(self, n))
            for n in (
                "row_threads",
                "vec",
                "items_min",
                "max_items",
                "elt_threads",
                "elt_items",
                "elt_vec",
                "topk_threads",
                "max_per_lane",
            )
        ]


OpsPolicy.model_rebuild()


class OpsTarget(Model):
    """The LLM serving ops of one hardware (or kernel preset): its warp and a policy per element type."""

    name: str
    warp_size: int
    cxx: int
    policies: dict[str, OpsPolicy]
    """Keyed by element type (OPS_DTYPES)."""

    def with_warp(self, name: str, warp_size: int) -> "OpsTarget":
        """The same policies for a build with another logical warp (the emulation build)."""
        return self.model_copy(update={"name": name, "warp_size": warp_size})

    def errors(self) -> list[str]:
        errs = []
        for d, p0 in sorted(self.policies.items()):
            for p in p0.sized:
                at = f" (rows × hidden {p.lo}..{'' if p.hi is None else p.hi - 1})" if p0.buckets else ""
                for n in ("row_threads", "elt_threads", "topk_threads"):
                    v = getattr(p, n).value
                    if not limits.whole_warps(v, self.warp_size):
                        errs.append(f"ops.{d}.{n} = {v}{at} is not a multiple of the warp size {self.warp_size}")
        return errs


class InRoot(Model):
    """A path under the image's muh folder (``MUH_ROOT``, default ``Launch.root``): rendered as
    ``"${MUH_ROOT}"/<path>`` so the start script works wherever the folder is."""

    path: str


Word = Union[str, InRoot]
"""One word of a command: a literal (quoted once by the renderer) or a path in the image's muh folder."""


class StartStep(Model):
    """One step the start script runs before the server (muh/codegen/start.py renders it, in order)."""

    name: str
    argv: tuple[Word, ...]
    required: bool = False
    """A failure stops the container (the server does not start); else it is logged and start goes on."""
    on_failure: Optional[str] = None
    """A tolerated step's line on failure (None: none)."""
    timeout_s: Optional[int] = None
    stderr_to_stdout: bool = True
    adds: tuple[Word, ...] = ()
    """Server words appended when the step succeeds (``--chat-template <file it wrote>``)."""
    opt_in: Optional[str] = None
    """An environment variable that must be ``1`` for the step to run (else one line says how to turn it on)."""
    needs: tuple[InRoot, ...] = ()
    """Files the image build made that the step runs (absent: one line, the step is skipped)."""
    output: Optional[str] = None
    """A file the step's output goes to instead of the log."""
    on_success: Optional[str] = None
    """The line logged when the step succeeds (None: none)."""


class FlagGroup(Model):
    """Server words passed only when the image build found them in the engine (a marker file)."""

    id: str
    at: tuple[int, ...]
    """Indices of the words in ``Launch.argv``."""
    marker: str
    """The marker file (relative to the image's muh folder) the image build writes when the engine has them."""


class Launch(Model):
    """What a platform starts, in no platform's terms: the engine's server, its environment and what runs
    before it. The engine's resolve makes it (``DeployPlan.launch``); every platform renders it the same
    way (muh/codegen/start.py: the start script) inside its own files (run file, image, Deployment)."""

    argv: tuple[str, ...]
    """The server's command line, every flag visible (the conditional ones too: ``groups`` drops them)."""
    env: tuple[tuple[str, str], ...] = ()
    steps: tuple[StartStep, ...] = ()
    groups: tuple[FlagGroup, ...] = ()
    script: bool = True
    """Start through the start script (False: the server's argv alone, no steps)."""
    root: str = "/opt/muh"
    """Where the image keeps muh's files (the deployed folder's copy)."""
    image_steps: tuple[str, ...] = ()
    """Build-time scripts (generated paths, relative to the muh folder) the image runs, in order."""
    base_image: str = ""
    folder: str = "muh"
    """Where the non-root files live in the deployed repository (copied to ``root``)."""
    model: str = "/model"
    port: int = 8000
    health: str = "/health"
    """The server's health endpoint (a GET answers 200 once it serves)."""
    concurrency: int = 1
    gpus: int = 1
    """Devices the server uses (the tensor-parallel size)."""
    probe: bool = False
    """The image carries muh's probe of the card (decided in derive, muh/derive/deploy.py: it can be built)."""


class DeployPlan(Model):
    """What every engine's plan of a deploy block has (``muh.engines.base.Plan``); an engine's plan
    (``VllmPlan``) adds what its files need. Built by derive (muh/derive/deploy.py), rendered by codegen."""

    deploy: str
    hardware: str
    engine: str
    engine_version: str
    tuned: dict[str, Resolved] = {}
    """Every value the plan sets, keyed like ``muh explain SPEC deploy.<key>``, with its provenance."""
    launch: Optional[Launch] = None
    """What a platform starts (None: the engine starts nothing a platform renders)."""
    platform: str = "computility"
    """The platform plug-in (``muh.platforms``) whose files start ``launch`` (the deploy block's ``platform``)."""


class Derived(Model):
    spec_name: str
    spec_sha256: str
    algorithms: dict[str, DerivedAlgorithm]
    """Keyed like Spec.algorithms: `<family>@<hardware>`."""
    ops: dict[str, OpsTarget] = {}
    """The LLM serving ops' launch policies per hardware name (muh/derive/ops.py)."""
    deploy: Optional[InstanceOf[DeployPlan]] = Field(None, exclude=True)
    """The plan of the spec's deploy block, resolved by its engine (muh/derive/deploy.py); None: no
    block, or one that does not resolve (``deploy_diagnostics`` says why)."""
    deploy_diagnostics: list[InstanceOf[Diagnostic]] = Field([], exclude=True)
    """What resolving the deploy block found (errors and warnings); ``muh build`` reports them with the
    deploy files (a bad deploy block does not stop kernels, tune or explain of the algorithms)."""
    kernels: Optional[InstanceOf[KernelBuilds]] = Field(None, exclude=True)
    """The kernels' configs, one per hardware with kernel families, validated (muh/derive/kernels.py):
    made once here; the kernels, ops and ops-package emitters, the probe and the clang_cuda check read
    them (``kernels.with_emulation(w)`` adds a ``--emulate-warp`` build)."""

    def of(self, family: str, hardware: str | None = None) -> list[DerivedAlgorithm]:
        return [
            a
            for k, a in self.algorithms.items()
            if a.family == family and (hardware is None or a.hardware.name == hardware)
        ]
