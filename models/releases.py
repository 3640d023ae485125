"""Which server releases have the mechanisms innosim simulates for their version.

A release runs as one of models.versions.VERSIONS. Some changes to what a version simulates came in
patch releases, so an earlier release of the same series behaves differently. Each change below
names itself, the first patch release of each series that has it, the series that never got it,
and what a release without it does instead; `release_differences` turns that into the note a run
prints (sim.server_vars.scenario_version).

MySQL (source: the MySQL 8.0 manual, "Doublewrite Buffer": before 8.0.20 the doublewrite buffer
is in the system tablespace, from 8.0.20 in doublewrite files; shared/research/innodb-flushing.md
5.1-5.2): mysql-8.0 simulates 8.0.20-8.0.29 (models.doublewrite, variant "80"); 8.0.11-8.0.19
write the 5.6/5.7 doublewrite (variant "56").

MariaDB: every 10.5+ release runs with the flushing and redo log writes read in 10.11.18
(models.page_cleaner_mariadb, models.user_threads, models.run_queue). Three changes to that flushing
reached the maintained series in patch releases, so a release before them behaves differently where
free blocks run short; the log has been opened O_DIRECT only since 10.8.3 (MDEV-28111), which matters
where more threads run than there are cores (the group commit's leader waits for a core after each
blocking call). A bare series (10.6) is told of the changes none of its releases has.

Sources (read 2026-11-30):
* MDEV-33053 "InnoDB LRU flushing does not run before running out of buffer pool", commit
  d34479dc66 (buf_pool_t::ran_out renamed need_LRU_eviction; the page cleaner evicts before the free
  list is empty): in the 10.6.17 changelog (7 Feb 2024, committed to 10.6, not merged from 10.5)
  and the 11.1.4 release notes (same day). 10.11.7, 11.0.5 and 11.2.3 were released that day and
  take 10.6 by merge: inferred, not read.
* MDEV-33613 "InnoDB may still hang when temporarily running out of buffer pool", commit
  fa8a46eb68 (buf_LRU_get_free_block no longer calls buf_flush_LRU(innodb_lru_flush_size); it
  wakes the page cleaner and waits on buf_pool.done_free; pull request MariaDB/server#3110):
  MariaDB's innodb_lru_flush_size documentation says 10.6.18, 10.11.8, 11.0.6, 11.1.5, 11.2.4 and
  11.4.2 made the setting superfluous; the 10.6.18 changelog and the 11.0.6 release notes list it.
  The 10.6-10.11 era buf0lru.cc read (index id 217354175) has the user thread's buf_flush_LRU.
* MDEV-36226 "Stall and crash when page cleaner fails to generate free pages during Async flush",
  commit 77bebe9eb0 (the LRU pass after a flush-ahead batch of innodb_io_capacity_max pages gets a
  write budget of its own): in the 10.6.22 changelog (8 May 2025) and the 11.4.6 release notes;
  10.11.12 was released with them: inferred, not read.
* MDEV-28111 "Redo log writes are being buffered on Linux for no good reason", commit c4c8830709
  (2022-03-17, on the 10.8 branch after 10.8.2; ib_logfile0 opened O_DIRECT by default): in the
  MariaDB 10.8.3 changelog (20 May 2022). The commit of MDEV-28766 (4c0cd953ab, which added
  innodb_log_file_buffering) says c4c8830 disabled the file system cache on the log by default on
  Linux, so 10.5 to 10.7 and 10.8.0-10.8.2 write it through the page cache; 10.9 was branched later.
Series 10.7 to 10.10 had ended (November 2023 the last) before the first of these changes; 10.5
never got them (each was committed to 10.6). A later series is taken to have a change from its
first release when it was branched after the change (preview releases aside: 11.4 for MDEV-33053,
11.5 for MDEV-33613, 12.1 for MDEV-36226); a series the table does not place (11.3 for MDEV-33053,
11.5 to 12.0 for MDEV-36226) is reported as not known.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.versions import VERSIONS


@dataclass(frozen=True)
class FlushingChange:
    """A change, made in patch releases of one or several series, to what a version simulates."""
    version: str                          # the simulated version (models.versions) it concerns
    name: str                             # the change: its MDEV, or what it brought
    first: dict[tuple[int, int], int]     # series (major, minor) -> first patch release with it
    never: frozenset[tuple[int, int]]     # series that ended without it
    all_from: tuple[int, int]             # every release of this series and later has it
    without: str                          # what a release before it does
    matters: str                          # where results differ for a release without it


_FREE_BLOCKS = "where free blocks run short"
_ENDED_BEFORE_2024 = frozenset({(10, 5), (10, 7), (10, 8), (10, 9), (10, 10)})

CHANGES = (
    FlushingChange(
        "mysql-8.0", "the doublewrite files", {(8, 0): 20}, frozenset(), (8, 1),
        "the doublewrite buffer is 5.7's: 128 pages in the system tablespace, one 120-page batch "
        "in flight", "in the page cleaner's doublewrite batches"),
    FlushingChange(
        "mariadb-10.11", "MDEV-33053", {(10, 6): 17, (10, 11): 7, (11, 0): 5, (11, 1): 4, (11, 2): 3},
        _ENDED_BEFORE_2024, (11, 4),
        "the page cleaner turns to LRU eviction only once the free list is empty (buf_pool_t::ran_out), "
        "not as soon as free blocks run short (need_LRU_eviction)", _FREE_BLOCKS),
    FlushingChange(
        "mariadb-10.11", "MDEV-33613", {(10, 6): 18, (10, 11): 8, (11, 0): 6, (11, 1): 5, (11, 2): 4, (11, 4): 2},
        _ENDED_BEFORE_2024 | {(11, 3)}, (11, 5),
        "a thread that finds no free block writes pages from the LRU tail itself (from 10.5.7 "
        "buf_flush_LRU(innodb_lru_flush_size) in buf_LRU_get_free_block), where the simulated one wakes "
        "the page cleaner and waits for it", _FREE_BLOCKS),
    FlushingChange(
        "mariadb-10.11", "MDEV-36226", {(10, 6): 22, (10, 11): 12, (11, 4): 6},
        _ENDED_BEFORE_2024 | {(11, 0), (11, 1), (11, 2), (11, 3)}, (12, 1),
        "the page cleaner's LRU pass after a flush-ahead batch can get no write budget, so dirty "
        "pages at the LRU tail hold up freeing blocks", _FREE_BLOCKS),
    FlushingChange(
        "mariadb-10.11", "MDEV-28111", {(10, 8): 3}, frozenset({(10, 5), (10, 6), (10, 7)}), (10, 9),
        "ib_logfile0 is written through the page cache, so a group commit's leader blocks once a log "
        "write (in fdatasync), where the simulated one, with the log opened O_DIRECT unless "
        "innodb_flush_log_at_trx_commit = 2, blocks in the write too",
        "where more threads run than there are cores"),
)


@dataclass(frozen=True)
class SettingIntroduced:
    """A MariaDB setting, or one value of it, that came in patch releases: a release before it
    stops at startup (unknown variable; a value not in the enumeration)."""
    setting: str                          # the [server] key
    value: object                         # the value that came, or None for the setting itself
    name: str                             # the change that brought it
    first: dict[tuple[int, int], int]     # series -> first patch release with it
    never: frozenset[tuple[int, int]]     # series without it
    all_from: tuple[int, int]             # every release of this series and later has it


_SERIES_10 = frozenset({(10, 5), (10, 6), (10, 7), (10, 8), (10, 9), (10, 10), (10, 11)})

# Sources (read 2026-12-01): MariaDB's innodb_log_file_buffering, innodb_data_file_buffering,
# innodb_data_file_write_through, innodb_log_file_write_through and innodb_doublewrite
# documentation (mariadb-docs, innodb-system-variables.md): innodb_log_file_buffering was
# introduced in 10.8.4 and 10.9.2 (MDEV-28766; 10.10.1 came out with them); the other three in
# 11.0.0 (MDEV-30136); `fast` is available from 11.0.6 (MDEV-33545, pull request
# MariaDB/server#3091, merged into 11.0 on 4 April 2024). 11.1.5, 11.2.4, 11.4.2 and 11.5.1 were
# released with 11.0.6 (the same documentation lists them together for innodb_log_spin_wait_delay)
# and take 11.0 by merge: inferred, not read; 11.3 is not placed.
SETTINGS_INTRODUCED = (
    SettingIntroduced("innodb_log_file_buffering", None, "MDEV-28766", {(10, 8): 4, (10, 9): 2},
                      frozenset({(10, 5), (10, 6), (10, 7)}), (10, 10)),
    *(SettingIntroduced(key, None, "MDEV-30136", {}, _SERIES_10, (11, 0))
      for key in ("innodb_data_file_buffering", "innodb_data_file_write_through", "innodb_log_file_write_through")),
    SettingIntroduced("innodb_doublewrite", "fast", "MDEV-33545",
                      {(11, 0): 6, (11, 1): 5, (11, 2): 4, (11, 4): 2, (11, 5): 1}, _SERIES_10, (11, 6)),
)


# MySQL 8.0 settings that came in patch releases (first patch of 8.0): a release before refuses them
# at startup as unknown variables. innodb_log_writer_threads: MySQL 8.0 manual ("introduced 8.0.22");
# innodb_use_fdatasync: WL#14452, 8.0.26.
MYSQL_80_SETTINGS_FROM = {"innodb_log_writer_threads": 22, "innodb_use_fdatasync": 26}


def mysql_80_lacks(setting: str, release: tuple[int, int, int | None] | None) -> int | None:
    """The first 8.0 patch release with `setting` when `release` (major, minor, patch) is an
    earlier MySQL 8.0 release, else None."""
    first = MYSQL_80_SETTINGS_FROM.get(setting)
    if first is None or release is None or release[:2] != (8, 0) or release[2] is None:
        return None
    return first if release[2] < first else None


def setting_introduced(setting: str, value: object = None) -> SettingIntroduced | None:
    """The entry of SETTINGS_INTRODUCED for a setting (value None) or one value of it."""
    return next((e for e in SETTINGS_INTRODUCED if e.setting == setting and e.value == value), None)


def release_has(entry: SettingIntroduced, major: int, minor: int, patch: int | None) -> bool | None:
    """Whether release major.minor.patch has the setting; for a bare series (patch None), whether
    some release of it does. None when the table does not say."""
    if patch is None:
        series = (major, minor)
        if series in entry.first or series >= entry.all_from:
            return True
        return False if series in entry.never else None
    return has_change(entry, major, minor, patch)


def has_change(change: FlushingChange | SettingIntroduced, major: int, minor: int, patch: int) -> bool | None:
    """Whether release major.minor.patch, one that runs as change.version, has the change; None
    when the table does not say."""
    series = (major, minor)
    if series in change.first:
        return patch >= change.first[series]
    if series in change.never:
        return False
    if series >= change.all_from:
        return True
    return None


# What each version simulates, as the notes end.
_SIMULATED = {"mysql-8.0": "innosim simulates mysql-8.0 as 8.0.20-8.0.29",
              "mariadb-10.11": "innosim simulates the flushing and redo log writes read in MariaDB 10.11.18"}


def release_differences(version: str, major: int, minor: int, patch: int | None) -> str | None:
    """What release major.minor.patch, which runs as `version` (models.versions), does differently
    from what innosim simulates for it, as one sentence, or None when it has every change. With
    patch None (a bare series: 10.6, mariadb-10.5) only the changes no release of the series has."""
    lacking, unknown, matters = [], [], []
    for change in CHANGES:
        if change.version != version:
            continue
        has = has_change(change, major, minor, patch) if patch is not None else (major, minor) not in change.never
        if has is False:
            first = change.first.get((major, minor))
            since = f" (first in {major}.{minor}.{first})" if first is not None else ""
            lacking.append(f"{change.name}{since}, before which {change.without}")
        elif has is None:
            unknown.append(change.name)
        if has is not True and change.matters not in matters:
            matters.append(change.matters)
    product = "MariaDB" if VERSIONS[version].is_mariadb else "MySQL"
    name = f"{product} {major}.{minor}.{patch}" if patch is not None else f"every {product} {major}.{minor} release"
    parts = []
    if lacking:
        parts.append(f"{name} lacks " + "; ".join(lacking))
    if unknown:
        parts.append(f"whether {name} has " + " and ".join(unknown) + " is not known here")
    if not parts:
        return None
    whose = "this release's" if patch is not None else "theirs"
    return "; ".join(parts) + f" ({_SIMULATED[version]}; results differ from {whose} " + " and ".join(matters) + ")"
