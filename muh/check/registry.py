"""Every check, one import each (importing a module registers its checks)."""
from muh.check import generated  # noqa: F401
from muh.check import parity  # noqa: F401
from muh.check import tuning_headers  # noqa: F401
from muh.check import deploy  # noqa: F401
from muh.check import measured  # noqa: F401
from muh.check import clang_cuda  # noqa: F401
from muh.check import warp_smem  # noqa: F401
from muh.check import cub_dispatch  # noqa: F401
