"""Page checksum cost: nanoseconds per 16 KiB page of InnoDB's two page checksums, measured here.

Compiles a small C program (needs `cc`) with -O2 and with -O3 and times, per page:

* `innodb`: the legacy checksum as buf_calc_page_new_checksum + buf_calc_page_old_checksum
  compute it (MySQL 5.6 buf/buf0checksum.cc): ut_fold_binary over bytes [4, 26) and
  [38, page - 8), and over [0, 26); ut_fold_binary folds one byte at a time with
  ut_fold_ulint_pair(n1, n2) = ((((n1 ^ n2 ^ MASK2) << 8) + n1) ^ MASK) + n2, a chain in which
  every step waits for the one before (MASK = 1653893711, MASK2 = 1463735687, ut/ut0rnd.h).
* `crc32c`: CRC-32C with the SSE4.2 instruction, 8 bytes per step in one chain, as 5.6's
  ut_crc32_sse42 does (ut/ut0crc32.cc).

Each timed loop changes one byte of the page before every checksum, so the compiler cannot
compute the checksum once for all iterations. The `same page` rows leave the page alone, which
lets -O3 hoist the work out of the loop: they show how a benchmark of one unchanged page can read
far below the real cost (shared/seeds/002's author measured 4.2 us a page at -O3 against 31.6 us
at -O2, dom.as "On checksums", 2008).

Usage: python benchmarks/checksum_cost.py [--pages 20000] [--runs 5]
Prints the median of the runs per kernel and flag, and the machine.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from machine import header

C_SOURCE = r"""
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <nmmintrin.h>

#define PAGE 16384
#define MASK 1653893711UL
#define MASK2 1463735687UL

static unsigned long fold_pair(unsigned long n1, unsigned long n2) {
    return ((((n1 ^ n2 ^ MASK2) << 8) + n1) ^ MASK) + n2;
}

static unsigned long fold_bytes(const unsigned char *p, size_t n) {
    unsigned long f = 0;
    for (size_t i = 0; i < n; i++) f = fold_pair(f, p[i]);
    return f;
}

static uint32_t innodb_checksum(const unsigned char *page) {
    unsigned long c = fold_bytes(page + 4, 22) + fold_bytes(page + 38, PAGE - 38 - 8);
    unsigned long old = fold_bytes(page, 26);
    return (uint32_t)(c ^ old);
}

static uint32_t crc32c_page(const unsigned char *page) {
    uint64_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < PAGE; i += 8) {
        uint64_t w;
        memcpy(&w, page + i, 8);
        crc = _mm_crc32_u64(crc, w);
    }
    return (uint32_t)crc ^ 0xFFFFFFFFu;
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

volatile uint32_t sink;

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 20000;
    unsigned char *page = aligned_alloc(64, PAGE);
    for (int i = 0; i < PAGE; i++) page[i] = (unsigned char)(i * 131 + 7);
    uint32_t acc = 0;
    double t0 = now_s();
    for (long k = 0; k < n; k++) { page[100 + (k & 1023)] ^= (unsigned char)k; acc += innodb_checksum(page); }
    double t1 = now_s();
    for (long k = 0; k < n; k++) { page[100 + (k & 1023)] ^= (unsigned char)k; acc += crc32c_page(page); }
    double t2 = now_s();
    for (long k = 0; k < n; k++) acc += innodb_checksum(page);
    double t3 = now_s();
    sink = acc;
    printf("%.1f %.1f %.1f\n", (t1 - t0) / n * 1e9, (t2 - t1) / n * 1e9, (t3 - t2) / n * 1e9);
    return 0;
}
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        print("checksum_cost: needs a C compiler (cc); none found", file=sys.stderr)
        sys.exit(2)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "checksum_cost.c"
        src.write_text(C_SOURCE)
        for flag in ("-O2", "-O3"):
            exe = Path(tmp) / f"cc{flag}"
            subprocess.run([cc, flag, "-msse4.2", "-o", str(exe), str(src)], check=True)
            runs = [tuple(float(x) for x in subprocess.run([str(exe), str(args.pages)], capture_output=True,
                                                           text=True, check=True).stdout.split())
                    for _ in range(args.runs)]
            med = [statistics.median(r[i] for r in runs) for i in range(3)]
            rows.append((flag, med))
    print(header(f"{cc}; ns per 16 KiB page, median of {args.runs} runs of {args.pages} pages"))
    print(f"{'flags':6} {'innodb':>10} {'crc32c':>10} {'innodb, same page':>18}")
    for flag, (inno, crc, same) in rows:
        print(f"{flag:6} {inno:10.0f} {crc:10.0f} {same:18.0f}")


if __name__ == "__main__":
    main()
