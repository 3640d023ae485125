"""Page checksums: which algorithm a version writes and verifies, and the CPU time per page.

Where the server spends it (the thread that does the work waits for it):

* write: buf_flush_write_block_low -> buf_flush_init_for_writing (MySQL 5.6 buf/buf0flu.cc), after
  log_write_up_to and before the page joins the doublewrite batch (buf_dblwr_add_to_batch) or is
  written alone (buf_dblwr_write_single_page). So the page cleaner pays it in its passes, and a
  user thread pays it for every page it flushes itself: sync preflush at log_free_check
  (log_preflush_pool_modified_pages) and single-page flushes when no block is free. The seed's
  point (shared/seeds/002, "Checksums again, some I/O too", 2009): when a query forces a
  checkpoint, "it all happens in 'foreground' thread, checksum computation included".
* read: buf_page_io_complete -> buf_page_is_corrupted verifies the page in the thread that
  completes the read; a user thread's synchronous read (buf_read_page) completes in that thread.
  A page written with the configured algorithm costs one computation of it.

Cost of one 16 KiB page, measured here by benchmarks/checksum_cost.py (median of 5 x 20,000 pages,
AMD EPYC, gcc -O2 and -O3 alike; 2026-11-24):

* innodb (buf_calc_page_new_checksum + buf_calc_page_old_checksum): 30.8 us. The byte-wise fold
  is one dependent chain, so compiler flags do not shorten it; Domas Mituzas measured 31.6 us at
  -O2 in 2008 (dom.as, "On checksums": 316 ms per 10,000 pages), so the same figure serves the
  2012 servers of the seeds. (His 4.2 us at -O3 is what a loop over one unchanged page reads: the
  benchmark's "same page" column shows the compiler removing that work.)
* crc32 (buf_calc_page_crc32, SSE4.2, 8 bytes a step as 5.6's ut_crc32_sse42): 1.9 us.
  MariaDB's full_crc32 computes the same CRC-32C once over the page: the same figure (MariaDB's
  carry-less-multiply CRC can be faster; not modelled).
* none: a constant is written and nothing is verified.

Cost scales with the page size. A user thread's verification of the pages it read runs on one of
`cpu_cores` with the transaction's CPU phase (models.user_threads). Not modelled: the core taken by
a checksum computed for a write (it delays the flushing thread, and is not taken from
`cpu_cores`), and 5.7+'s extra CRC-32 attempt when verifying a page of the `innodb` algorithm
(under 7% more on reads).
"""

from __future__ import annotations

PAGE_16K = 16384

# Seconds per 16 KiB page, by the algorithm a page is written with (see the module docstring).
CHECKSUM_S_PER_16K = {"innodb": 30.8e-6, "crc32": 1.9e-6, "full_crc32": 1.9e-6, "none": 0.0}

# innodb_checksum_algorithm values each server accepts (ha_innodb.cc innodb_checksum_algorithm_names
# of MySQL 5.6-8.4; MariaDB 10.11.19 measured here: innodb, none and strict_innodb are refused with
# "Error while setting value ... Parsing options for plugin 'InnoDB' failed").
MYSQL_ALGORITHMS = ("crc32", "strict_crc32", "innodb", "strict_innodb", "none", "strict_none")
MARIADB_ALGORITHMS = ("full_crc32", "strict_full_crc32", "crc32", "strict_crc32")
ALL_ALGORITHMS = MYSQL_ALGORITHMS + ("full_crc32", "strict_full_crc32")


def written_as(algorithm: str, checksums: bool = True) -> str:
    """The checksum a page is written with: strict_X writes what X writes; innodb_checksums = OFF
    (5.6/5.7) sets the algorithm to none at startup (innobase_init)."""
    if not checksums:
        return "none"
    return algorithm.removeprefix("strict_")


def page_checksum_s(algorithm: str, page_size_bytes: int, checksums: bool = True) -> float:
    """CPU seconds to checksum one page on write, or to verify it on read."""
    kind = written_as(algorithm, checksums)
    try:
        per_16k = CHECKSUM_S_PER_16K[kind]
    except KeyError:
        raise ValueError(f"unknown checksum algorithm {algorithm!r}") from None
    return per_16k * page_size_bytes / PAGE_16K
