"""How InnoDB opens and syncs its data files and redo log: innodb_flush_method, and MariaDB 11.0+'s
four Booleans and innodb_doublewrite = fast.

* MySQL 5.6-8.4 and MariaDB 10.5-10.11: innodb_flush_method alone (os_file_create_func,
  fil_flush; models/fil.py): O_DIRECT and O_DIRECT_NO_FSYNC open the data files O_DIRECT;
  O_DIRECT_NO_FSYNC, nosync and littlesync skip their fsyncs; O_DSYNC opens the log O_SYNC (MySQL)
  or O_DSYNC (MariaDB) and drops its fsync. MariaDB 10.8.3+ opens ib_logfile0 O_DIRECT unless
  innodb_log_file_buffering = ON (10.8.4, 10.9.2; MDEV-28766), which startup with
  innodb_flush_log_at_trx_commit = 2 turns ON.
* MariaDB 11.0+ (MDEV-30136): innodb_data_file_buffering (the page cache for data files),
  innodb_data_file_write_through (data files opened O_DSYNC: fil_space_t::flush_low skips the
  fsync when fil_system.is_write_through()), innodb_log_file_write_through (the log opened O_DSYNC,
  no fdatasync). Read in 11.x os0file.cc os_file_create_func (read 2026-12-01): O_DIRECT on a data
  file unless fil_system.is_buffered(), on ib_logfile0 unless log_sys.log_buffered (or its block
  size is unknown); O_DSYNC where log_sys.log_write_through / fil_system.is_write_through(). A deprecated innodb_flush_method is translated into them at startup
  (`translate_flush_method_110`, as MariaDB's innodb_flush_method documentation lists it).
* innodb_doublewrite = fast (MDEV-33545, MariaDB 11.0.6, pull request MariaDB/server#3091): as ON,
  but the data files are never fsynced; the doublewrite area still is, after every batch
  (buf_dblwr_t::flush_buffered_writes_completed). innodb_flush_method = O_DIRECT_NO_FSYNC turns
  ON into fast from then on.

A write-through data write is modelled as the write followed by what fdatasync() of an overwrite
costs (models.filesystem.Filesystem._sync_file with datasync: a device cache flush when barriers
are on and the device caches writes); Linux sends such a write with REQ_FUA where the device takes
it, which persists that write alone: assumed to cost as much as the flush.
"""

from __future__ import annotations

from dataclasses import dataclass

DIRECT_METHODS = ("O_DIRECT", "O_DIRECT_NO_FSYNC")
NO_DATA_FSYNC = ("O_DIRECT_NO_FSYNC", "nosync", "littlesync")
FAST = "fast"                          # innodb_doublewrite = fast (MariaDB 11.0.6+)


@dataclass(frozen=True)
class FileAccess:
    """What the file layer (models.fil.FilIO) does with each kind of file."""
    data_direct: bool            # data files opened O_DIRECT
    data_fsync: bool             # fil_flush_file_spaces fsyncs the data files after a batch / at checkpoints
    dblwr_fsync: bool            # the doublewrite area (ibdata1) is fsynced after its write
    data_write_through: bool     # data files opened O_DSYNC: each write durable, no fsync
    doublewrite_fast: bool       # innodb_doublewrite = fast: the doublewrite area alone is fsynced
    log_direct: bool             # ib_logfile0 opened O_DIRECT (MariaDB 10.8.3+)
    log_write_through: bool      # the log opened O_SYNC / O_DSYNC: no fsync after a log write


def file_access(flush_method: str, *, data_buffered: bool = False, data_write_through: bool = False,
                log_write_through: bool = False, doublewrite_fast: bool = False,
                log_direct: bool = False) -> FileAccess:
    """The file access of a server whose settings are resolved (sim.config): innodb_flush_method
    (MySQL, MariaDB 10.x; on 11.0+ it is O_DIRECT after translation, or O_DIRECT_NO_FSYNC before
    MDEV-33545) and MariaDB 11.0+'s settings. A buffered data file is fsynced even under nosync or
    littlesync: page-cache writeback is modelled only at fsync (models.filesystem)."""
    direct = flush_method in DIRECT_METHODS and not data_buffered
    data_fsync = flush_method not in NO_DATA_FSYNC
    fsync_files = (data_fsync or not direct) and not data_write_through
    return FileAccess(
        data_direct=direct,
        data_fsync=fsync_files and not doublewrite_fast,
        dblwr_fsync=fsync_files or (doublewrite_fast and not data_write_through),
        data_write_through=data_write_through,
        doublewrite_fast=doublewrite_fast,
        log_direct=log_direct,
        log_write_through=log_write_through or flush_method == "O_DSYNC")


def translate_flush_method_110(method: str, doublewrite: bool | str, has_fast: bool | None) -> dict:
    """MariaDB 11.0+ at startup: a given innodb_flush_method as the settings it stands for
    (innodb_flush_method documentation, MariaDB 11.0+): O_DSYNC -> log and data write-through, data
    and log buffering OFF; fsync, littlesync, nosync -> data buffering ON, write-through OFF;
    O_DIRECT -> nothing; O_DIRECT_NO_FSYNC -> innodb_doublewrite = fast where doublewrite is ON and
    the release has MDEV-33545 (`has_fast`), and stays itself before it (as in 10.11). With
    doublewrite OFF on a release with fast, O_DIRECT_NO_FSYNC is taken as O_DIRECT (assumed: the
    change made fast its only effect). Returns {key: value}, innodb_flush_method included."""
    if method == "O_DSYNC":
        return {"innodb_log_file_write_through": True, "innodb_data_file_write_through": True,
                "innodb_data_file_buffering": False, "innodb_log_file_buffering": False,
                "innodb_flush_method": "O_DIRECT"}
    if method in ("fsync", "littlesync", "nosync"):
        return {"innodb_log_file_write_through": False, "innodb_data_file_write_through": False,
                "innodb_data_file_buffering": True, "innodb_flush_method": "O_DIRECT"}
    if method == "O_DIRECT_NO_FSYNC" and has_fast is not False:
        out = {"innodb_flush_method": "O_DIRECT"}
        if doublewrite is True:
            out["innodb_doublewrite"] = FAST
        return out
    return {"innodb_flush_method": method}
