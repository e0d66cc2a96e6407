"""Anchored edits of vLLM function bodies, per pinned version, and their unified diffs.

An edit names the file, the exact lines it replaces (the *anchor*, quoted from the pinned release
because a diff must say what it removes) and a template for the new lines. The anchor must occur
exactly once in the target file — in the pinned wheel (checked by the tests) and again in the image
(checked by the generated ``check_anchors.py`` before ``patch`` runs), because the competition's
engine is a fork with vendor edits. Line numbers are facts about the pinned wheel
(vLLM 0.6.3.post1's source, https://github.com/vllm-project/vllm/tree/v0.6.3.post1).

Diffs carry no context lines: the anchor itself is what is checked, so a vendor change near (but
not in) the anchor does not break the build, and a change *in* it fails loudly.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class EditSite:
    id: str
    file: str  # relative to site-packages, e.g. vllm/attention/ops/paged_attn.py
    line: int  # first anchor line in the pinned wheel
    old: str  # the anchor: whole lines, newline-terminated
    new: str  # template for the replacement; {names} are the knobs' values
    knobs: tuple[str, ...]  # tune keys this edit sets
    doc: str


SITES_0_6_3 = (
    EditSite(
        id="paged-attn-v1-threshold",
        file="vllm/attention/ops/paged_attn.py",
        line=126,
        old=(
            "        use_v1 = (max_seq_len <= 8192\n"
            "                  and (max_num_partitions == 1 or num_seqs * num_heads > 512))\n"
        ),
        new=(
            "        # muh: decode v1/v2 rule tuned for {hardware} ({provenance})\n"
            "        use_v1 = (max_seq_len <= {v1_max_seq_len}\n"
            "                  and (max_num_partitions == 1 or num_seqs * num_heads > {v1_threshold}))\n"
        ),
        knobs=("paged_attention.v1_threshold", "paged_attention.v1_max_seq_len"),
        doc="when decode uses the single-pass PagedAttention v1 kernel (PagedAttention.forward_decode)",
    ),
    EditSite(
        id="prefix-prefill-tile",
        file="vllm/attention/ops/prefix_prefill.py",
        line=712,
        old=("        BLOCK = 128 if current_platform.has_device_capability(80) else 64\n        NUM_WARPS = 8\n"),
        new=(
            "        # muh: prefix-prefill tile tuned for {hardware} ({provenance})\n"
            "        BLOCK = {block}\n"
            "        NUM_WARPS = {num_warps}\n"
        ),
        knobs=("prefix_prefill.block", "prefix_prefill.num_warps"),
        doc="Triton tile and warps of context_attention_fwd (prefix caching, chunked prefill)",
    ),
)

SITES = {"0.6.3": SITES_0_6_3}


def sites_for(version: str) -> tuple[EditSite, ...] | None:
    """The edit sites known for an engine version (``0.6.3.post1`` → the 0.6.3 table)."""
    return SITES.get(version.split(".post")[0].split("+")[0])


def unified_diff(site: EditSite, new_text: str) -> str:
    """A zero-context unified diff replacing the anchor with ``new_text`` (applied with ``patch -p1``)."""
    old_lines = site.old.splitlines(keepends=True)
    new_lines = new_text.splitlines(keepends=True)
    out = [
        f"--- a/{site.file}\n",
        f"+++ b/{site.file}\n",
        f"@@ -{site.line},{len(old_lines)} +{site.line},{len(new_lines)} @@\n",
    ]
    out += ["-" + line for line in old_lines]
    out += ["+" + line for line in new_lines]
    return "".join(out)


def count(text: str, anchor: str) -> int:
    """Occurrences of an anchor as whole lines."""
    return ("\n" + text).count("\n" + anchor)


def apply(text: str, site: EditSite, new_text: str) -> str:
    """Replace the anchor (which must occur exactly once) — the same edit the diff makes."""
    n = count(text, site.old)
    if n != 1:
        raise ValueError(f"{site.file}: anchor of {site.id} occurs {n} times, expected exactly once")
    i = ("\n" + text).index("\n" + site.old)
    return text[:i] + new_text + text[i + len(site.old) :]


# -- read tuned values back from patched source (tests and `muh check`) ----------------------------


def read_v1_rule(source: str) -> dict[str, int]:
    """``use_v1 = (max_seq_len <= A and (... or num_seqs * num_heads > B))`` → {v1_max_seq_len: A, v1_threshold: B}."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "use_v1" for t in node.targets):
            out: dict[str, int] = {}
            for cmp in ast.walk(node.value):
                if isinstance(cmp, ast.Compare) and isinstance(cmp.comparators[0], ast.Constant):
                    left = ast.unparse(cmp.left)
                    if left == "max_seq_len":
                        out["v1_max_seq_len"] = cmp.comparators[0].value
                    elif left == "num_seqs * num_heads":
                        out["v1_threshold"] = cmp.comparators[0].value
            return out
    return {}


def read_prefill_tile(source: str) -> dict[str, object]:
    """``BLOCK = …`` / ``NUM_WARPS = …`` in ``context_attention_fwd`` (first assignment of each)."""
    out: dict[str, object] = {}
    for fn in ast.walk(ast.parse(source)):
        if isinstance(fn, ast.FunctionDef) and fn.name == "context_attention_fwd":
            for node in fn.body:
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
                    name = node.targets[0].id
                    key = {"BLOCK": "block", "NUM_WARPS": "num_warps"}.get(name)
                    if key and key not in out:
                        out[key] = node.value.value if isinstance(node.value, ast.Constant) else ast.unparse(node.value)
    return out


READERS = {"paged-attn-v1-threshold": read_v1_rule, "prefix-prefill-tile": read_prefill_tile}
