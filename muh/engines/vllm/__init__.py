"""Engine `vllm`: stock vLLM and its forks (EngineX), one ``variants/<engine>-<version>.json`` per build
muh has a flag table for. Both share one implementation; all that differs is read from the variant.

EngineX, the competition's vLLM 0.6.3 fork in the BI-V100 image, is data only: its source is not
available, ``variants/enginex-*.json`` records what is known about it from the competition team's notes (https://github.com/dylanyunlon/project_6)
(every entry cites its section).
"""

from pathlib import Path

from muh.engines.base import EnginePlugin
from muh.engines.vllm.derive.build_plan import resolve
from muh.engines.vllm.derive.engine import EngineInfo, load_engine, resolve_version
from muh.engines.vllm.derive.ops_image import complete
from muh.engines.vllm.derive.plan import TUNED_FILE
from muh.engines.vllm.derive.probe_facts import probe_data
from muh.engines.vllm.derive.tuning import KNOBS
from muh.engines.vllm.wheel import fetch_checked

VARIANTS = Path(__file__).parent / "variants"


def flag_table(variant) -> EngineInfo:
    return load_engine(variant.base)


def fetch_base(variant) -> str:
    """`muh fetch-engine` for a variant: the wheel of its base release (what the deploy check proves the
    edits against; a fork's own build is not public)."""
    line = fetch_checked(variant.base)
    return line if variant.base == variant.version else f"{line}, the base release of {variant.label}"


ENGINE = EnginePlugin(
    name="vllm",
    package=__name__,
    folder=VARIANTS,
    resolve=resolve,
    flag_table=flag_table,
    aliases=resolve_version,  # `0.6.3` -> `0.6.3.post1` when exactly one release matches
    tuning_points=lambda: KNOBS,
    fetch=fetch_base,
    probe_data=probe_data,
    tuned_file=TUNED_FILE,
    tuned_prefix="vllm",
    complete=complete,
)
ENGINEX = EnginePlugin(
    name="enginex",
    package=__name__,
    folder=VARIANTS,
    resolve=resolve,
    flag_table=flag_table,
    tuning_points=lambda: KNOBS,
    fetch=fetch_base,
    probe_data=probe_data,
    tuned_file=TUNED_FILE,
    tuned_prefix="vllm",
    complete=complete,
)
