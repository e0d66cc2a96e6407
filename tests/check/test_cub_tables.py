"""Each family's CUB correspondence is one table (muh/families/cub.py), held by its folder or the
catalogue; the probe, the parity comparison and the generated == CUB unit are all read from it."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from muh.check import cub_truth, parity, tuning_headers
from muh.families import cub, histogram, reduce, scan, transform
from muh.schema import catalog

CHECK = Path(cub_truth.__file__).parent


def test_every_family_with_a_cub_header_has_one_table_and_its_folder_holds_it():
    tabled = {name for name, fam in catalog.FAMILIES.items() if fam.cub is not None}
    assert tabled == set(cub_truth.TABLES) and len(tabled) == 24
    # the kernel families CUB tunes hold their table in their folder; the catalogue takes it from there
    for module in (reduce, scan, histogram, transform):
        name = module.__name__.rpartition(".")[2]
        assert catalog.FAMILIES[name].cub is module.CUB
        assert catalog.FAMILIES[name].dims == module.CUB.dims
    assert catalog.FAMILIES["histogram"].dims[-1] == "sub_histograms"  # muh's own: no CUB member
    assert [m.cub for m in histogram.CUB.members if m.dim == "sub_histograms"] == [None]


@pytest.mark.parametrize("family", sorted(cub_truth.TABLES))
def test_a_table_names_only_known_dimensions(family):
    table = cub_truth.TABLES[family]
    fam = catalog.FAMILIES[family]
    assert all(m.dim in catalog.DIMS for m in table.members)
    # the table's sub-policies first, then muh's own (catalog._cub's own_subs: no CUB member to compare)
    assert fam.subs[: len(table.subs)] == tuple(s.name for s in table.subs)
    for sub in table.subs:
        assert {m.dim for m in sub.members} <= set(fam.dims), sub.name
    assert set(table.types) <= set(cub.PROBED) and table.header == fam.cub_header
    assert parity.compared_dims(family), "a table CUB tunes compares something"


def test_one_table_feeds_the_probe_the_parity_values_and_the_equality_unit(monkeypatch):
    """Renaming one member in histogram's table changes the probe's row, what parity compares and the
    generated == CUB builder together (nothing else holds the name)."""
    table = histogram.CUB
    renamed = dataclasses.replace(
        table, members=tuple(cub.Member(m.dim, "VEC_WIDTH") if m.dim == "vec" else m for m in table.members)
    )
    before = cub_truth.render_program([], [])
    assert "int(P::VEC_SIZE)" in before and "VEC_WIDTH" not in before
    monkeypatch.setitem(cub_truth.TABLES, "histogram", renamed)
    after = cub_truth.render_program([], [])
    assert "int(P::VEC_WIDTH)" in after and "VEC_SIZE" not in after
    assert tuning_headers.cub_expr(next(m for m in renamed.members if m.dim == "vec")) == "P::VEC_WIDTH"
    # dropping a member drops it from the comparison and from the probe's row
    dropped = dataclasses.replace(table, members=tuple(m for m in table.members if m.dim != "work_stealing"))
    monkeypatch.setitem(cub_truth.TABLES, "histogram", dropped)
    assert "work_stealing" not in parity.compared_dims("histogram")
    assert "IS_WORK_STEALING" not in cub_truth.render_program([], [])


def test_compared_dimensions_spell_sub_policies_and_delays():
    assert parity.compared_dims("scan")[-3:] == ("delay.kind", "delay.ns", "delay.l2_write_latency")
    radix = parity.compared_dims("radix_sort")
    assert radix[0] == "use_onesweep" and "onesweep/rank" in radix and "exclusive_sum/items" not in radix
    assert "small/threads_per_segment" in parity.compared_dims("segmented_sort")


def _literals(path: Path) -> set[str]:
    return {
        n.value
        for n in ast.walk(ast.parse(path.read_text()))
        if isinstance(n, ast.Constant) and isinstance(n.value, str)
    }


def test_the_check_modules_and_probe_templates_name_no_family():
    names = set(catalog.FAMILIES) - set(catalog.DELAY_KINDS)  # `reduce_by_key` is also a delay's name
    for module in ("cub_truth.py", "parity.py", "tuning_headers.py"):
        assert not names & _literals(CHECK / module), module
    for template in ("cub_truth.cu.j2", "cub_probe.inc.j2", "cub_equal.cu.j2"):
        text = (CHECK / template).read_text()
        assert not [n for n in names if f"{n}_policy" in text or f"{n}_row" in text or f'"{n}"' in text], template
