"""The LLM ops' launch numbers are derive's (muh/derive/ops.py): computed with the spec, printed by
`muh explain SPEC ops`, rendered unchanged by the ops emitter."""

from __future__ import annotations

from pathlib import Path

from muh.pipeline import load_file

ROOT = Path(__file__).resolve().parents[2]


def test_derive_owns_the_ops_policies_with_provenance():
    loaded = load_file(ROOT / "specs" / "baseline.muh")
    t = loaded.derived.ops["bi100"]
    p = t.policies["float32"]
    # baseline.muh: reduce float32.plus has 512 threads; the transform default 64 KiB in flight
    assert p.row_threads.value == 512 and p.row_threads.origin == "derived"
    assert "reduce@bi100.float32.plus.threads" in p.row_threads.inputs["threads_from"]
    assert p.items_min.value == 2 and p.items_min.inputs["bytes_in_flight"] == 65536
    assert t.warp_size == 64


def test_the_ops_emitter_renders_derives_numbers(tmp_path):
    from muh.codegen import ops
    from muh.codegen.kernels import emitter

    loaded = load_file(ROOT / "specs" / "baseline.muh")
    t = loaded.derived.ops["bi100"]
    changed = t.model_copy(
        update={
            "policies": {
                **t.policies,
                "float16": t.policies["float16"].model_copy(
                    update={"elt_items": t.policies["float16"].elt_items.model_copy(update={"value": 3})}
                ),
            }
        }
    )
    text = dict(ops.generate(changed, lambda prefix: prefix))["kernels/ops.cu"]
    assert "kEltItems = 3," in text  # nothing recomputed in codegen
    assert emitter  # imported: the ops library is generated beside the kernels


def test_explain_ops_prints_rule_and_inputs(cli):
    code, out, err = cli("explain", ROOT / "specs" / "baseline.muh", "ops.float16.items_min")
    assert code == 0, err
    assert "ops@bi100 (warp 64" in out and "items_min = 2    [derived]" in out
    assert "rule: ceil(bytes_in_flight / (resident_threads_per_sm × vec × element_size))" in out
    assert "bytes_in_flight=65536" in out and "row_threads" not in out
    code, _, err = cli("explain", ROOT / "specs" / "baseline.muh", "ops.float16.item_min")
    assert code != 0 and "did you mean `items_min`" in err and "Traceback" not in err
    code, _, err = cli("explain", ROOT / "specs" / "baseline.muh", "ops@h100")
    assert code != 0 and "no hardware `h100`" in err
