"""muh.runtime.hf without torch: the rule table is complete, refusals name what is missing, the report
reads as documented (the GPU test tests/gpu/test_hf_client_gpu.py runs the patched models)."""

from __future__ import annotations

from types import SimpleNamespace

from muh.runtime import hf


def test_every_rule_has_a_kind_and_a_forward():
    assert set(hf.RULES.values()) <= set(hf.KINDS)
    assert set(hf._FORWARDS) == set(hf.KINDS)


def test_a_changed_class_is_refused_with_the_missing_attributes():
    norm = SimpleNamespace(weight=object())  # no `eps`
    assert "eps" in hf._refusal("gemma", norm)
    gated = SimpleNamespace(weight=object(), variance_epsilon=1e-6, activation="sigmoid")
    assert "activation 'sigmoid'" in hf._refusal("gated", gated)
    assert hf._refusal("gated", SimpleNamespace(weight=object(), variance_epsilon=1e-6, activation="silu")) is None


def test_report_names_counts_and_what_was_left_stock():
    r = hf.Report()
    r.patched["gemma"] += ["model.norm", "model.layers.0.input_layernorm"]
    r.skipped["model.layers.0.mlp"] = "gate/up projections with bias"
    assert r.counts() == {"gemma": 2}
    assert str(r) == "muh patched: gemma 2; left stock: model.layers.0.mlp (gate/up projections with bias)"


def test_unpatch_of_an_unpatched_model_does_nothing():
    class Model:
        def modules(self):
            return [SimpleNamespace(), SimpleNamespace(_muh_kind=None)]

    assert hf.unpatch_model(Model()) == 0
