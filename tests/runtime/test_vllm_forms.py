"""The signature guard of muh's vLLM ops provider: stock 0.6.3's form and the recorded fork forms pass,
anything else keeps vLLM's op (CPU: no kernels are loaded)."""

from muh.runtime import llm


def stock(input, residual, weight, epsilon):  # noqa: A002 - vLLM 0.6.3's names
    pass


def fork(input, residual, weight, epsilon, residual_alpha=1.0):  # noqa: A002 - the EngineX form
    pass


def fork_required_alpha(input, residual, weight, epsilon, residual_alpha):  # noqa: A002
    pass


def other_default(input, residual, weight, epsilon, residual_alpha=2.0):  # noqa: A002
    pass


def renamed(input, residual, weight, epsilon, alpha=1.0):  # noqa: A002
    pass


def test_stock_and_the_forks_residual_alpha_form_are_served():
    assert llm.signature_problem("fused_add_rms_norm", stock) is None
    assert llm.signature_problem("fused_add_rms_norm", fork) is None
    assert llm.signature_problem("fused_add_rms_norm", fork_required_alpha) is None


def test_a_form_muh_does_not_record_keeps_vllms_op():
    for fn in (other_default, renamed):
        why = llm.signature_problem("fused_add_rms_norm", fn)
        assert why is not None and "keeping vLLM's" in why, fn.__name__
    # the fork's 5th parameter belongs to fused_add_rms_norm only
    assert llm.signature_problem("rms_norm", fork) is not None
