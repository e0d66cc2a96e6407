"""Engine plug-in `vllm`: stock vLLM, one ``variant-<version>.json`` per release muh has a flag table for."""
from pathlib import Path

from muh.codegen.engines.base import EnginePlugin
from muh.codegen.vllm import engine_impl as impl


def _alias(version: str) -> str | None:
    """``0.6.3`` → ``0.6.3.post1`` when exactly one variant is of that release."""
    known = [p.name[len("variant-"):-len(".json")] for p in Path(__file__).parent.glob("variant-*.json")]
    matches = [v for v in known if v.split(".post")[0] == version]
    return matches[0] if len(matches) == 1 else None


ENGINE = EnginePlugin(name="vllm", folder=Path(__file__).parent, resolve=impl.resolve, emit=impl.emit,
                      image=impl.image, flag_table=impl.flag_table, check=impl.check, aliases=_alias)
