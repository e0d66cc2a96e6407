"""Issue 37.3: the device's warp width is asked once per device and process — a mismatch included (before,
a mismatch was asked again on every call of every op). The generated host layer is compiled with nvcc and run
on the CPU: the CUDA runtime's two calls it makes are
renamed to counting stand-ins after the runtime's header (no GPU)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from muh.pipeline import load_file, render

ROOT = Path(__file__).resolve().parents[2]

MAIN = r"""
#include <stdio.h>
#include <cuda_runtime.h>
static int asked = 0;
static cudaError_t muh_test_get_device(int* dev) { *dev = 0; return cudaSuccess; }
static cudaError_t muh_test_attribute(int* value, enum cudaDeviceAttr attr, int dev) {
  if (attr == cudaDevAttrWarpSize) { ++asked; *value = DEVICE_WARP; }
  return cudaSuccess;
}
#define cudaGetDevice muh_test_get_device  // what the host layer calls, from here on
#define cudaDeviceGetAttribute muh_test_attribute
#include "muh/host.cuh"
int main() {
  int rc[3];
  for (int i = 0; i < 3; ++i) rc[i] = muh::host::check_device();
  printf("%d %d %d asked=%d\n", rc[0], rc[1], rc[2], asked);
  return 0;
}
"""


@pytest.mark.nvcc
@pytest.mark.parametrize("device_warp,rc", [(64, 0), (32, 3)])  # the baseline's kernels are for 64-lane warps
def test_the_warp_attribute_is_asked_once_per_process(nvcc, tmp_path, device_warp, rc):
    for f in render(load_file(ROOT / "specs" / "baseline.muh")):
        if f.path.startswith("include/"):
            p = tmp_path / f.path
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(f.content, encoding="utf-8")
    (tmp_path / "main.cu").write_text(MAIN)
    exe = tmp_path / "check"
    proc = subprocess.run(
        [
            nvcc,
            "-std=c++17",
            f"-DDEVICE_WARP={device_warp}",
            "-I",
            str(tmp_path / "include"),
            str(tmp_path / "main.cu"),
            "-o",
            str(exe),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60, check=True).stdout.split()
    assert out == [str(rc)] * 3 + ["asked=1"], out  # MUH_ERR_WARP (3) every time, asked once
