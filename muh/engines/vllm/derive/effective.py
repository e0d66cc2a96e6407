"""The serve values the server runs with — the spec's, else the engine's default — read once from the serve block
(``Effective``, owned by the plan: ``VllmPlan.effective``). Every step that needs one of them reads it here instead
of parsing the block again (the tensor-parallel size, the batch limits, the port, and the chunked-prefill rule)."""

from __future__ import annotations

from muh.engines.vllm.derive.context import int_of
from muh.engines.vllm.derive.engine import EngineInfo
from muh.engines.vllm.derive.flags import Setting, truthy
from muh.schema.base import Model

LONG_CONTEXT = 32768
"""vLLM 0.6.3 turns chunked prefill on by itself above this max_model_len (EngineArgs.create_engine_config,
vllm/engine/arg_utils.py: ``use_long_context = max_model_len > 32K``)."""


class Effective(Model):
    """The serve values the server runs with (the spec's, else the engine's default)."""

    tensor_parallel_size: int
    pipeline_parallel_size: int
    max_num_seqs: int
    max_model_len: int
    """0: the model's own (not known before start)."""
    max_num_batched_tokens: int | None
    port: int
    prefix_caching: bool
    chunked_prefill: bool
    """The spec's switch; where the spec leaves it unset, on by itself above max_model_len 32768 (``LONG_CONTEXT``):
    the rule, once."""

    @property
    def prefix_prefill(self) -> bool:
        """Prefix caching or chunked prefill: prefills run through the prefix-prefill (Triton) kernel."""
        return self.prefix_caching or self.chunked_prefill


def effective(given: dict[str, Setting], engine: EngineInfo) -> Effective:
    """``given``: the serve block's settings the flag table accepted (a refused value is not used)."""
    max_model_len = int_of(given.get("max_model_len"), 0)
    tokens = given.get("max_num_batched_tokens")
    chunked = given.get("enable_chunked_prefill")  # None in vLLM 0.6.3: on by itself for a long context only
    return Effective(
        tensor_parallel_size=int_of(given.get("tensor_parallel_size"), 1),
        pipeline_parallel_size=int_of(given.get("pipeline_parallel_size"), 1),
        max_num_seqs=int_of(given.get("max_num_seqs"), engine.default("max_num_seqs")),
        max_model_len=max_model_len,
        max_num_batched_tokens=int_of(tokens, 0) or None,
        port=int_of(given.get("port"), engine.default("port")),
        prefix_caching=truthy(given.get("enable_prefix_caching")),
        chunked_prefill=truthy(chunked) if chunked is not None else max_model_len > LONG_CONTEXT,
    )
