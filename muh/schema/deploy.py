"""The ``deploy`` block: where and how a spec's output is served (issues 5, 12, 15).

    deploy competition on bi100 {
      base_image = "harbor.4pd.io/modelhubxc/enginex-iluvatar/…-llm-infer:v1.2.3"
      engine = enginex "bi100-v1.2.3"      # any registered engine plug-in + its variant/version
      model = "/model"
      serve { max_num_seqs = 2  dtype = half … }            # one key per engine flag, exact names
      env { VLLM_ENGINE_ITERATION_TIMEOUT_S = 3600  BI100_MOE_COREX_TOPK_SOFTMAX = 1 }
      run { pre = [step(command = ["python3", "/workspace/fix.py", "/model"], on_failure = "fix failed")] }
      model_shape { architecture = "Qwen3_5MoeForCausalLM"  num_attention_heads = 16  head_dim = 256 }
      moe { experts = 256  intermediate_size = 512 }          # MoE config files for the model
      tune { paged_attention.v1_threshold = auto  ops = [rms_norm] }
    }

The engine plug-in named by ``engine`` (``muh.engines``) gives every key its meaning: its
flag table checks ``serve``, its variant types ``env`` knobs, its tuning points check ``tune``.
This module only gives the block its shape.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Literal, Optional, Union

from pydantic import Field, field_validator

from muh.schema.base import SpecModel as Model
from muh.schema.base import matching
from muh.schema.units import INT_MAX

Scalar = Union[bool, int, Decimal, str]


class Engine(Model):
    name: str
    """The engine plug-in (``vllm`` = stock vLLM, ``enginex`` = the competition's fork); see docs/deploy.md."""
    version: str
    """The release or variant of that engine the flags, files and tuning points are checked against."""

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        return matching(v, r"[a-z][a-z0-9_]{0,31}", f"engine name must be a lower-case identifier, got {v!r}")


class EngineExtensions(Model):
    """What the deployed engine has beyond what its plug-in knows; undeclared extras are errors."""

    flags: list[str] = []
    """Long options only the fork has, e.g. ``--reasoning-parser``."""
    tool_call_parsers: list[str] = []
    """Tool-call parser names only the fork registers, e.g. ``qwen3_coder``."""


class Moe(Model):
    """The model's mixture-of-experts shape: muh writes vLLM's per-device MoE tile file for it."""

    experts: int = Field(ge=1, le=65536)
    """``num_experts`` in the model's config.json."""
    intermediate_size: int = Field(ge=1, le=INT_MAX)
    """``moe_intermediate_size`` (per expert, whole; muh divides by tensor_parallel_size)."""
    top_k: Optional[int] = Field(None, ge=1, le=65536)
    """``num_experts_per_tok`` (documentation; vLLM's file name does not use it)."""
    device_name: Optional[str] = None
    """The name the runtime reports; default: the hardware block's ``device_name``."""
    dtype: Optional[Literal["fp8_w8a8", "int8_w8a16"]] = None
    """Quantised expert weights select a different file; omit for fp16/bf16 weights."""
    batch_sizes: Optional[list[Annotated[int, Field(ge=1, le=INT_MAX)]]] = None
    """Batch sizes to tabulate; default: every decode batch up to max_num_seqs and vLLM's tuner grid."""


class ModelShape(Model):
    """What the served model is, as far as the engine's code paths depend on it (from config.json)."""

    architecture: str
    """``architectures[0]`` of the model's config.json; the engine variant says which paths it runs."""
    num_attention_heads: Optional[int] = Field(None, ge=1)
    """Query heads of the whole model (muh divides by tensor_parallel_size)."""
    head_dim: Optional[int] = Field(None, ge=1)
    """Attention head size."""
    hidden_size: Optional[int] = Field(None, ge=1)
    """``hidden_size`` of the model's config.json: the rows the layer norms see (the start self-test's shape)."""


class Step(Model):
    """One pre-step of the run file, run by ``bash -c`` before ``exec`` of the server."""

    kind: Literal["step"]
    command: list[str] = Field(min_length=1)
    """argv of the step; muh quotes every word (spec strings cannot break out of the script)."""
    on_failure: Optional[str] = None
    """Tolerated step: the message echoed when it fails (the server still starts)."""
    required: bool = False
    """Required step: its failure stops the container with a message instead of starting the server."""
    stderr_to_stdout: bool = True
    """``2>&1`` (the platform's log shows stdout)."""
    timeout_s: Optional[int] = Field(None, ge=1, le=3600)
    """Kill the step after this many seconds (``timeout``), counted as a failure."""


class Run(Model):
    """How the run file starts the server."""

    form: Literal["bash", "argv"] = "bash"
    """``bash``: ``bash -c '<pre-steps>; exec python3 -m …'``; ``argv``: the server's argv only (no pre-steps)."""
    pre: list[Step] = []


ApiFeature = Literal[
    "max_completion_tokens",
    "reasoning_effort",
    "tool_calls_null_content",
    "n_within_max_num_seqs",
    "thinking_off",
    "unknown_fields",
    "tools_without_thinking",
    "n_greedy_fan_out",
    "reasoning_split",
]


class Api(Model):
    """Request features the served OpenAI API must handle (the platform's functional gate)."""

    accept: list[ApiFeature] = []
    """Each becomes a hook of muh's plugin in the API server; see docs/deploy.md for the behaviour of each."""
    max_tokens_cap: Optional[int] = Field(None, ge=1, le=INT_MAX)
    """Largest ``max_tokens`` a request gets (also the value when it gives none), and never more than the
    context the prompt leaves (max_model_len − prompt tokens); the team served 8192."""


class Deploy(Model):
    name: str
    on: str
    base_image: str
    engine: Engine
    model: str = "/model"
    concurrency: int = Field(1, ge=1, le=64)

    @field_validator("model")
    @classmethod
    def _model_path(cls, v: str) -> str:
        if not v.strip():
            raise ValueError('the model path is empty: the server would load nothing; write e.g. "/model"')
        return v

    serve: dict[str, Union[Scalar, list[Scalar]]] = {}
    """Engine flags by name (``max_model_len`` is ``--max-model-len``)."""
    env: dict[str, Scalar] = {}
    run: Run = Run()
    api: Api = Api()
    tune: dict[str, object] = {}
    """The engine's tuning points (dotted keys); see docs/deploy.md for the list, and the refused ones."""
    untested: dict[str, object] = {}
    """Values no reported run used, kept knowingly: deploy key (``serve.enable_prefix_caching``,
    ``env.NAME``) → the reason (a string). Without one, such a value is a warning (``W-DEPLOY-UNTESTED``)."""
    engine_extensions: EngineExtensions = EngineExtensions()
    model_shape: Optional[ModelShape] = None
    moe: Optional[Moe] = None
    triton: Optional[bool] = None
    """The base image ships Triton; default: what the engine variant says (``unknown`` for EngineX)."""
    folder: str = "muh"
    """Folder of the deployed repository that holds muh's files (beside the root Dockerfile)."""
    platform: str = "computility"
    """Where the server runs (``muh.platforms``): ``computility`` (the competition's platform: the root
    Dockerfile and ``computility-run.yaml``) or ``kubernetes`` (a Deployment and a Service); see docs/deploy.md."""

    @field_validator("platform")
    @classmethod
    def _platform(cls, v: str) -> str:
        return matching(v, r"[a-z][a-z0-9_]{0,31}", f"platform must be a lower-case identifier, got {v!r}")

    @field_validator("folder")
    @classmethod
    def _folder(cls, v: str) -> str:  # (its first character is no dot: never `.` or `..`)
        return matching(v, r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}", f"folder must be one plain folder name, got {v!r}")
