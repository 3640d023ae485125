"""Which releases have what their version simulates (models.releases), and the notes a scenario or a
server's variables get for a release that lacks part of it."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from models.releases import CHANGES, has_change, release_differences
from sim.config import scenario_from_dict
from tests.test_server_vars import OLTP

BY_MDEV = {c.name: c for c in CHANGES}


@pytest.mark.parametrize("release, has", [
    # (major, minor, patch): MDEV-33053, MDEV-33613, MDEV-36226
    ((10, 11, 6), (False, False, False)), ((10, 11, 7), (True, False, False)),
    ((10, 11, 8), (True, True, False)), ((10, 11, 11), (True, True, False)), ((10, 11, 12), (True, True, True)),
    ((10, 6, 16), (False, False, False)), ((10, 6, 17), (True, False, False)), ((10, 6, 18), (True, True, False)),
    ((10, 6, 22), (True, True, True)), ((10, 5, 29), (False, False, False)), ((10, 10, 7), (False, False, False)),
    ((11, 0, 6), (True, True, False)), ((11, 3, 2), (None, False, False)), ((11, 4, 2), (True, True, False)),
    ((11, 4, 6), (True, True, True)), ((11, 8, 3), (True, True, None)), ((12, 1, 1), (True, True, True)),
])
def test_release_table(release, has):
    assert tuple(has_change(BY_MDEV[m], *release) for m in ("MDEV-33053", "MDEV-33613", "MDEV-36226")) == has


@given(st.sampled_from(CHANGES), st.integers(5, 12), st.integers(0, 12), st.integers(0, 40))
def test_a_change_once_in_a_series_stays(change, major, minor, patch):
    """Within a series a change, once there, is in every later patch release."""
    if has_change(change, major, minor, patch):
        assert has_change(change, major, minor, patch + 1)


@pytest.mark.parametrize("version, release", [
    ("mariadb-10.11", (10, 11, 19)), ("mariadb-10.11", (10, 11, 12)), ("mariadb-10.11", (11, 4, 7)),
    ("mariadb-10.11", (11, 4, 6)), ("mariadb-10.11", (12, 1, 1)), ("mysql-8.0", (8, 0, 20)),
    ("mysql-8.0.30", (8, 0, 36)), ("mysql-5.7", (5, 7, 44)), ("mysql-5.6", (5, 6, 6)), ("mysql-8.4", (8, 4, 3)),
])
def test_no_difference_for_releases_with_every_change(version, release):
    assert release_differences(version, *release) is None


def test_mysql_before_8_0_20_writes_the_old_doublewrite():
    """mysql-8.0 simulates 8.0.20-8.0.29; 8.0.11-8.0.19 kept 5.7's doublewrite in ibdata."""
    text = release_differences("mysql-8.0", 8, 0, 19)
    assert text.startswith("MySQL 8.0.19 lacks the doublewrite files (first in 8.0.20)")
    assert "system tablespace" in text and "8.0.20-8.0.29" in text


def test_differences_name_what_the_release_lacks():
    text = release_differences("mariadb-10.11", 10, 11, 7)
    assert "MariaDB 10.11.7 lacks MDEV-33613 (first in 10.11.8)" in text
    assert "innodb_lru_flush_size" in text and "MDEV-36226 (first in 10.11.12)" in text
    assert "MDEV-33053" not in text and "10.11.18" in text
    assert "whether MariaDB 11.3.2 has MDEV-33053 is not known here" in release_differences("mariadb-10.11", 11, 3, 2)


def _notes(version: str, runs_as: str = "mariadb-10.11") -> list[str]:
    doc = {k: dict(v) for k, v in OLTP.items()}
    doc["server"] = {"version": version}
    s = scenario_from_dict(doc, "s.toml")
    assert s.server.version == runs_as
    return [n for n in s.notes if n.startswith("server.version")]


def test_scenario_release_gets_the_note():
    """A 10.11 release before 10.11.8 is its own series, yet gets a note saying what it lacks; a
    release of another series gets it after the "simulated as" note."""
    assert _notes("mariadb-10.11.6") == [f"server.version 'mariadb-10.11.6': {release_differences('mariadb-10.11', 10, 11, 6)}"]
    assert _notes("10.6.16-MariaDB-log") == [
        "server.version '10.6.16-MariaDB-log' is simulated as mariadb-10.11 (its flushing algorithms and "
        f"defaults); {release_differences('mariadb-10.11', 10, 6, 16)}"]


@pytest.mark.parametrize("version", ["10.11", "mariadb-10.11", "mariadb-10.11.19", "10.11.18-MariaDB"])
def test_a_series_or_a_current_release_gets_no_release_note(version):
    """A bare series names no release: it is not taken as its .0 release here."""
    assert _notes(version) == []


def test_server_variables_of_an_old_release(tmp_path):
    """SHOW GLOBAL VARIABLES of a 10.11.6 server: the note reaches the scenario once."""
    path = tmp_path / "vars.tsv"
    path.write_text("version\t10.11.6-MariaDB-0+deb12u1\ninnodb_io_capacity\t400\n")
    doc = {k: dict(v) for k, v in OLTP.items()}
    s = scenario_from_dict(doc, "s.toml", server_vars=str(path))
    assert s.server.version == "mariadb-10.11"
    notes = [n for n in s.notes if "MDEV-33613" in n]
    assert len(notes) == 1 and "MariaDB 10.11.6 lacks" in notes[0]


def test_mysql_release_notes():
    """mysql-8.0.19 is its own series yet gets the doublewrite note; 8.0.36 keeps only its mapping."""
    assert _notes("mysql-8.0.19", "mysql-8.0") == [
        f"server.version 'mysql-8.0.19': {release_differences('mysql-8.0', 8, 0, 19)}"]
    assert _notes("8.0.36", "mysql-8.0.30") == ["server.version '8.0.36' is simulated as mysql-8.0.30"]
    assert _notes("mysql-8.0", "mysql-8.0") == []


@pytest.mark.parametrize("release, has", [
    ((10, 5, 29), False), ((10, 6, 22), False), ((10, 7, 8), False), ((10, 8, 2), False), ((10, 8, 3), True),
    ((10, 9, 1), True), ((10, 11, 0), True), ((11, 4, 2), True),
])
def test_log_o_direct_came_with_10_8_3(release, has):
    """MDEV-28111: ib_logfile0 opened O_DIRECT from 10.8.3 (the 10.8.3 changelog); 10.5-10.7 never."""
    assert has_change(BY_MDEV["MDEV-28111"], *release) is has


def test_a_bare_series_is_told_what_none_of_its_releases_has():
    """10.6 names no release, yet no 10.6 release opens its log O_DIRECT; 10.5 lacks all four changes.
    What depends on the release (MDEV-33053 came in 10.6.17) is not said of the series."""
    text = release_differences("mariadb-10.11", 10, 6, None)
    assert text.startswith("every MariaDB 10.6 release lacks MDEV-28111, before which ib_logfile0 is written "
                           "through the page cache")
    assert "MDEV-33053" not in text and "more threads run than there are cores" in text
    assert "free blocks" not in text and text.endswith("results differ from theirs where more threads run than "
                                                       "there are cores)")
    five = release_differences("mariadb-10.11", 10, 5, None)
    assert all(m in five for m in ("MDEV-33053", "MDEV-33613", "MDEV-36226", "MDEV-28111"))
    assert release_differences("mariadb-10.11", 10, 11, None) is None
    assert _notes("10.6") == [f"server.version '10.6' is simulated as mariadb-10.11 (its flushing algorithms and "
                              f"defaults); {text}"]


@pytest.mark.parametrize("written, series", [("10.6.16", (10, 6, 16)), ("11.4.2", (11, 4, 2)), ("10.5.23", (10, 5, 23))])
def test_a_mariadb_release_without_its_suffix(written, series):
    """10.6.16 is MariaDB's (MySQL's majors are 5, 8 and 9), written with or without -MariaDB."""
    assert _notes(written) == [f"server.version {written!r} is simulated as mariadb-10.11 (its flushing algorithms "
                               f"and defaults); {release_differences('mariadb-10.11', *series)}"]
