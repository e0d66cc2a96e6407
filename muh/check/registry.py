"""Every check, one import each (importing a module registers its checks)."""

from muh.check import (
    clang_cuda,  # noqa: F401
    cub_dispatch,  # noqa: F401
    deploy,  # noqa: F401
    generated,  # noqa: F401
    measured,  # noqa: F401
    parity,  # noqa: F401
    tuning_headers,  # noqa: F401
    warp_smem,  # noqa: F401
)
