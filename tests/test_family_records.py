"""A family record is made by one helper from its module (muh.families.base.record)."""

from __future__ import annotations

import sys
import types

from muh.families import base, registry


def _module(name: str, **names) -> str:
    mod = types.ModuleType(name)
    mod.__dict__.update(names)
    sys.modules[name] = mod
    return name


def test_record_reads_the_parts_from_its_module_and_names_the_family_after_its_folder(monkeypatch):
    def read(get):
        return None

    def params(cfg, dtype, pol):
        return []

    def checks(cfg, dtype, pol):
        return ["no"]

    name = _module(
        "muh.families.example",
        DTYPES=("float32",),
        Policy=object,
        read=read,
        params=params,
        checks=checks,
        OPERATORS={"sum": 0},
    )
    try:
        rec = base.record(name, doc="d", tunable=(), api=())
        assert (rec.name, rec.dtypes, rec.policy, rec.read, rec.params) == (
            "example",
            ("float32",),
            object,
            read,
            params,
        )
        assert rec.checks is checks and rec.operators == {"sum": 0}
        assert rec.size_buckets and rec.globals(None) == []  # the defaults where the module defines none
        # a part given to record wins over the module's
        assert base.record(name, doc="d", tunable=(), api=(), dtypes=("int32",)).dtypes == ("int32",)
    finally:
        del sys.modules[name]


def test_every_registered_record_is_named_after_its_folder_with_its_module_parts():
    for name in registry.ALL:
        rec = registry.get(name)
        module = sys.modules[f"muh.families.{name}"]
        assert rec.name == name and rec.read is module.read and rec.params is module.params
        assert rec.harness is None or rec.harness.template == "harness.cu.j2"
