"""The results database: keys, cache lookups, resume, isolation by machine and muh version."""

from __future__ import annotations

import sqlite3

import pytest

from muh.tune.db import RunKey, Trial, TuneDB


def key(**kw) -> RunKey:
    base = dict(
        spec="h200",
        algorithm="reduce@h200",
        dtype="float32",
        base="b0",
        fingerprint="fp1",
        gpu="NVIDIA H200",
        driver="580",
        toolkit="13.0.88",
        muh_version="0.1.0",
    )
    base.update(kw)
    return RunKey(**base)


def test_put_get_roundtrip(tmp_path):
    db = TuneDB(tmp_path / "t.sqlite")
    t = Trial(
        "ok",
        "",
        [1, 2],
        [10.0, 20.0],
        [11.0, 22.0],
        15,
        variant="ipt_16.tpb_256",
        kernel="k1",
        score=1.1,
        min=1.05,
        mean=1.1,
        max=1.15,
        phase="confirm",
        round=2,
        device="GPU-1234",
    )
    db.put(key(), t)
    got = db.get(key(), "k1", "confirm", 2)
    assert got == t
    assert db.get(key(), "k2") is None


def test_rows_survive_reopening_and_are_isolated_by_key(tmp_path):
    path = tmp_path / "t.sqlite"
    db = TuneDB(path)
    db.put(key(), Trial("ok", variant="a", kernel="k1"))
    db.put(key(), Trial("compile_error", "error: x", variant="b", kernel="k2"))
    db.close()
    db = TuneDB(path)
    assert [t.variant for t in db.trials(key())] == ["a", "b"]
    for other in (
        key(fingerprint="fp2"),
        key(muh_version="0.2.0"),
        key(base="b1"),
        key(dtype="float64"),
        key(spec="other"),
    ):
        assert db.get(other, "k1") is None
        assert db.trials(other) == []


def test_adding_variants_keeps_old_rows(tmp_path):
    db = TuneDB(tmp_path / "t.sqlite")
    db.put(key(), Trial("ok", variant="a", kernel="k1"))
    db.put(key(), Trial("ok", variant="new", kernel="k9"))
    assert {t.variant for t in db.trials(key())} == {"a", "new"}


def test_phases_and_rounds_are_separate_rows(tmp_path):
    db = TuneDB(tmp_path / "t.sqlite")
    db.put(key(), Trial("ok", variant="a", kernel="k1", score=1.0))
    db.put(key(), Trial("ok", variant="a", kernel="k1", score=1.1, phase="confirm", round=0))
    db.put(key(), Trial("ok", variant="a", kernel="k1", score=1.2, phase="confirm", round=1))
    assert db.get(key(), "k1").score == 1.0
    assert db.get(key(), "k1", "confirm", 1).score == 1.2
    assert len(db.trials(key(), "confirm")) == 2


def test_sessions_are_recorded(tmp_path):
    db = TuneDB(tmp_path / "t.sqlite")
    sid = db.start_session({"algo": "reduce"})
    db.end_session(sid, "interrupted")
    row = db.conn.execute("SELECT status, args FROM sessions WHERE id=?", (sid,)).fetchone()
    assert row[0] == "interrupted" and "reduce" in row[1]


def test_schema_version_mismatch_is_refused(tmp_path):
    path = tmp_path / "t.sqlite"
    TuneDB(path).close()
    c = sqlite3.connect(path)
    c.execute("UPDATE meta SET value='99' WHERE key='schema'")
    c.commit()
    c.close()
    with pytest.raises(ValueError, match="schema 99"):
        TuneDB(path)
