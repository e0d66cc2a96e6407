"""The names of the ops package the serving image ships (``muh_kernels``): its one owner.

muh.codegen.ops_package emits the package under these names; an engine's plug-in names its provider
module from them (the vLLM plug-in's ``ops_module`` default). Standard library only, like the runtime."""

from __future__ import annotations

OPS_PACKAGE = "muh_kernels"
"""The Python package of the LLM ops the image ships (emitted by muh.codegen.ops_package)."""
PROVIDER_MODULE = f"{OPS_PACKAGE}.vllm_ops"
"""The module of that package an engine's plug-in loads the ops from (loads libmuh_ops.so or raises the reason)."""
