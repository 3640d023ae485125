"""innodb_dedicated_server: the settings MySQL 8.0 and 8.4 size from the machine at startup.

The server reads its memory (get_sys_mem, in GB as a double) and, for 8.4, its logical processors,
and sets what the user left out:

* innodb_buffer_pool_size (all 8.x; innodb_buffer_pool_size_init, ha_innodb.cc, read in the 8.0
  source): unchanged below 1 GB of memory, memory x 0.5 up to 4 GB, memory x 0.75 above; then
  buf_pool_size_align rounds it up, as any pool size (models.versions).
* innodb_log_file_size and innodb_log_files_in_group (8.0.14-8.0.29; innodb_log_file_size_init,
  ha_innodb.cc): from the pool size in whole GB (integer division; when the pool size is given,
  from the size it would have chosen, truncated): below 1 nothing; below 8 512M x round(GB)
  files; up to 128 1024M x round(GB x 0.75) files; above 2048M x 64 files. The manual adds that
  the file count is at least 2.
* innodb_redo_log_capacity (8.0.30+; MySQL 8.0 manual, "Enabling Automatic InnoDB Configuration
  for a Dedicated MySQL Server", Table 17.9): from memory, in the rows of that table.
* innodb_redo_log_capacity (8.4; MySQL 8.4 manual, same section): logical processors / 2 GB, at
  most 16 GB.
* innodb_flush_method (8.0 only; innodb_init_params): O_DIRECT_NO_FSYNC. 8.4 leaves it alone.

A setting given explicitly keeps its value; the server logs "Option innodb_dedicated_server is
ignored for X because X=... is specified explicitly."
"""

from __future__ import annotations

import math

MiB = 1 << 20
GiB = 1 << 30
REDO_CAPACITY_MAX_84_BYTES = 16 * GiB   # 8.4: "a maximum dynamic default value of 16 GB"


def c_round(x: float) -> int:
    """C's round(): halves away from zero (Python's round() goes to even)."""
    return int(math.floor(x + 0.5))


def pool_share(memory_bytes: int) -> float:
    """The share of memory innodb_buffer_pool_size_init gives the pool: 0.5 up to 4 GB, 0.75 above."""
    return 0.5 if memory_bytes / GiB <= 4.0 else 0.75


def buffer_pool_bytes(memory_bytes: int) -> int | None:
    """innodb_buffer_pool_size_init: the pool for this much memory; None keeps the default."""
    mem_gb = memory_bytes / GiB
    if mem_gb < 1.0:
        return None
    return int(mem_gb * pool_share(memory_bytes) * GiB)


def log_files_80(memory_bytes: int, pool_bytes: int, pool_given: bool) -> tuple[int, int] | None:
    """innodb_log_file_size_init (8.0.14-8.0.29): (file size, files), or None when the defaults stay."""
    pool_gb: float = pool_bytes // GiB
    mem_gb = memory_bytes / GiB
    if pool_given and mem_gb >= 1.0:
        pool_gb = int(mem_gb * pool_share(memory_bytes))
    if pool_gb < 1.0:
        return None
    if pool_gb < 8.0:
        return 512 * MiB, max(2, c_round(pool_gb))
    if pool_gb <= 128.0:
        return 1024 * MiB, max(2, c_round(pool_gb * 0.75))
    return 2048 * MiB, 64


def redo_capacity_8030(memory_bytes: int, pool_given: bool) -> int | None:
    """innodb_redo_log_capacity for 8.0.30+ (the manual's Table 17.9); None keeps the 100M default."""
    mem_gb = memory_bytes / GiB
    if mem_gb < 2.0:
        return None
    if mem_gb <= 4.0:
        return c_round(0.5 * mem_gb) * GiB // 2 if pool_given else GiB
    if mem_gb <= 10.66:
        return c_round(0.75 * mem_gb) * GiB // 2
    if mem_gb <= 170.66:
        return c_round(0.5625 * mem_gb) * GiB
    return 128 * GiB


def redo_capacity_84(logical_cpus: int) -> int:
    """innodb_redo_log_capacity for 8.4: logical processors / 2 GB, at most 16 GB."""
    return min(REDO_CAPACITY_MAX_84_BYTES, logical_cpus * GiB // 2)
