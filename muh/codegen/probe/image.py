"""The probe in a platform's image: its bundle (built by the image, never at start) and its start step
(opt-in, tolerated). Every platform that builds an image ships it the same way."""

from __future__ import annotations

from muh.codegen.base import BuildContext, GeneratedFile
from muh.derive.model import InRoot, StartStep

PROBE_RESULT = "/workspace/muh-probe.json"
PROBE_LOG = "/workspace/muh-probe.log"
PROBE_TIMEOUT_S = 60
PROBE_BUILD_DIR = "probe/build"  # under the image's muh folder: where the image build puts the binary
PROBE_BUILD_TIMEOUT_S = 600
PROBE_OPT_IN = "MUH_PROBE_AT_START"


def probe_bundle(ctx: BuildContext) -> tuple[bool, list[GeneratedFile]]:
    """Whether the image carries muh's probe bundle (``muh.codegen.probe``), and its files: as derive decided
    (``Launch.probe``, with its W-DEPLOY-PROBE warning)."""
    launch = ctx.derived.deploy.launch if ctx.derived.deploy is not None else None
    if launch is None or not launch.probe:
        return False, []
    try:
        from muh.codegen.probe import emit_probe_bundle
    except ImportError:  # a muh without the probe package: the image goes without it, the start script skips it
        return False, []
    # the image's probe measures the real card: a development build's --emulate-warp does not apply to it
    native = BuildContext(ctx.spec, ctx.derived, options={k: v for k, v in ctx.options.items() if k != "emulate_warp"})
    return True, list(emit_probe_bundle(native))


def probe_step() -> StartStep:
    """Opt-in (``MUH_PROBE_AT_START=1``), tolerated: the probe the image build compiled runs (never a compiler at
    start) and writes its JSON under /workspace, its output to a log there."""
    return StartStep(
        name="probe",
        argv=("bash", InRoot(path="probe/run.sh"), PROBE_RESULT, "--prebuilt", InRoot(path=PROBE_BUILD_DIR)),
        timeout_s=PROBE_TIMEOUT_S,
        opt_in=PROBE_OPT_IN,
        output=PROBE_LOG,
        needs=(InRoot(path="probe/run.sh"), InRoot(path=f"{PROBE_BUILD_DIR}/probe")),
        on_failure=f"[muh] probe skipped: it failed or took over {PROBE_TIMEOUT_S} s (log {PROBE_LOG})",
        on_success=f"[muh] probe: {PROBE_RESULT} written (log {PROBE_LOG})",
    )
