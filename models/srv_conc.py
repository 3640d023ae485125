"""innodb_thread_concurrency: how many user threads may be inside InnoDB at once, and how the rest wait.

Mirrors srv_conc_enter_innodb_with_atomics and srv_conc_exit_innodb_with_atomics (srv/srv0conc.cc,
MySQL 5.6 to 8.4; the same loop in every version that has the variable; MariaDB removed it in 10.6):

* A thread enters when srv_conc.n_active < innodb_thread_concurrency. Otherwise it counts itself in
  n_waiting (once), sleeps srv_thread_sleep_delay microseconds and tries again. No queue: whoever
  looks first after a seat frees takes it.
* srv_thread_sleep_delay is the global innodb_thread_sleep_delay, tuned by the waiters when
  innodb_adaptive_max_sleep_delay > 0: +1 after each sleep beyond the first of one entry; -1 when a
  thread gets in after exactly one sleep (while above 20); halved when a thread gets in and nobody
  waits; a sleep longer than innodb_adaptive_max_sleep_delay is cut to it (and the variable set to it).
* A thread leaves at the end of its SQL statement (ha_innobase::external_lock, F_UNLCK ->
  innobase_srv_conc_force_exit_innodb) and at prepare/commit; the commit's log write happens outside.

innosim lets a thread in once per transaction, before its log_free_check and page reads, and lets
it out when the transaction asks to commit: one statement per transaction. In the server a
multi-statement transaction (DBT2's new-order has about 30) leaves and enters again between
statements; as the sleepers wake on their own timers, it mostly takes its seat straight back
unless a thread arrives within the client round trip between its statements (innosim has none).
innodb_concurrency_tickets (entries per statement before a thread must queue again) never runs out
in OLTP statements and is not modelled.

os_thread_sleep(us) is nanosleep, which Linux may end up to the thread's timer slack late (50 us by
default, prctl(2) PR_SET_TIMERSLACK; measured here 69-80 us late through Python's time.sleep):
a sleep takes us + OS_SLEEP_SLACK_S, so a delay tuned down to 0 still takes time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

OS_SLEEP_SLACK_S = 50e-6          # Linux default timer slack: nanosleep ends up to 50 us late


@dataclass
class SrvConc:
    """srv_conc (n_active, n_waiting) and the global srv_thread_sleep_delay."""

    concurrency: int                     # innodb_thread_concurrency (> 0)
    sleep_delay_us: int = 10000          # innodb_thread_sleep_delay
    adaptive_max_sleep_delay_us: int = 150000   # innodb_adaptive_max_sleep_delay (0: not adaptive)
    n_active: int = 0
    n_waiting: int = 0
    # Per thread: sleeps in the current attempt to enter (0: not waiting).
    n_sleeps: dict[int, int] = field(default_factory=dict)

    def try_enter(self, th: int) -> bool:
        """One pass of the loop for thread th: True when it got in (n_active counts it)."""
        if self.n_active < self.concurrency:
            self.n_active += 1
            n_sleeps = self.n_sleeps.pop(th, 0)
            if n_sleeps:
                self.n_waiting -= 1           # it had counted itself in n_waiting (notified_mysql)
            if self.adaptive_max_sleep_delay_us > 0:
                if self.sleep_delay_us > 20 and n_sleeps == 1:
                    self.sleep_delay_us -= 1
                if self.n_waiting == 0:
                    self.sleep_delay_us >>= 1
            return True
        if th not in self.n_sleeps:
            self.n_waiting += 1
            self.n_sleeps[th] = 0
        return False

    def sleep_s(self) -> float:
        """How long a thread that did not get in sleeps now (the overflow guard included)."""
        us = self.sleep_delay_us
        if self.adaptive_max_sleep_delay_us > 0 and us > self.adaptive_max_sleep_delay_us:
            us = self.adaptive_max_sleep_delay_us
            self.sleep_delay_us = us
        return us * 1e-6 + OS_SLEEP_SLACK_S

    def woke(self, th: int) -> None:
        """Thread th is back from a sleep (++n_sleeps; the delay grows from the second sleep on)."""
        n = self.n_sleeps[th] + 1
        self.n_sleeps[th] = n
        if self.adaptive_max_sleep_delay_us > 0 and n > 1:
            self.sleep_delay_us += 1

    def exit(self) -> None:
        """srv_conc_exit_innodb_with_atomics: a thread inside leaves."""
        self.n_active -= 1
