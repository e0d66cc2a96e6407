"""silu_and_mul: the policy of the LLM element-wise gate ops: silu_and_mul (``muh_op_silu_and_mul``)
and the shared expert's sigmoid-gated combine (``muh_op_gate_add``).

Its numbers become the element-wise half of the ops' ``Policy<T, B>`` (include/muh/ops/ops.cuh); a
spec without an ``algorithm silu_and_mul`` derives them from its transform policy (muh/derive/ops.py).
Size buckets count an op's rows × d (its output's element count).
"""

from __future__ import annotations

from muh.families.base import param
from muh.families.rms_norm import Policy, load_elems, ops_record, policy_checks, read  # noqa: F401 - the record's parts
from muh.runtime import dtypes as DT


def params(cfg, dtype: str, pol: Policy):
    v, vrule = load_elems(dtype, pol.vec)
    return [
        param("kEltThreads", pol.threads, "policy threads"),
        param("kEltVec", v, vrule, **({"vec": pol.vec} if pol.vec else {}), element_size=DT.SIZE[dtype]),
        param("kEltItems", pol.items, "policy items"),
    ]


def checks(cfg, dtype: str, pol: Policy) -> list[str]:
    return policy_checks("silu_and_mul", dtype, pol, items_max=16, items_why=" (vectors held in registers)")


RECORD = ops_record(
    __name__, "LLM element-wise gate ops: silu_and_mul, the sigmoid-gated combine (gate_add)", "muh_op_silu_and_mul"
)
