"""The recipe of docs/architecture.md "Adding a kernel family", done: a throw-away family folder (the files
the recipe lists, no others), its registry line and its catalogue entry make `muh build` render its kernel
(with a sub-policy's numbers, read through the record's ``read(get)``), `muh check` pass and `muh explain`
show where each of its numbers came from; nvcc compiles the rendered source."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
from lab_card import hardware

from muh import families
from muh.check import run_checks
from muh.codegen.base import BuildContext
from muh.families import registry
from muh.pipeline import load_file, render
from muh.schema import catalog

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
NAME = "sketch"  # the recipe's `<name>`, under a name no real family has

FILES = {
    "__init__.py": '''
"""sketch: out[i] = in[i], a test family (small inputs run the `small` sub-policy's block)."""
from dataclasses import dataclass

from muh.families.base import Harness, cfuncs, param, record


@dataclass(frozen=True)
class Policy:
    threads: int
    items: int
    small_threads: int  # the `small` sub-policy's block, for inputs of one tile or less
    small_from: str = ""  # where small_threads came from (the sub-policy value's provenance)


def read(get) -> Policy:
    small = get.sub("small")
    origin = small.origin("threads")
    return Policy(int(get("threads")), int(get("items")), int(small("threads", get("threads"))),
                  origin.origin if origin is not None else "policy threads")


def params(cfg, dtype, pol):
    return [param("kThreads", pol.threads, "policy threads"),
            param("kItems", pol.items, "policy items"),
            param("kSmallThreads", pol.small_threads, "policy small.threads", origin=pol.small_from)]


DTYPES = ("float32",)

RECORD = record(
    __name__,
    doc="out[i] = in[i] (a test family)",
    tunable=("threads", "items"),
    api=cfuncs("""
int muh_sketch(int dtype, const void* in, void* out, long long n, void* stream);
"""),
    static=("sketch.cuh",),
    size_buckets=False,
    harness=Harness(),
)
''',
    "sketch.cuh": """
// out[i] = in[i] over a policy P (kThreads, kItems, kSmallThreads).
#pragma once

#include "muh/host.cuh"

namespace muh {
namespace sketch_impl MUH_LIBRARY_LOCAL {

template <typename T, int kBlock, int kItems>
__global__ void __launch_bounds__(kBlock) copy_kernel(const T* __restrict__ in, T* __restrict__ out, long long n) {
  const long long base = (long long)blockIdx.x * kBlock * kItems;
#pragma unroll
  for (int i = 0; i < kItems; ++i) {
    const long long k = base + (long long)i * kBlock + threadIdx.x;
    if (k < n) out[k] = in[k];
  }
}

template <typename T, typename P>
int run(const void* in, void* out, long long n, cudaStream_t s) {
  if (n == 0) return MUH_OK;
  const T* x = static_cast<const T*>(in);
  T* y = static_cast<T*>(out);
  if (n <= (long long)P::kSmallThreads * P::kItems)
    copy_kernel<T, P::kSmallThreads, P::kItems><<<1, P::kSmallThreads, 0, s>>>(x, y, n);
  else
    copy_kernel<T, P::kThreads, P::kItems>
        <<<(unsigned)((n + P::kThreads * P::kItems - 1) / (P::kThreads * P::kItems)), P::kThreads, 0, s>>>(x, y, n);
  return host::launch_check("sketch launch");
}

}  // namespace sketch_impl
}  // namespace muh
""",
    "sketch.cu.j2": """
{{ header }}
#include "muh/host.cuh"
#include "muh/kernels/api.h"
#include "muh/kernels/params.cuh"
#include "muh/kernels/sketch.cuh"
{% import "buckets.j2" as buckets %}

namespace muh {
namespace sketch_run MUH_LIBRARY_LOCAL {
{{ buckets.policies(sketch) }}
}  // namespace sketch_run
}  // namespace muh

extern "C" int muh_sketch(int dtype, const void* in, void* out, long long n, void* stream) {
  using namespace muh;
  int rc = host::check_device();
  if (rc) return rc;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
{% for p in sketch %}
    case MUH_{{ p.dtype | upper }}:
      return sketch_impl::run<{{ p.cxx }}, sketch_run::Policy<{{ p.cxx }}> >(in, out, n, s);
{% endfor %}
    default:
      return host::fail(MUH_ERR_UNSUPPORTED, "muh_sketch: dtype %d is not supported", dtype);
  }
}
""",
    "harness.cu.j2": """
// sketch: out[i] = in[i], no workspace.
const bool kHasIndices = false;

static size_t workspace_bytes(const Api& a, long long max_n) { return 0; }

static int run_variant(const Api& a, Ctx& c, int v, long long n) { """
    """return a.sketch(kDtype, c.in, c.out, n, (void*)c.s); }

static long long in_count(long long n) { return n; }

static long long out_count(long long n) { return n; }

static bool check_output(Ctx& c, const std::vector<T>& h, const std::vector<T>& o, long long n, std::string& why) {
  for (long long i = 0; i < n; ++i)
    if (to_d(o[i]) != to_d(h[i])) {
      why = "out[" + std::to_string(i) + "] differs";
      return false;
    }
  return true;
}
""",
}


def recipe() -> tuple[list[str], list[str]]:
    """(the files the doc's recipe puts in the family's folder, the other files it touches)."""
    section = DOC.read_text(encoding="utf-8").split("## Adding a kernel family", 1)[1].split("\n## ", 1)[0]
    steps = re.findall(r"^\d+\. (.*?)(?=^\d+\. |\Z)", section, re.M | re.S)
    folder, other = [], []
    for step in steps:
        for path in re.findall(r"`(muh/[\w/<>.-]+)`", step):
            if path.startswith("muh/families/<name>/"):
                folder.append(path[len("muh/families/<name>/") :])
            elif "<name>" not in path:
                other.append(path)
    return sorted(set(folder)), sorted(set(other))


def test_the_skeleton_is_the_recipe():
    folder, other = recipe()
    assert sorted(f.replace("<name>", NAME) for f in folder) == sorted(FILES)
    assert {"muh/families/registry.py", "muh/schema/catalog.py"} <= set(other)


@pytest.fixture
def sketch(tmp_path, monkeypatch):
    """The skeleton under a temporary muh/families/ path entry, imported, with its registry line and
    catalogue entry."""
    root = tmp_path / NAME
    for rel, text in FILES.items():
        root.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text.lstrip("\n"), encoding="utf-8")
    monkeypatch.setattr(families, "__path__", [*families.__path__, str(tmp_path)])
    importlib.invalidate_caches()
    registry.get.cache_clear()
    try:
        monkeypatch.setattr(registry, "NAMES", registry.NAMES + (NAME,))  # the registry line
        monkeypatch.setitem(
            catalog.FAMILIES,
            NAME,
            catalog.Tuning(  # the catalogue entry
                "out[i] = in[i] (a test family)", ("threads", "items"), subs=("small",), scaling="none"
            ),
        )
        yield importlib.import_module(f"muh.families.{NAME}")
    finally:
        registry.get.cache_clear()
        for m in [m for m in sys.modules if m == f"muh.families.{NAME}" or m.startswith(f"muh.families.{NAME}.")]:
            del sys.modules[m]


SPEC = (
    "muh 1\n\n"
    + hardware()
    + """
algorithm sketch on lab {
  types = [float32]
  policy default {
    threads = 256
    items = 4
    small { threads = 64 }
  }
}
"""
)


def _load(tmp_path, text=SPEC):
    spec = tmp_path / "copy.muh"
    spec.write_text(text, encoding="utf-8")
    return load_file(spec)


def test_build_renders_the_new_family_with_its_sub_policy(sketch, tmp_path):
    loaded = _load(tmp_path)
    [target] = loaded.derived.kernels.targets  # derive made the config, once
    pol = target.config.of(NAME)["float32"]
    assert (pol.threads, pol.items, pol.small_threads, pol.small_from) == (
        256,
        4,
        64,
        "inherited",
    )  # float32 from `policy default`
    files = {f.path: f.content for f in render(loaded)}
    assert "include/muh/kernels/sketch.cuh" in files and "kernels/sketch.cu" in files
    params = files["include/muh/kernels/params.cuh"]
    assert re.search(r"namespace sketch_float32 \{\s*constexpr int kThreads = 256;", params)
    assert "constexpr int kSmallThreads = 64;  // policy small.threads (origin=inherited)" in params
    assert (
        "int muh_sketch(int dtype, const void* in, void* out, long long n, void* stream);"
        in files["include/muh/kernels/api.h"]
    )
    assert "sketch_impl::run<float, sketch_run::Policy<float> >" in files["kernels/sketch.cu"]


def test_a_missing_sub_policy_value_falls_back_as_the_record_says(sketch, tmp_path):
    loaded = _load(tmp_path, SPEC.replace("    small { threads = 64 }\n", ""))
    pol = loaded.derived.kernels.targets[0].config.of(NAME)["float32"]
    assert (pol.small_threads, pol.small_from) == (256, "policy threads")


def test_check_passes_and_explain_shows_the_sub_policy(sketch, tmp_path):
    from muh.explain import explain
    from muh.pipeline import build

    loaded = _load(tmp_path)
    build(tmp_path / "copy.muh", tmp_path / "generated" / loaded.spec.name)  # `muh build`, then `muh check`
    ctx = BuildContext(loaded.spec, loaded.derived, options={"generated_root": str(tmp_path / "generated")})
    results = run_checks(ctx, only=["generated"])
    assert [r.status for r in results] == ["pass"], results
    text = "\n".join(explain(loaded.derived, NAME, loaded.spec))
    assert "threads = 256" in text and "items = 4" in text


@pytest.mark.nvcc
def test_nvcc_compiles_the_new_family(sketch, tmp_path, nvcc):
    out = tmp_path / "gen"
    for f in render(_load(tmp_path)):
        p = out / f.path
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f.content, encoding="utf-8")
    r = subprocess.run(
        [
            nvcc,
            "-std=c++17",
            "-arch=sm_90",
            "-c",
            "-I",
            str(out / "include"),
            str(out / "kernels" / "sketch.cu"),
            "-o",
            str(tmp_path / "sketch.o"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr


def test_every_stage_reads_derive_s_configs_and_none_reads_a_policy_again(sketch, tmp_path, monkeypatch):
    """The kernels' configs are made once, in derive (``Derived.kernels``): rendering every file of a
    build (kernels, ops, ops package, probe) with an emulation build reads no policy again."""
    from muh.derive import kernels

    loaded = _load(tmp_path)
    calls = []
    real = kernels.config_from_derived
    monkeypatch.setattr(kernels, "config_from_derived", lambda *a: calls.append(a) or real(*a))
    files = {f.path for f in render(loaded, {"emulate_warp": 64})}
    assert {"kernels/sketch.cu", "emu64/kernels/sketch.cu"} <= files
    assert calls == []
