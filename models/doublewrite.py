"""The MySQL 5.6 doublewrite buffer: one server-wide batch of at most 120 pages in flight.

Mirrors buf/buf0dblwr.cc of 5.6 (shared/research/innodb-flushing.md 5.1):
* buf_dblwr_add_to_batch: a flushing thread copies the page into the next batch slot; while a
  batch is being written it waits; when the 120 batch slots are full it writes the batch itself.
* buf_dblwr_flush_buffered_writes: slots 0-63 to doublewrite block 1 and the rest to block 2
  (synchronous writes to ibdata1), fsync ibdata1, then post an asynchronous write of every page
  to its tablespace.
* buf_dblwr_update: when the batch's last page write completes, fsync the data files and let the
  next batch start.
Without doublewrite (innodb_doublewrite=OFF) pages are posted directly, and the end of a flush
batch waits for all pending writes and fsyncs the data files (buf_dblwr_sync_datafiles).
Counters: Innodb_dblwr_pages_written, Innodb_dblwr_writes.
"""

from __future__ import annotations

TRX_SYS_DOUBLEWRITE_BLOCK_SIZE = 64
DOUBLEWRITE_BATCH_PAGES = 120          # srv_doublewrite_batch_size (5.6)


class Doublewrite56:
    """The batch buffer. `on_complete(page, flush_type, kind)` is called as each data write completes."""

    def __init__(self, env, fil, space_of, counters, on_complete, enabled: bool = True) -> None:
        self.env = env
        self.fil = fil
        self.space_of = space_of
        self.counters = counters
        self.on_complete = on_complete
        self.enabled = enabled
        self.buf: list[tuple[int, int, str]] = []
        self.batch_running = False
        self.batch_done = env.event().succeed()
        self.pending = 0                 # data writes of the running batch (or all, without dblwr)
        self.issued = 0                  # data-page writes posted
        self.completed = 0
        self._all_written = env.event().succeed()

    def add(self, page: int, flush_type: int, kind: str):
        """buf_dblwr_add_to_batch (SimPy generator)."""
        if not self.enabled:
            self._post(page, flush_type, kind, batch=False)
            return
        while True:
            if self.batch_running:
                yield self.batch_done
                continue
            if len(self.buf) >= DOUBLEWRITE_BATCH_PAGES:
                yield from self.flush_buffered()
                continue
            self.buf.append((page, flush_type, kind))
            return

    def flush_buffered(self):
        """buf_dblwr_flush_buffered_writes (SimPy generator): write out the partial batch."""
        env = self.env
        if not self.enabled:
            # buf_dblwr_sync_datafiles: wait for every pending write, then fsync the data files.
            while self.pending:
                yield self._all_written
            yield from self.fil.fsync_data_files()
            return
        while self.batch_running:
            yield self.batch_done
        if not self.buf:
            return
        self.batch_running = True
        self.batch_done = env.event()
        pages, self.buf = self.buf, []
        ps = self.fil.page_size
        first = min(TRX_SYS_DOUBLEWRITE_BLOCK_SIZE, len(pages))
        yield from self.fil.write_ibdata(first * ps)
        if len(pages) > first:
            yield from self.fil.write_ibdata((len(pages) - first) * ps)
        yield from self.fil.fsync_ibdata()
        self.counters.add("Innodb_dblwr_pages_written", len(pages))
        self.counters.add("Innodb_dblwr_writes")
        self.pending = len(pages)
        self.issued += len(pages)
        for page, flush_type, kind in pages:
            env.process(self._write(page, flush_type, kind, True))

    def _post(self, page: int, flush_type: int, kind: str, batch: bool) -> None:
        if self.pending == 0:
            self._all_written = self.env.event()
        self.pending += 1
        self.issued += 1
        self.env.process(self._write(page, flush_type, kind, batch))

    def _write(self, page: int, flush_type: int, kind: str, batch: bool):
        yield from self.fil.write_page(int(self.space_of[page]))
        self.counters.add("Innodb_data_writes")
        self.counters.add("Innodb_pages_written")
        self.completed += 1
        self.on_complete(page, flush_type, kind)
        self.pending -= 1
        if batch:
            if self.pending == 0:
                self.env.process(self._batch_end())
        elif self.pending == 0:
            self._all_written.succeed()

    def _batch_end(self):
        """buf_dblwr_update: fsync the data files, then the next batch may start."""
        yield from self.fil.fsync_data_files()
        self.batch_running = False
        self.batch_done.succeed()
