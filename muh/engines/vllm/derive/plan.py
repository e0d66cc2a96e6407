"""The resolved deployment: what the vLLM, Docker and run-file emitters print, nothing left to decide.

Built by ``muh.engines.vllm.derive.build_plan.resolve`` from a ``Spec`` and one of its ``deploy`` blocks.
Every tuned number is a ``Resolved`` (value, rule, inputs, where) so ``muh explain`` and the
deploy plan's semantic diff can say how it came to be.
"""

from __future__ import annotations

from typing import Optional

from muh.derive.model import DeployPlan, Resolved
from muh.engines.vllm.derive.effective import Effective
from muh.schema.base import Model

IMAGE_ROOT = "/opt/muh"
"""Where the image keeps muh's files (the Dockerfile's COPY target; ``MUH_ROOT`` overrides it in tests)."""
TUNED_FILE = "vllm/deploy.json"
"""The generated file with every tuned value and its provenance (``EnginePlugin.tuned_file``)."""


class MoeTile(Model):
    BLOCK_SIZE_M: int
    BLOCK_SIZE_N: int
    BLOCK_SIZE_K: int
    GROUP_SIZE_M: int
    num_warps: int
    num_stages: int


class MoePlan(Model):
    file_name: str
    """vLLM's rule: ``E={E},N={N},device_name={name}[,dtype=…].json``."""
    experts: Resolved
    n: Resolved
    device_name: Resolved
    tiles: dict[int, MoeTile]
    """Batch size M → tile; keys cover every M the serving flags allow (nearest key is used)."""
    rule: Resolved
    """How the tiles were derived (a ``str`` value naming the rule, inputs as used)."""


class Edit(Model):
    id: str
    file: str
    anchor: str
    new: str
    line: int
    values: dict[str, Resolved]
    """tune key → the value this edit writes."""


class Rebind(Model):
    """A module-level name the plugin replaces: ``module.attr`` ← ``provider`` (``pkg.mod:callable``)."""

    name: str
    module: str
    attr: str
    provider: str
    generated: bool = False
    """The provider ships inside the plugin (e.g. the MoE default config) rather than elsewhere."""
    selftest: Optional[str] = None
    """The self-test op that gates it: rebound only when the card's self-test selected that op."""


class Point(Model):
    """A tuning point: the code path it reaches, and whether the spec's model + engine + flags reach it."""

    id: str
    reaches: str
    """file, function, condition (the stock code path the point changes)."""
    status: str  # reached | dead | inactive
    reason: str
    """Why reached/dead/inactive, with the numbers used."""
    mechanism: str
    """edit | file | rebind | provide | none — how the point is shipped (nothing ships when not reached)."""
    confirm: Optional[tuple[str, str]] = None
    """(file under site-packages, literal) the image build reports on: the model's code names the path."""


class CondFlag(Model):
    """Flags the run file passes only when the installed engine has them (decided at image build)."""

    id: str
    argv: tuple[str, ...]
    at: tuple[int, ...] = ()
    """Indices of ``argv`` in ``VllmPlan.command``."""
    checks: tuple[str, ...]
    """Literal strings searched in the engine's Python sources; any hit = present."""
    provider: tuple[tuple[str, str], ...] = ()
    """(file under vllm/, literal) pairs that all hold when muh's own provider can register it instead."""
    requires: tuple[str, ...] = ()
    """Groups that must have been accepted too (``--enable-reasoning`` goes with ``--reasoning-parser``)."""
    why: str


class PreStep(Model):
    name: str
    argv: tuple[str, ...]
    on_failure: Optional[str] = None
    required: bool = False
    stderr_to_stdout: bool = True
    timeout_s: Optional[int] = None
    shell: Optional[str] = None
    """A step muh writes itself as shell text (its own quoting, no spec strings inside)."""


class Provide(Model):
    """A vendor function the variant lacks, provided by the plugin only while it is absent."""

    name: str
    module: str
    attr: str
    provider: str
    selftest: Optional[str] = None
    """The self-test op that gates it (as ``Rebind.selftest``)."""
    arity: Optional[int] = None
    """The number of arguments the fork calls the vendor function with; a call with another raises what the
    fork's lookup of the absent name raises (AttributeError)."""


class SelfTestCase(Model):
    op: str
    """muh's op (``muh_kernels.selftest`` knows its inputs, reference and call)."""
    shape: tuple[int, ...]
    dtype: str
    engine: str
    """``module:attr`` of the engine's own function, or ``torch`` (the PyTorch path the engine runs instead)."""
    why: str
    """Where the shape comes from (the served flags and model)."""


class SelfTest(Model):
    """The start step that lets the card decide which muh ops run (``muh_kernels.selftest``)."""

    out: str
    """The result file the plugin reads (``MUH_SELFTEST_RESULT`` overrides it at run time)."""
    cases: tuple[SelfTestCase, ...]
    budget_s: int
    timeout_s: int


class OpsImage(Model):
    """muh's ops in the image: the ``muh_kernels`` package built from the deploy hardware's kernels (decided in
    derive, once the kernels are: muh/engines/vllm/derive/ops_image.py; the image steps only run it)."""

    package: str
    """The package's folder in the build (``muh_kernels``, or ``<hardware>/muh_kernels`` beside several)."""
    src: str
    """The kernels' folder under the image's muh folder (``""``: its root)."""
    compiler: str
    flags: tuple[str, ...]


class VllmPlan(DeployPlan):
    base_version: str = ""
    """The upstream vLLM release whose flag table and anchors the variant shares (the wheel muh checks against)."""
    version_guard: str
    """The ``major.minor.patch`` the plugin accepts at run time (forks keep the release number)."""
    base_image: str
    concurrency: int
    command: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    tuned: dict[str, Resolved]
    """Every tuned value by dotted name (``serve.max_num_seqs``, ``moe.tiles.1.BLOCK_SIZE_M`` …)."""
    edits: tuple[Edit, ...]
    moe: Optional[MoePlan] = None
    rebinds: tuple[Rebind, ...] = ()
    needs_triton: bool = False
    folder: str = "muh"
    """Where the non-root files live in the deployed repository (the Dockerfile's COPY source)."""
    kernels: bool = False
    """muh's generated kernels are built into the image (ops served by muh)."""
    py_compile: tuple[str, ...] = ()
    """Files (relative to site-packages) the image build byte-compiles after patching."""
    variant: str = ""
    """The engine variant (``enginex bi100-v1.2.3``); every fork fact used comes from it."""
    points: tuple[Point, ...] = ()
    cond_flags: tuple[CondFlag, ...] = ()
    run_form: str = "bash"
    pre: tuple[PreStep, ...] = ()
    provides: tuple[Provide, ...] = ()
    triton: str = "true"
    """true | false | unknown: Triton-dependent steps are optional unless true."""
    site_packages: tuple[str, ...] = ()
    registry_subprocess: str = "vllm.model_executor.models.registry"
    op_signatures: dict[str, tuple[str, ...]] = {}
    moe_file: Optional[str] = None
    """The MoE config file name the ``moe`` block names, shipped or not (the probe looks for it in the image)."""
    parser_providers: tuple[str, ...] = ()
    """Tool-call parsers muh ships (``vllm/parsers/muh_<name>.py``, passed with ``--tool-parser-plugin``)."""
    api_features: tuple[str, ...] = ()
    """Request features the plugin's API hook handles (``api { accept = [...] }``)."""
    max_tokens_cap: Optional[int] = None
    """``api.max_tokens_cap``: a request without ``max_tokens`` gets it, fitted to the context the prompt leaves
    (compat.fit_context); an explicit ``max_tokens`` is left to the engine."""
    api_hook_flag: bool = False
    """The run file passes ``--middleware`` (the engine's own hook; conditional where the variant may lack it)."""
    chat_template: Optional[str] = None
    """Where the run file writes the model's chat template without the empty think block (``thinking_off``),
    passed as ``--chat-template`` when written; None: the model's own template."""
    model: str = "/model"
    effective: Optional[Effective] = None
    """The serve values the server runs with, read once from the serve block (muh/engines/vllm/derive/effective.py)."""
    ops_image: Optional[OpsImage] = None
    """muh's ops in the image (None: no rebind is served by the ops package, or it cannot be built here)."""
    max_n: int = 0
    selftest: Optional[SelfTest] = None
    """The self-test before the server starts (a start step, ``pre``), when muh's ops are rebound or provided."""
    """Largest ``n`` / ``best_of`` a request may ask for (``n_within_max_num_seqs``: max_num_seqs); 0 = no limit."""
