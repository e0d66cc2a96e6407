"""The registry of diagnostic codes: every code muh reports, what it means, and an example message.

``tests/test_codes.py`` fails when a code is used in the source without an entry here (or an entry
is used nowhere) and when docs/diagnostics.md is not ``python -m muh.codes``'s output.
E- codes are errors (nothing is written), W- codes warnings.
"""

from __future__ import annotations

from typing import NamedTuple


class Code(NamedTuple):
    meaning: str
    example: str


CODES: dict[str, Code] = {
    # -- reading and parsing a spec ----------------------------------------------------------------------
    "E-IO": Code("the spec file cannot be read", "no such file: specs/h2oo.muh"),
    "E-ENCODING": Code("the spec is not UTF-8 text", "not UTF-8 text (byte 0xff)"),
    "E-SYNTAX": Code("the text is not muh's grammar", "a block kind is a single name, not `policy.float32`"),
    "E-STRING": Code("a string literal is malformed", 'bad escape sequence in string "a\\q"'),
    "E-NUMBER": Code("a number muh does not accept (hexadecimal, nan, inf)", "`0x10`: muh numbers are decimal"),
    "E-UNIT": Code("an unknown unit after a number", "unknown unit `kib`"),
    "E-DEPTH": Code("blocks nest deeper than the parser allows", "nesting deeper than 64 levels"),
    "E-VERSION": Code(
        "the `muh <version>` line is missing or names a version muh does not know",
        "the spec does not say its language version",
    ),
    # -- the spec's structure ------------------------------------------------------------------------------
    "E-TOPLEVEL": Code("a key = value outside any block", "`threads = …` outside a block"),
    "E-BLOCK": Code("a block where that kind of block is not allowed", "`space` blocks are not allowed here"),
    "E-NAME": Code(
        "a block named with a word of the language (`muh`, `on`, `when`, `in`, `step`, `true`, `false`)",
        "`when` is a word of the language, not a name for a `hardware` block",
    ),
    "E-KEY": Code("a key the block does not have", "unknown key `thread` in an algorithm block"),
    "E-DUP": Code("a key or argument given twice", "argument `ns` given twice"),
    "E-ARG": Code(
        "a call's arguments are not written `name = value`",
        "arguments of `fixed(…)` are named: write `fixed(name = value)`",
    ),
    "E-REF": Code("a bare name that is no known value or reference", "unknown reference `warp_transposd`"),
    "E-ANNOTATION": Code("an unknown @annotation", "unknown annotation `@measure`"),
    "E-TARGET": Code(
        "an algorithm or deploy block without `on <hardware>`", "`algorithm reduce` must say which hardware it runs on"
    ),
    "E-FAMILY": Code("an algorithm family muh does not know", "unknown algorithm `reduse`"),
    "E-MISSING": Code("a required key is not set", "`warp_size` is required here"),
    "E-VALUE": Code("a value of the wrong type or out of its range", "`threads` must be a whole number"),
    "E-ENUM": Code("a value outside a dimension's choices", "`warp_transposd` is not a valid `load`"),
    "E-RANGE": Code("a `space` range is malformed", "range ends and step must be whole numbers"),
    "E-SPACE": Code("a `space` dimension lists no candidates", "`items` lists no candidates"),
    # -- algorithms and policies ---------------------------------------------------------------------------
    "E-DEFAULT": Code("an algorithm without `policy default`", "`algorithm reduce on h200` has no `policy default`"),
    "E-TYPE": Code("an element type muh does not know", "unknown element type `float33`"),
    "E-TYPEDEF": Code(
        "a `type` block no C++ type can have (alignment not a power of two, size not a multiple "
        "of it, over 1 KiB, a built-in name)",
        "`type rec`: size = 12 B is not a multiple of align = 8 B",
    ),
    "E-POLICYKEY": Code("a policy key that is not `default`, a type or type.op", "`float33` is not an element type"),
    "E-VALUES": Code(
        "`values = […]` on a family without values of their own (not a by-key family)",
        "`reduce` has no values of their own: `values` is for by-key families",
    ),
    "E-SUB": Code("a sub-policy the family does not have", "`reduce` has no sub-policy `onesweep`"),
    "E-DIM": Code("a dimension the family has no use for", "`bits_per_pass` is not tunable for reduce"),
    "E-BUCKET": Code(
        "size buckets that are malformed, out of order, overlapping, leaving sizes uncovered, "
        "or where buckets are not allowed",
        "bucket `elements in 2^20..2^26` overlaps `elements < 2^24` (sizes 2^20..2^24 in both)",
    ),
    "E-THREADS": Code(
        "threads beyond the hardware's block limit", "threads = 2048 exceeds max_threads_per_block = 1024 on `h200`"
    ),
    "E-PARITY-SCOPE": Code(
        "a `parity { out_of_scope }` pattern that excuses no case (empty, a broken glob, no family) or every case",
        "`*` excuses every case of every family: the parity check would check nothing",
    ),
    "E-HARDWARE": Code(
        "a hardware fact beyond its vendor's documented limit (a warp width it never built, too many "
        "threads per block), a time of zero, or contradicting another fact",
        "max_threads_per_block = 4096 exceeds nvidia's limit of 1024 threads per block",
    ),
    "E-WARP": Code(
        "a block size or thread count that is no multiple of the warp",
        "max_threads_per_block = 1000 is not a multiple of warp_size = 64",
    ),
    "E-SMEM": Code(
        "a tile larger than the hardware's shared memory per block (derive)",
        "scan float64: tile 384 × 40 × 8 B = 120 KiB exceeds smem_per_block = 48 KiB on `bi100`",
    ),
    "E-DERIVED": Code(
        "a derived value no kernel can launch with (zero threads or items)",
        "reduce float16: the scaling rule derives threads = 0 on `bi100` (T4=256, I4=16, size=2, smem=1, "
        "warp=64): no kernel launches with zero",
    ),
    # -- generating ----------------------------------------------------------------------------------------
    "E-OPTION": Code(
        "a command-line option that cannot work with this spec (named as the option)",
        "--emulate-warp 48: warp sizes must be powers of two (logical 48, physical 32)",
    ),
    "E-OUTPUT": Code(
        "an output folder muh may not write or replace (not muh's own, or its own files edited)",
        "generated/x holds files muh did not write",
    ),
    "E-STDOUT": Code(
        "what a command prints cannot be written to its standard output (a full disk or device)",
        "cannot write to standard output: No space left on device",
    ),
    "E-EMIT": Code(
        "two emitters would write the same file", "emitters `ops` and `kernels` both write kernels/common.cu"
    ),
    "E-FORMAT": Code(
        "the pinned clang-format that formats the generated C++ is missing, another version, or failed",
        "clang-format is not installed; install the pinned formatter: pip install 'clang-format==23.1.5'",
    ),
    "E-KERNELS": Code(
        "the kernels cannot be generated for a hardware's policies (family records' checks)",
        "kernels for `bi100`: scan.float32: tile needs 70144 B of shared memory, the hardware has 49152 B",
    ),
    "E-CXX-LEVEL": Code(
        "the toolchain's C++ level is below what the tuning headers need",
        "hardware `old`: the tuning headers need C++14 (the toolchain says C++11)",
    ),
    "W-ACK-UNUSED": Code(
        "an `@acknowledged` annotation whose line gives no such warning (it keeps nothing)",
        '`@acknowledged(warning = "W-DEPLOY-PARSER")`: this line gives no W-DEPLOY-PARSER warning',
    ),
    "W-CXX-UNSET": Code(
        "a tuning-header dimension has no value (the header holds zero)",
        "reduce on h200: `block` is not set (first for float32); the tuning header holds a zero value",
    ),
    "E-OPS": Code(
        "the LLM ops cannot be generated for a hardware",
        "ops.float32.row_threads = 96 is not a multiple of the warp size 64",
    ),
    "E-OPS-PACKAGE": Code(
        "the muh_kernels package cannot be assembled for the serving image",
        "muh_kernels cannot be packaged: muh/runtime/llm.py imports muh, which the serving image lacks",
    ),
    "W-OPS-ARCH": Code(
        "no target architecture: the ops package builds for the compiler's default",
        "no target architecture for `lab`: muh_kernels is built for the compiler's default",
    ),
    # -- deploy (vLLM) --------------------------------------------------------------------------------------
    "E-DEPLOY-MANY": Code("more than one deploy block", "a spec describes one deployment; `deploy b` is a second one"),
    "E-DEPLOY-ENGINE": Code("an engine or version without a flag table in muh", "muh has no flag table for vllm 0.5.0"),
    "E-DEPLOY-PLATFORM": Code(
        "a platform muh has no plug-in for", "muh has no platform `k8s`; platforms: computility, kubernetes"
    ),
    "E-DEPLOY-IMAGE": Code("a base image that is no image reference", "`my image` is not a container image reference"),
    "E-DEPLOY-KEY": Code(
        "a deploy setting in the wrong place", "set the model path with `model = …` in the deploy block, not in serve"
    ),
    "E-DEPLOY-VALUE": Code(
        "a value that cannot be put on the server's command line safely", "argument 3 of the command starts with `-`"
    ),
    "E-DEPLOY-EXT": Code(
        "an extension flag that is not a long option", "`x` is not a long option (`--name-with-dashes`)"
    ),
    "E-DEPLOY-TP": Code(
        "more parallel ranks than the hardware's devices",
        "tensor × pipeline parallel size 8 exceeds the 4 device(s) of `bi100`",
    ),
    "E-DEPLOY-DTYPE": Code(
        "a dtype the hardware cannot run", "bfloat16 needs compute capability ≥ 8.0; `bi100` has none"
    ),
    "W-DEPLOY-DTYPE": Code(
        "`dtype = auto` may pick a type the hardware cannot run",
        "dtype auto picks bfloat16 for bfloat16 checkpoints, which `bi100` cannot run",
    ),
    "E-DEPLOY-ENV": Code(
        "an environment variable name that is not one", "`1X` is not a valid environment variable name"
    ),
    "W-DEPLOY-PLUGIN": Code(
        "the tuning plugin will not load", "VLLM_PLUGINS does not list `muh`: the tuning plugin will not load"
    ),
    "E-DEPLOY-TRITON": Code(
        "a feature combination that needs Triton where the hardware has none",
        "prefix caching, chunked prefill … and MoE layers need Triton",
    ),
    "E-DEPLOY-MOE": Code(
        "MoE shapes that do not split over the ranks",
        "moe.intermediate_size = 1000 is not divisible by tensor_parallel_size = 3",
    ),
    "W-DEPLOY-OPS": Code(
        "an op is served by muh's development runtime, which the image may lack",
        "`rms_norm` is served by `muh.runtime.vllm_provider`, muh's development runtime, which the image lacks",
    ),
    "E-DEPLOY-REFUSED": Code(
        "`muh deploy` refuses (dirty tree, drift, failed checks); the message says why",
        "the target repository has uncommitted changes",
    ),
    "E-DEPLOY-API": Code(
        "an `api { }` feature the engine or the rest of the spec cannot serve",
        "`thinking_off` writes its own chat template; the spec also sets `chat_template`",
    ),
    "E-DEPLOY-UNTESTED": Code(
        "an `untested { }` entry without its reason, or for a value the block does not set",
        "untested `serve.x` needs a reason (a string)",
    ),
    "E-DEPLOY-RUN": Code(
        "a run-file pre-step that cannot be written or says contradictory things",
        "pre-step 1 is both required and tolerated (`on_failure`)",
    ),
    "W-DEPLOY-PLATFORM": Code(
        "the platform cannot say something of the plan (a card without a device-plugin resource)",
        "the kubernetes platform knows no device-plugin resource for `amd` cards",
    ),
    "W-DEPLOY-PROBE": Code(
        "the image carries no probe bundle (the run file says so at start)", "the image carries no probe: …"
    ),
    "W-DEPLOY-IMAGE": Code(
        "an engine variant known in another base image than this one",
        "enginex-3.2 is known in `enginex/bi100:v1`, not in this image",
    ),
    "W-DEPLOY-PARSER": Code(
        "a fork-only flag muh cannot provide, passed only where the image has it",
        "`--reasoning-parser` may be absent in enginex bi100-v1.2.3 and muh cannot provide it: …",
    ),
    "W-DEPLOY-FLAG": Code("a flag every good run of the variant had is missing", "`--enforce-eager` is missing: …"),
    "W-DEPLOY-ENV": Code(
        "an environment setting the variant's good runs had differs or is missing",
        "`VLLM_WORKER_MULTIPROC_METHOD` is missing: …",
    ),
    "W-DEPLOY-UNTESTED": Code(
        "a serving value no reported run of the engine variant used (and no reason given)",
        "`serve.max_model_len = 131072` rests on no reported run of enginex bi100-v1.2.3 …",
    ),
    "E-VLLM-CONFIG": Code(
        "a configuration the engine refuses at start-up (its own config checks, cited file:line)",
        "max_num_batched_tokens 4096 < max_model_len 80000 without chunked prefill: vLLM refuses to start …",
    ),
    "W-DEPLOY-NOOP": Code(
        "a setting that does nothing: no shipped code reads it, or another setting makes it inert",
        "`max_seq_len_to_capture` does nothing with `enforce_eager = true` …",
    ),
    "W-DEPLOY-SELFTEST": Code(
        "a muh op the start self-test cannot test, so it is never rebound",
        "the start self-test has no served shape for `rms_norm`: muh's op will never be rebound",
    ),
    "W-DEPLOY-MODEL": Code(
        "a model setting the variant has not been seen to serve", "the variant was not run with this model shape"
    ),
    "W-DEPLOY-DETACHED": Code(
        "the deploy repository's HEAD is detached: the deploy commit would be on no branch",
        "../repo has a detached HEAD (at 1a2b3c4d5e6f): the deploy commit will belong to no branch",
    ),
    "E-DEPLOY-WRITE": Code(
        "deploy could not write its files; nothing was changed", "nothing was changed: [Errno 13] Permission denied"
    ),
    "E-DEPLOY-GIT": Code(
        "files were written but git could not commit them", "files written but not committed: git exited with 128"
    ),
    "E-VLLM-FLAG": Code("a setting that is no flag of the pinned vLLM", "`max_num_seq` is not a flag of vllm 0.6.3"),
    "E-VLLM-VALUE": Code(
        "a flag value of the wrong kind", "`enforce-eager` is a switch; write `enforce_eager = true` or `false`"
    ),
    "E-VLLM-CHOICE": Code("a value outside a flag's choices", "`dtype` does not accept `fp13`"),
    "E-VLLM-REQUIRES": Code("a flag that needs another one", "`--enable-auto-tool-choice` needs `--tool-call-parser`"),
    "E-VLLM-PARSER": Code(
        "a tool-call parser the engine does not have", "tool-call parser `x` does not exist in vllm 0.6.3"
    ),
    "W-VLLM-EXT": Code(
        "an extension flag the engine already has", "`--max-num-seqs` is already a flag of vllm 0.6.3; "
    ),
    "E-VLLM-KNOB": Code("a vLLM knob muh refuses to tune", "`block_size` cannot be tuned: changes the KV-cache layout"),
    "E-VLLM-OP": Code("an op the engine has that muh cannot serve", "vLLM 0.6.3 has no op `gelu` muh can serve"),
    "E-EXPLAIN": Code("`muh explain` asked for something the spec does not have", "this spec has no deploy block"),
    # -- tools (tune, check) ---------------------------------------------------------------------------------
    "E-FLAG": Code("a command-line option with a bad value", "--time '5 parsecs' is not a duration"),
    "E-TUNE": Code("`muh tune` cannot measure what was asked", "muh's topk kernels are not generated for int8"),
    "E-NOGPU": Code(
        "`muh tune` needs a GPU and sees none", "muh tune measures on a GPU, and this machine has none visible"
    ),
    "E-RAY": Code("--ray without Ray installed", "--ray/--ray-address need Ray, which is not installed"),
    "E-PLOT": Code("--plot without matplotlib installed", "--plot needs matplotlib, which is not installed"),
    "E-NVCC": Code(
        "nvcc is needed (CUB ground truth) and not found",
        "nvcc (the CUDA compiler) was not found; CUB ground truth needs it",
    ),
    "E-NVCC-COMPILE": Code("nvcc could not compile a probe", "nvcc could not compile the CUB probe"),
    "E-NVCC-RUN": Code("a compiled probe failed when run", "the CUB probe exited with 1"),
    # -- probe (measure the card's facts) ---------------------------------------------------------------------
    "E-PROBE": Code(
        "a probe bundle cannot be made or a result cannot be ingested for this spec",
        "a probe bundle is for one hardware block; specs/nvidia.muh has 4",
    ),
    "E-PROBE-RESULT": Code("a probe result file that is not one (format, version)", "result.json: not JSON"),
    "E-PROBE-FOREIGN": Code(
        "a probe result from another card, bundle or an emulation run",
        "result.json comes from another device: it reports 'NVIDIA A100', the spec's device_name is 'NVIDIA H200'",
    ),
    "E-PROBE-WARP": Code(
        "muh's warp layer failed on the probed card",
        "muh's warp layer for warp_size = 64 (native) is wrong on X: 32 of 64 lanes exchange",
    ),
    "E-PROBE-CONTRADICTS": Code(
        "the spec states a hardware fact the probe measured otherwise",
        "sm_count = 132 in the spec, but the probe measured 16 on Iluvatar BI-V100",
    ),
    "W-PROBE": Code(
        "a probe measurement disagrees with the driver's attribute (kept, reported)",
        "the probe's warp size (64) differs from the attribute (32)",
    ),
    # -- editors ---------------------------------------------------------------------------------------------
    "E-INTERNAL": Code(
        "muh itself failed on an input (a bug: the language server reports it instead of crashing)",
        "muh failed on this input (KeyError: 'x')",
    ),
}


def markdown() -> str:
    """The docs' table (docs/diagnostics.md)."""
    lines = [
        "# Diagnostic codes",
        "",
        "Generated by `python -m muh.codes` from `muh/codes.py` (a test keeps both in step). Every "
        "diagnostic names its code in brackets at the end of its first line; `E-` codes are errors "
        "(nothing is written), `W-` codes warnings.",
        "",
        "| code | meaning | example |",
        "|---|---|---|",
    ]
    for code, c in sorted(CODES.items(), key=lambda kv: (kv[0][2:], kv[0])):
        example = c.example.replace("|", "\\|")
        lines.append(f"| `{code}` | {c.meaning} | {example} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
