"""Open item of issue 16: on the H200 (torch 2.11.0+cu130) the last test of
tests/gpu/test_torch_ops_gpu.py (`test_bad_inputs_are_clear_errors`, after ~470 passing tests in the same
process) died with SIGSEGV inside the second refused call (`gemma_rms_norm` with a 64-element weight
for rows of 128), twice; the first refused call (float64) raised cleanly. Not reproduced on CPU torch
2.13 with the same binding registered for CPU. This script runs the two refusals alone, in a fresh
process, so one device call tells a state-dependent crash from a deterministic one:

    python3 bench/results/final-wave-2026-12-01/ops_throw_repro.py [generated dir]        # or under: gdb -batch -ex run -ex bt --args python3 …
"""
import faulthandler
import sys
import tempfile

faulthandler.enable()
sys.path.insert(0, ".")

import torch  # noqa: E402

from bench import presets  # noqa: E402
from muh.runtime import operators  # noqa: E402

gen = sys.argv[1] if len(sys.argv) > 1 else presets.write_ops("h200", tempfile.mkdtemp(prefix="muh-throw-"))
print(operators.load(gen), flush=True)
m = torch.ops.muh
x = torch.randn(2, 128, device="cuda", dtype=torch.float64)
h = torch.randn(2, 128, device="cuda", dtype=torch.float16)
for what, args in (("float64", (x, x[0])), ("short weight", (h, h[0, :64])), ("short weight again", (h, h[0, :64]))):
    try:
        m.gemma_rms_norm(*args, 1e-6)
        print(what, "NOT refused", flush=True)
    except RuntimeError as e:
        print(what, "refused:", str(e).splitlines()[0], flush=True)
print("no crash")
