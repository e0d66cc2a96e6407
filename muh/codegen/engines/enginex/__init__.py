"""Engine plug-in `enginex`: the competition's vLLM 0.6.3 fork in the BI-V100 image, as data.

The fork's source is not available; ``variant-*.json`` records what is known about it from
shared/facts/enginex-fork.md (every entry cites its section). It shares vLLM's implementation
(``muh.codegen.vllm``); all that differs is read from the variant.
"""
from pathlib import Path

from muh.codegen.engines.base import EnginePlugin
from muh.codegen.vllm import engine_impl as impl

ENGINE = EnginePlugin(name="enginex", folder=Path(__file__).parent, resolve=impl.resolve, emit=impl.emit,
                      image=impl.image, flag_table=impl.flag_table, check=impl.check)
