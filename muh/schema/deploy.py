"""The ``deploy`` block: where and how a spec's output is served (issue 5).

    deploy competition on bi100 {
      base_image = "…/bi100-…-llm-infer:v1.2.3"
      engine = vllm "0.6.3.post1"          # the pinned engine whose flags and files are checked
      model = "/model"
      serve { max_num_seqs = 2  dtype = half … }            # one key per engine flag, exact names
      env { VLLM_ENGINE_ITERATION_TIMEOUT_S = 3600 }
      engine_extensions { flags = ["--reasoning-parser"]  tool_call_parsers = ["qwen3_coder"] }
      moe { experts = 256  intermediate_size = 512 }          # MoE config files for the model
      tune_vllm { paged_attention.v1_threshold = auto  ops = [rms_norm] }
    }

What the serve keys and tune_vllm knobs *mean* is checked against the pinned engine in
``muh.codegen.vllm.resolve`` (the flag table comes from the engine's wheel); this module only gives
the block its shape.
"""
from __future__ import annotations

from typing import Annotated, Literal, Optional, Union

from pydantic import Field, field_validator

from muh.schema.base import SpecModel as Model
from muh.schema.units import INT_MAX
from decimal import Decimal

Scalar = Union[bool, int, Decimal, str]


class Engine(Model):
    name: Literal["vllm"]
    version: str
    """The engine release the flags and edits are checked against (``0.6.3`` or ``0.6.3.post1``)."""


class EngineExtensions(Model):
    """What the deployed engine (a fork) has beyond the pinned release; undeclared extras are errors."""

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


class Deploy(Model):
    name: str
    on: str
    base_image: str
    engine: Engine
    model: str = "/model"
    concurrency: int = Field(1, ge=1, le=64)
    serve: dict[str, Union[Scalar, list[Scalar]]] = {}
    """Engine flags by name (``max_model_len`` is ``--max-model-len``)."""
    env: dict[str, Scalar] = {}
    tune_vllm: dict[str, object] = {}
    """vLLM tuning points (dotted keys); see docs/deploy.md for the list, and the refused ones."""
    engine_extensions: EngineExtensions = EngineExtensions()
    moe: Optional[Moe] = None
    triton: bool = True
    """The base image ships Triton (prefix caching, chunked prefill and MoE need it)."""
    folder: str = "muh"
    """Folder of the deployed repository that holds muh's files (beside the root Dockerfile)."""

    @field_validator("folder")
    @classmethod
    def _folder(cls, v: str) -> str:
        import re

        if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}", v) or v in (".", ".."):
            raise ValueError(f"folder must be one plain folder name, got {v!r}")
        return v
