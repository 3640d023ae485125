"""The operating system's page cache under InnoDB data files opened without O_DIRECT.

With innodb_flush_method = fsync (5.6's default on Linux), O_DSYNC, littlesync or nosync,
os_file_create opens the data files buffered, so every page InnoDB reads (buf_read_page ->
fil_io -> pread) or writes (buf_flush_write_block_low -> pwrite) passes through the kernel's page
cache (mm/filemap.c: filemap_read, generic_perform_write). A read of a cached page costs a copy and
no device I/O; a miss reads the device and the copy follows. O_DIRECT and O_DIRECT_NO_FSYNC bypass
the cache for data files, so no cache is built for them.

Linux reclaims file pages with two LRU lists (inactive and active, mm/vmscan.c): a page enters the
inactive list and is promoted by a second access. Here that is CLOCK (second chance): a page enters
with its reference bit clear, a hit sets it, and the hand evicts the first page with a clear bit,
clearing the bits it passes. Only InnoDB's own reads and writes touch the cache (the buffer pool
absorbs every other access), which is what the kernel sees too.

The copy's cost is the filesystem model's buffered-copy cost (models.filesystem.FsCosts,
shared/research/fs-device.md section 5.2). Not modelled: readahead by the kernel, dirty-page
writeback outside fsync, and memory the cache would take from the buffer pool.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class OsPageCache:
    """CLOCK over page ids 0..n_pages-1, holding at most capacity_pages of them."""

    capacity_pages: int
    n_pages: int
    hits: int = 0
    misses: int = 0
    cached: bytearray = field(init=False, repr=False)
    ref: bytearray = field(init=False, repr=False)
    ring: list[int] = field(init=False, repr=False)
    hand: int = 0

    def __post_init__(self) -> None:
        if self.capacity_pages < 1:
            raise ValueError("the page cache must hold at least one page")
        self.capacity_pages = min(self.capacity_pages, self.n_pages)
        self.cached = bytearray(self.n_pages)
        self.ref = bytearray(self.n_pages)
        self.ring = []

    def __len__(self) -> int:
        return len(self.ring)

    def read(self, page: int) -> bool:
        """A pread of `page`: True if it was cached (a hit); a miss brings it in."""
        if self.cached[page]:
            self.ref[page] = 1
            self.hits += 1
            return True
        self.misses += 1
        self._insert(page)
        return False

    def write(self, page: int) -> None:
        """A pwrite of `page`: it is cached afterwards and counts as an access."""
        if self.cached[page]:
            self.ref[page] = 1
        else:
            self._insert(page)

    def preload(self, pages) -> None:
        """Fill the cache with `pages` in order until it is full (a warm start)."""
        for page in pages:
            if len(self.ring) >= self.capacity_pages:
                break
            if not self.cached[page]:
                self._insert(page)

    def _insert(self, page: int) -> None:
        ring = self.ring
        if len(ring) < self.capacity_pages:
            ring.append(page)
        else:
            ref, n, hand = self.ref, len(ring), self.hand
            while ref[ring[hand]]:
                ref[ring[hand]] = 0
                hand = hand + 1 if hand + 1 < n else 0
            self.cached[ring[hand]] = 0
            ring[hand] = page
            self.hand = hand + 1 if hand + 1 < n else 0
        self.cached[page] = 1
        self.ref[page] = 0
