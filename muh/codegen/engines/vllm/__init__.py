"""Engine plug-in `vllm`: stock vLLM, one ``variant-<version>.json`` per release muh has a flag table for."""
from pathlib import Path

from muh.codegen.engines.base import EnginePlugin
from muh.codegen.vllm import engine_impl as impl
from muh.derive.vllm.engine import resolve_version

ENGINE = EnginePlugin(name="vllm", folder=Path(__file__).parent, resolve=impl.resolve, emit=impl.emit,
                      image=impl.image, flag_table=impl.flag_table, check=impl.check,
                      aliases=resolve_version)  # `0.6.3` -> `0.6.3.post1` when exactly one release matches
