"""What muh knows about a pinned vLLM: its exact CLI (from the committed fixture) and its tuning points.

The fixture ``data/vllm-<version>.json`` is written by ``tools/extract_vllm_flags.py`` from the
wheel's own sources (``add_argument`` calls read statically). Versions muh has no fixture for are
refused rather than guessed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources


@dataclass(frozen=True)
class Option:
    """One ``add_argument`` of the server: all its option strings and how it takes a value."""

    flags: tuple[str, ...]
    dest: str
    kind: str  # switch | optional_bool | bool | value | list | append
    type: str | None
    choices: tuple | None
    default: object
    where: str  # file:line in the wheel
    const: object = None
    range: dict | None = None  # numeric options: min/max (and *_open, *_where) from the engine's sources

    @property
    def long(self) -> str:
        return next((f for f in self.flags if f.startswith("--")), self.flags[0])


@dataclass(frozen=True)
class EngineInfo:
    engine: str
    version: str
    entrypoint: str
    options: tuple[Option, ...]
    requires: tuple[tuple[str, str, str], ...]  # (dest, required dest, where)
    tool_call_parsers: tuple[str, ...]
    moe_config_files: tuple[str, ...]
    wheel: str
    wheel_sha256: str

    def option(self, flag: str) -> Option | None:
        """The option with exactly this option string (no abbreviations)."""
        for o in self.options:
            if flag in o.flags:
                return o
        return None

    def default(self, dest: str):
        """The server's default for the option ``dest`` (``max_num_seqs`` → 256 in 0.6.3), read from the wheel."""
        return next(o.default for o in self.options if o.dest == dest)

    @property
    def all_flags(self) -> list[str]:
        return sorted(f for o in self.options for f in o.flags)


def available_versions(engine: str = "vllm") -> list[str]:
    names = [p.name for p in resources.files("muh.engines.vllm").joinpath("data").iterdir()]
    prefix = f"{engine}-"
    return sorted(n[len(prefix) : -len(".json")] for n in names if n.startswith(prefix) and n.endswith(".json"))


def resolve_version(version: str, engine: str = "vllm") -> str | None:
    """``0.6.3`` → ``0.6.3.post1`` when exactly one fixture matches that release; exact names win."""
    known = available_versions(engine)
    if version in known:
        return version
    matches = [v for v in known if v.split(".post")[0] == version]
    return matches[0] if len(matches) == 1 else None


@lru_cache(maxsize=None)
def load_engine(version: str, engine: str = "vllm") -> EngineInfo:
    """The fixture for ``engine==version`` (exact fixture name; use ``resolve_version`` first)."""
    raw = json.loads(
        resources.files("muh.engines.vllm").joinpath("data").joinpath(f"{engine}-{version}.json").read_text()
    )
    opts = tuple(
        Option(
            tuple(o["flags"]),
            o["dest"],
            o["kind"],
            o["type"],
            tuple(o["choices"]) if o["choices"] is not None else None,
            o["default"],
            o["where"],
            o.get("const"),
            o.get("range"),
        )
        for o in raw["options"]
    )
    return EngineInfo(
        engine=raw["engine"],
        version=raw["version"],
        entrypoint=raw["entrypoint"],
        options=opts,
        requires=tuple((r["if"], r["requires"], r["where"]) for r in raw["requires"]),
        tool_call_parsers=tuple(raw["tool_call_parsers"]),
        moe_config_files=tuple(raw["moe_config_files"]),
        wheel=raw["source"]["wheel"],
        wheel_sha256=raw["source"]["sha256"],
    )
