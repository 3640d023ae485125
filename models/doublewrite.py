"""The doublewrite buffer of each version (shared/research/innodb-flushing.md section 5).

Doublewrite56 (5.6 and 5.7): one server-wide batch of at most 120 pages in flight.
Doublewrite80 (8.0.20+): per buffer-pool instance and flush type a buffer in its own file.
DoublewriteMariaDB (10.5+): two 128-page slots written asynchronously.

Mirrors buf/buf0dblwr.cc of 5.6 (shared/research/innodb-flushing.md 5.1):
* buf_dblwr_add_to_batch: a flushing thread copies the page into the next batch slot; while a
  batch is being written it waits; when the 120 batch slots are full it writes the batch itself.
* buf_dblwr_flush_buffered_writes: slots 0-63 to doublewrite block 1 and the rest to block 2
  (synchronous writes to ibdata1), fsync ibdata1, then post an asynchronous write of every page
  to its tablespace: the thread submits them one after another (buf_dblwr_write_block_to_datafile
  -> fil_io, models.fil.FilIO.submit_page) and returns without waiting for them.
* buf_dblwr_update: when the batch's last page write completes, fsync the data files and let the
  next batch start.
Without doublewrite (innodb_doublewrite=OFF) the flushing thread submits each page itself, and the end of a flush
batch waits for all pending writes and fsyncs the data files (buf_dblwr_sync_datafiles).
Counters: Innodb_dblwr_pages_written, Innodb_dblwr_writes.
"""

from __future__ import annotations

from models import detached
from models.fil import contiguous_runs
from models.file_access import FAST

DOUBLEWRITE_BATCH_PAGES = 120          # srv_doublewrite_batch_size (5.6)
DETECT_ONLY = "DETECT_ONLY"            # innodb_doublewrite = DETECT_ONLY (MySQL 8.0.30+)
REDUCED_BATCH_PAGE_SIZE = 8192         # dblwr::REDUCED_BATCH_PAGE_SIZE (8.0.30+ buf0dblwr.h)
WORDS_ENUM = "from MySQL 8.0.30 also DETECT_AND_RECOVER or DETECT_ONLY; from MariaDB 11.0.6 also fast"


def doublewrite_word(upper: str) -> bool | str | None:
    """innodb_doublewrite's enumeration words, upper case: MySQL 8.0.30+'s DETECT_AND_RECOVER is ON
    (True) and DETECT_ONLY is kept; MariaDB 11.0.6+'s fast is kept (models.file_access.FAST); None
    for anything else (the boolean words are the caller's). Which version takes which is checked
    with the version (sim.config)."""
    return {"DETECT_AND_RECOVER": True, DETECT_ONLY: DETECT_ONLY, FAST.upper(): FAST}.get(upper)


def fsp_extent_size_pages(page_size_bytes: int) -> int:
    """FSP_EXTENT_SIZE (fsp0types.h, 5.6+ and MariaDB): 1 MiB of pages up to 16K pages, then
    64 pages (2 MiB at 32K, 4 MiB at 64K). A doublewrite block (TRX_SYS_DOUBLEWRITE_BLOCK_SIZE)
    is one extent of ibdata1."""
    if page_size_bytes <= 16384:
        return (1 << 20) // page_size_bytes
    return 64


class Doublewrite56:
    """The batch buffer. `on_complete(page, flush_type, kind)` is called as each data write completes."""

    one_write_for_blocks = False         # 5.6/5.7: block 1 and block 2 are two fil_io writes

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
        self.block_pages = fsp_extent_size_pages(fil.page_size)

    def add(self, page: int, flush_type: int, kind: str):
        """buf_dblwr_add_to_batch (SimPy generator)."""
        if not self.enabled:
            yield from self._post(page, flush_type, kind, batch=False)
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

    def wait_idle(self):
        """Until every page handed over has been written (SimPy generator)."""
        while self.buf or self.batch_running or self.pending:
            if self.batch_running:
                yield self.batch_done
            elif self.buf:
                yield from self.flush_buffered()
            else:
                yield self._all_written if not self.enabled else self.env.timeout(0.001)

    def flush_buffered(self, inst: int | None = None, flush_type: int | None = None):
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
        yield from self._write_batch(pages)

    def _write_batch(self, pages):
        """The batch to the doublewrite area in ibdata1 (block 1, then block 2 if the batch is
        longer than one extent: one write each; one write for both where `one_write_for_blocks`),
        fsync ibdata1, then an asynchronous write of every page to its file."""
        ps = self.fil.page_size
        first = len(pages) if self.one_write_for_blocks else min(self.block_pages, len(pages))
        yield from self.fil.write_ibdata(first * ps)
        if len(pages) > first:
            yield from self.fil.write_ibdata((len(pages) - first) * ps)
        yield from self.fil.fsync_ibdata()
        self.counters.add("Innodb_dblwr_pages_written", len(pages))
        self.counters.add("Innodb_dblwr_writes")
        self.pending = len(pages)
        self.issued += len(pages)
        yield from self._submit(pages, lambda done, page, ft, kind: self._complete(done, page, ft, kind, True))

    def _submit(self, pages, complete):
        """Post every page's write, adjacent pages as one request where the block layer merges them
        (models.fil.contiguous_runs); `complete(done, page, flush_type, kind)` follows each page."""
        for run in contiguous_runs(pages, self.space_of, self.fil.merge_pages):
            done = yield from self.fil.submit_page(int(self.space_of[run[0][0]]), len(run))
            for page, flush_type, kind in run:
                detached.start_waiting(self.env, complete(done, page, flush_type, kind))

    def _post(self, page: int, flush_type: int, kind: str, batch: bool):
        """Without doublewrite: the flushing thread submits the page write itself (SimPy generator)."""
        if self.pending == 0:
            self._all_written = self.env.event()
        self.pending += 1
        self.issued += 1
        done = yield from self.fil.submit_page(int(self.space_of[page]))
        detached.start_waiting(self.env, self._complete(done, page, flush_type, kind, batch))

    def _complete(self, done, page: int, flush_type: int, kind: str, batch: bool):
        """A submitted data-page write, from its completion (buf_page_io_complete, buf_dblwr_update)."""
        yield done
        self.counters.add("Innodb_data_writes")
        self.counters.add("Innodb_pages_written")
        self.completed += 1
        self.on_complete(page, flush_type, kind)
        self.pending -= 1
        if batch:
            if self.pending == 0:
                detached.start(self.env, self._batch_end())
        elif self.pending == 0:
            self._all_written.succeed()

    def _batch_end(self):
        """buf_dblwr_update: fsync the data files, then the next batch may start."""
        yield from self.fil.fsync_data_files()
        self.batch_running = False
        self.batch_done.succeed()


class Doublewrite80(Doublewrite56):
    """MySQL 8.0.20+ doublewrite (S80 buf/buf0dblwr.cc: Double_write::enqueue, flush_to_disk,
    write_pages, write_complete). One Double_write buffer per buffer-pool instance and flush type,
    of innodb_doublewrite_pages pages; when full (or at the end of a flush batch) the buffer goes
    to the doublewrite file in one write, the file is fsynced unless innodb_flush_method is
    O_DIRECT or O_DIRECT_NO_FSYNC, then the pages are posted; when the last one completes the
    data files are fsynced. Buffers of different instances are in flight at the same time.
    Simplified: one batch in flight per buffer (the server has a pool of batch segments), and the
    doublewrite files share ibdata1's inode.

    `reduced` (innodb_doublewrite = DETECT_ONLY, 8.0.30+: Reduced_double_write::write_dblwr_pages)
    writes for a batch one REDUCED_BATCH_PAGE_SIZE page of 16-byte entries (space id, page number,
    LSN) to the .bdblwr file instead of the pages themselves, then fsyncs and posts the pages as
    above. A single-page flush (Double_write::sync_page_flush) still writes the whole page.
    """

    def __init__(self, env, fil, space_of, counters, on_complete, enabled: bool, inst_of, pages: int,
                 flush_method: str, reduced: bool = False) -> None:
        super().__init__(env, fil, space_of, counters, on_complete, enabled)
        self.reduced = reduced
        self.inst_of = inst_of
        self.capacity = max(1, pages)
        self.fsync_dblwr = flush_method not in ("O_DIRECT", "O_DIRECT_NO_FSYNC")
        self.bufs: dict[tuple[int, int], list] = {}
        self.running: dict[tuple[int, int], object] = {}      # key -> event fired when its batch ends
        self.batch_pending: dict[tuple[int, int], int] = {}

    def add(self, page: int, flush_type: int, kind: str):
        if not self.enabled:
            yield from self._post(page, flush_type, kind, batch=False)
            return
        key = (int(self.inst_of[page]), flush_type)
        buf = self.bufs.setdefault(key, [])
        while len(buf) >= self.capacity:
            yield from self._flush_key(key)
            buf = self.bufs.setdefault(key, [])
        buf.append((page, flush_type, kind))

    def flush_buffered(self, inst: int | None = None, flush_type: int | None = None):
        if not self.enabled:
            yield from super().flush_buffered()
            return
        keys = [k for k in self.bufs if (inst is None or k[0] == inst) and (flush_type is None or k[1] == flush_type)]
        for key in keys:
            yield from self._flush_key(key)

    def _flush_key(self, key):
        env = self.env
        while key in self.running:
            yield self.running[key]
        pages = self.bufs.get(key)
        if not pages:
            return
        self.bufs[key] = []
        done = env.event()
        self.running[key] = done
        yield from self.fil.write_ibdata(REDUCED_BATCH_PAGE_SIZE if self.reduced else len(pages) * self.fil.page_size)
        if self.fsync_dblwr:
            yield from self.fil.fsync_ibdata()
        self.counters.add("Innodb_dblwr_pages_written", len(pages))
        self.counters.add("Innodb_dblwr_writes")
        self.batch_pending[key] = len(pages)
        self.issued += len(pages)
        self.pending += len(pages)
        yield from self._submit(pages, lambda done, page, ft, kind: self._complete_key(done, key, page, ft, kind))

    def _complete_key(self, done, key, page: int, flush_type: int, kind: str):
        yield done
        self.counters.add("Innodb_data_writes")
        self.counters.add("Innodb_pages_written")
        self.completed += 1
        self.pending -= 1
        self.on_complete(page, flush_type, kind)
        self.batch_pending[key] -= 1
        if self.batch_pending[key] == 0:
            yield from self.fil.fsync_data_files()
            ev = self.running.pop(key)
            ev.succeed()

    def wait_idle(self):
        if not self.enabled:
            yield from super().wait_idle()
            return
        yield from self.flush_buffered()
        while self.running:
            yield next(iter(self.running.values()))


class DoublewriteMariaDB(Doublewrite56):
    """MariaDB 10.5+ doublewrite (SMDB buf/buf0dblwr.cc: add_to_batch, flush_buffered_writes,
    flush_buffered_writes_completed). Two in-memory slots of two doublewrite blocks each (128
    pages at 16K: block_size() is FSP_EXTENT_SIZE): pages go to the active slot; a full slot (or
    the end of a flush batch) is swapped out and written asynchronously to the doublewrite area
    (one write per block), ibdata1 is fsynced, then the pages are posted. When the last of them
    completes, buf_dblwr_t::write_completed fsyncs the data files written since their last fsync
    (fil_flush_file_spaces; none with O_DIRECT_NO_FSYNC) and only then frees the slot (10.11.18).
    Only one slot is being written at a time. The flushing thread does not wait for the batch,
    only for a second swap while one is written. Both blocks go in one os_aio write when block 2
    follows block 1 in ibdata1 (`multi_batch` is false in buf_dblwr_t::flush_buffered_writes); the
    live captures (10.11.19) count one data write per Innodb_dblwr_writes, so theirs did.
    """

    one_write_for_blocks = True

    def add(self, page: int, flush_type: int, kind: str):
        if not self.enabled:
            yield from self._post(page, flush_type, kind, batch=False)
            return
        while len(self.buf) >= 2 * self.block_pages:
            yield from self.flush_buffered()
        self.buf.append((page, flush_type, kind))

    def flush_buffered(self, inst: int | None = None, flush_type: int | None = None):
        if not self.enabled:
            return
            yield
        while self.batch_running:
            yield self.batch_done
        if not self.buf:
            return
        self.batch_running = True
        self.batch_done = self.env.event()
        pages, self.buf = self.buf, []
        detached.start(self.env, self._write_batch(pages))  # the flushing thread does not wait
