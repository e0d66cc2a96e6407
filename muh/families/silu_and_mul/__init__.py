"""silu_and_mul: the policy of the LLM element-wise gate ops: silu_and_mul (``muh_op_silu_and_mul``)
and the shared expert's sigmoid-gated combine (``muh_op_gate_add``).

Its numbers become the element-wise half of the ops' ``Policy<T, B>`` (include/muh/ops/ops.cuh); a
spec without an ``algorithm silu_and_mul`` derives them from its transform policy (muh/derive/ops.py).
Size buckets count an op's rows × d (its output's element count).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from muh.runtime import c_api, dtypes as DT
from muh.families.base import Family, param
from muh.families.rms_norm import harness, load_elems, policy_checks


@dataclass(frozen=True)
class Policy:
    threads: int  # the block (an upper bound: a short row takes fewer)
    items: int = 1  # vectors per thread
    vec: Optional[int] = None  # elements per vector load (None: 16 B worth)


def read(get) -> Policy:
    vec = get("vec", None)
    return Policy(int(get("threads")), int(get("items", 1)), None if vec is None else int(vec))


def params(cfg, dtype: str, pol: Policy):
    v, vrule = load_elems(dtype, pol.vec)
    return [
        param("kEltThreads", pol.threads, "policy threads"),
        param("kEltVec", v, vrule, **({"vec": pol.vec} if pol.vec else {}), element_size=DT.SIZE[dtype]),
        param("kEltItems", pol.items, "policy items"),
    ]


def checks(cfg, dtype: str, pol: Policy) -> list[str]:
    return policy_checks("silu_and_mul", dtype, pol, items_max=16, items_why=" (vectors held in registers)")


RECORD = Family(
    name="silu_and_mul",
    doc="LLM element-wise gate ops: silu_and_mul, the sigmoid-gated combine (gate_add)",
    dtypes=DT.OPS,
    policy=Policy,
    tunable=("threads", "items", "vec"),
    api=c_api.ops("muh_op_silu_and_mul"),
    read=read,
    params=params,
    checks=checks,
    op=None,
    size_buckets=True,
    harness=harness("harness.cu.j2"),
)
