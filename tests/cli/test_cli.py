from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "specs" / "baseline.muh"


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_build_is_deterministic_and_has_manifest(cli, tmp_path):
    for out in ("a", "b"):
        code, stdout, err = cli("build", BASELINE, "-o", tmp_path / out)
        assert code == 0, err
    a, b = tree(tmp_path / "a"), tree(tmp_path / "b")
    assert a == b and a
    manifest = json.loads(a["manifest.json"])
    assert manifest["spec"] == "baseline.muh"
    assert set(manifest["files"]) == set(a) - {"manifest.json"}
    assert manifest["spec_sha256"] == __import__("hashlib").sha256(BASELINE.read_bytes()).hexdigest()
    for name, data in a.items():
        text = data.decode()
        assert "/root/" not in text and "/tmp/" not in text, f"{name} leaks a local path"


def test_failed_build_leaves_old_output(cli, tmp_path):
    out = tmp_path / "out"
    assert cli("build", BASELINE, "-o", out)[0] == 0
    before = tree(out)
    bad = tmp_path / "specs" / "baseline.muh"
    bad.parent.mkdir()
    bad.write_text(BASELINE.read_text().replace("warp_size = 64", "warp_size = 63"))
    code, _, err = cli("build", bad, "-o", out)
    assert code == 2 and "power of two" in err
    assert tree(out) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_build_refuses_foreign_folder(cli, tmp_path):
    (tmp_path / "mine.txt").write_text("precious")
    code, _, err = cli("build", BASELINE, "-o", tmp_path)
    assert code == 2 and "not written by muh" in err
    assert (tmp_path / "mine.txt").read_text() == "precious"


def test_fmt_check_and_rewrite(cli, tmp_path):
    messy = tmp_path / "m.muh"
    messy.write_text("muh 1\nhardware x{sm_count=1}\n")
    code, _, err = cli("fmt", "--check", messy)
    assert code == 1 and "not formatted" in err
    assert cli("fmt", messy)[0] == 0
    assert messy.read_text() == "muh 1\n\nhardware x { sm_count = 1 }\n"
    assert cli("fmt", "--check", messy)[0] == 0


def test_fmt_check_bundled_specs(cli):
    code, _, err = cli("fmt", "--check", *sorted((ROOT / "specs").glob("*.muh")))
    assert code == 0, err


def test_schema_is_json_schema(cli):
    code, out, _ = cli("schema")
    assert code == 0
    schema = json.loads(out)
    assert schema["title"] == "muh spec"
    assert "Hardware" in schema["$defs"] and "reduce" in schema["x-muh-families"]
    assert len(schema["x-muh-families"]) >= 26  # every CCCL tuning family


def test_explain_shows_rule_and_inputs(cli):
    code, out, _ = cli("explain", BASELINE, "scan.float64.items")
    assert code == 0
    assert "items = 11" in out and "reg_bound" in out and "warp=64" in out and "specs/baseline.muh" in out
    code, _, err = cli("explain", BASELINE, "sacn")
    assert code == 2 and "did you mean `scan`?" in err


def test_version_and_help(cli):
    code, out, _ = cli("--version")
    assert code == 0 and out.startswith("muh ")
    for cmd in ("build", "fmt", "schema", "explain", "check"):
        code, out, _ = cli(cmd, "--help")
        assert code == 0 and "Usage" in out


def test_check_unknown_name(cli):
    code, _, err = cli("check", BASELINE, "--only", "parityy")
    assert code == 2 and "unknown check" in err


def test_generated_is_not_stale(cli):
    """generated/ holds the committed output of every bundled spec; it must equal a fresh build."""
    for spec in sorted((ROOT / "specs").glob("*.muh")):
        code, out, err = cli("check", spec, "--only", "generated", cwd=ROOT)
        assert code == 0, out + err
        assert "skip" not in out, f"generated/{spec.stem} is missing: run `muh build {spec}`"


def test_explain_names_the_part_of_the_path_that_is_wrong(cli):
    """Issue 11 item 19: an unknown type, op or dimension gets its own message with the valid choices."""
    cases = {
        "reduce.float33": ("`float33` is not an element type or a dimension of reduce", "did you mean `float32`?"),
        "reduce.int8": ("reduce@bi100 has no policy for `int8`", "policies: float16, bfloat16"),
        "reduce.float32.max": ("has no policy of its own for `float32.max`", "uses the `float32` policy"),
        "reduce.float32.thread": ("`thread` is not an operator or a dimension of reduce", "did you mean `threads`?"),
        "reduce.radix_bits": ("`radix_bits` is not an element type or a dimension of reduce", "threads, items, vec"),
        "reduce.float32.items.x": ("nothing may follow the dimension `items`", "ALGO[.type[.op]][.dimension]"),
    }
    for what, (msg, hint) in cases.items():
        code, _, err = cli("explain", BASELINE, what)
        assert code == 2 and msg in err.splitlines()[0] and hint in err, (what, err)
        assert "is not set for" not in err
    code, out, _ = cli("explain", BASELINE, "reduce.float32.plus.threads")
    assert code == 0 and "    threads = 512" in out and "\n    items = " not in out


def test_provenance_names_the_spec_as_given_never_an_invented_folder(cli, tmp_path):
    """Issue 11 item 18: `cd my && muh build cdna.muh` wrote `from specs/cdna.muh:…` (no such file)."""
    my = tmp_path / "my"
    my.mkdir()
    (my / "cdna.muh").write_text(BASELINE.read_text())
    assert cli("build", "cdna.muh", "-o", "out", cwd=my)[0] == 0
    text = "".join(p.read_text() for p in (my / "out").rglob("*") if p.is_file())
    assert "from cdna.muh" in text and "specs/cdna.muh" not in text
    code, out, _ = cli("explain", "cdna.muh", "reduce.float32.threads", cwd=my)
    assert code == 0 and "from: cdna.muh:" in out and "specs/" not in out


def test_schema_is_the_user_facing_shape_with_docs(cli):
    """Issue 11 item 21: no internal fields (file, sha256, measured evidence, header-derived names);
    every key documented from its docstring (read on demand, not at every import)."""
    schema = json.loads(cli("schema")[1])
    props = set(schema["properties"])
    assert {"algorithms", "deploys", "hardware"} <= props and not {"file", "sha256", "measured", "version"} & props
    assert "Measured" not in schema["$defs"]
    for block in ("Hardware", "Algorithm", "Deploy"):
        assert not {"name", "on", "family"} & set(schema["$defs"][block]["properties"])
    assert schema["$defs"]["Hardware"]["properties"]["warp_size"]["description"].startswith("Threads per warp")
    assert "language server" in schema["description"]
    import muh.schema.models as m

    assert m.Hardware.model_config.get("use_attribute_docstrings") is not True


def test_check_only_prints_its_cases_with_v_only(cli):
    """Issue 11 item 21: `check --only X` printed every case (872 lines) without -v."""
    code, out, _ = cli("check", BASELINE, "--only", "parity")
    code_v, out_v, _ = cli("check", BASELINE, "--only", "parity", "-v")
    assert code == code_v == 0, out
    assert len(out.splitlines()) == 2 and len(out_v.splitlines()) > 100, out


def test_the_tutorial_spec_builds_without_a_warning(cli, tmp_path):
    """Issue 11 item 21: the tutorial's own spec warned W-OPS-ARCH (no target architecture)."""
    import re

    doc = (ROOT / "docs" / "language.md").read_text()
    tutorial = doc.split("## Tutorial", 1)[1].split("**4.", 1)[0]
    blocks = re.findall(r"```\n(.*?)```", tutorial, re.S)
    assert len(blocks) == 3 and blocks[0].startswith("muh 1")
    spec = tmp_path / "my.muh"
    spec.write_text("\n".join(blocks))
    code, out, err = cli("build", spec, "-o", tmp_path / "out")
    assert code == 0 and err == "", err
