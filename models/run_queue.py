"""A woken thread's wait for a core when more threads are runnable than there are cores.

A thread that blocks in a system call (the redo log's write on an O_DIRECT file, its fsync) is
runnable again when the call returns, and runs once a core is free for it. With R threads runnable
on C cores, each running q seconds before it blocks again (Linux shares the cores among them), it
waits for about (R - C) / C such runs; with R <= C it runs at once.

Measured (docs/ENGINE.md "Redo writes per transaction"; validation/live/threads-2026-11-29/
schedstat-by-hand and t8-schedstat: /proc/PID/task/TID/schedstat summed over mariadbd's threads,
MariaDB 10.11.19 under sysbench oltp_read_write, this project's 2-vCPU VM, 29 Nov 2026): the server
threads ran 44, 40, 41 and 45 us each time they had a core and waited 30, 58, 128 and 307 us for
one each time, at 2, 4, 8 and 16 client threads; the formula gives 0, 45, 135 and 315 us with
q = 45 us and R = the client threads. CPU_RUN_S is that q; it is the default of workload.cpu_per_run.
"""

from __future__ import annotations

CPU_RUN_S = 45e-6


def run_queue_wait_s(runnable: int, cores: int, run_s: float) -> float:
    """Mean wait for a core of a thread that becomes runnable while `runnable` others are."""
    if cores < 1:
        raise ValueError(f"cores must be >= 1, not {cores}")
    return max(0, runnable - cores) / cores * run_s


def log_write_blocking_calls(log_write_through: bool, log_o_direct: bool) -> int:
    """System calls of one redo write + flush (log_write_up_to) that block until the device is done.

    fsync()/fdatasync() always does; the write() does too when the log file is opened O_DIRECT
    (MariaDB 10.8+ with innodb_log_file_buffering = OFF, its default unless
    innodb_flush_log_at_trx_commit = 2: MDEV-28111, MDEV-28766). With the log opened write-through
    (innodb_flush_method = O_DSYNC; MariaDB 11.0+ innodb_log_file_write_through) the write is the
    only call, and it blocks."""
    if log_write_through:
        return 1
    return 2 if log_o_direct else 1
