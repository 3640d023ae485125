"""Text tables and output files for results (CLI and validation use these)."""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from pathlib import Path

from models.errors import InputError
from sim.iobench import IobenchResult
from sim.units import format_size

IOBENCH_COLUMNS = ("fs", "kernel", "mode", "workload", "bs", "files", "procs", "IOPS", "MiB/s",
                   "mean ms", "p99 ms", "lock wait %")


def iobench_row(r: IobenchResult) -> tuple[str, ...]:
    c = r.case
    return (c.filesystem, "-" if c.filesystem == "raw" else c.kernel, c.io_mode, c.pattern,
            format_size(c.block_bytes), str(c.data_files), str(c.processes), f"{r.iops:,.0f}",
            f"{r.mib_s:,.1f}", f"{r.lat_mean_s * 1e3:.3f}", f"{r.lat_p99_s * 1e3:.3f}",
            f"{100 * r.lock_wait_share:.1f}")


def format_rows(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """Left-aligned text columns; numbers right-aligned."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]

    def fmt(cells):
        out = []
        for i, cell in enumerate(cells):
            numeric = cell[:1].isdigit() or cell[:1] == "-" and cell[1:2].isdigit()
            out.append(cell.rjust(widths[i]) if numeric else cell.ljust(widths[i]))
        return "  ".join(out).rstrip()

    lines = [fmt(header), "  ".join("-" * w for w in widths)]
    lines += [fmt(r) for r in rows]
    return "\n".join(lines)


def iobench_table(results: list[IobenchResult]) -> str:
    return format_rows(IOBENCH_COLUMNS, [iobench_row(r) for r in results])


def iobench_json(results: list[IobenchResult], series: bool = False) -> str:
    return json.dumps({"results": [r.to_dict(series=series) for r in results]}, indent=2)


def _probe_writable(folder: Path) -> str | None:
    """None when a file can be created in `folder`, else the system's reason."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=".innosim-probe.", dir=folder)
    except OSError as err:
        return err.strerror or str(err)
    os.close(fd)
    Path(tmp).unlink(missing_ok=True)
    return None


def check_output_dir(path: Path, flag: str) -> None:
    """Before a long job: `path` is, or is now created as, a folder the job can write into.
    Raises InputError naming the flag, so a run is not simulated only to fail at the end."""
    if path.exists() and not path.is_dir():
        raise InputError(str(path), flag, "exists and is not a directory", "a directory path")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise InputError(str(path), flag, f"cannot be created ({err.strerror or err})",
                         "a directory you can write to") from None
    reason = _probe_writable(path)
    if reason:
        raise InputError(str(path), flag, f"cannot be written ({reason})", "a directory you can write to")


def check_output_file(path: Path, flag: str, allowed: str) -> None:
    """Before a long job: `path` names a file (not a folder) in an existing folder the job can
    write into; the file itself is written later, whole (write_atomic)."""
    if path.is_dir():
        raise InputError(str(path), flag, "is a directory", allowed)
    folder = path.parent
    if not folder.is_dir():
        raise InputError(str(path), flag, "its directory does not exist", allowed)
    reason = _probe_writable(folder)
    if reason:
        raise InputError(str(path), flag, f"its directory cannot be written ({reason})", allowed)


_UMASK: int | None = None


def _new_file_mode(path: Path) -> int:
    """The mode open(path, "w") would leave: an existing file's own, else 0o666 less the umask
    (mkstemp makes its file 0o600, which would hide every output from the user's group)."""
    global _UMASK
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        pass
    if _UMASK is None:
        _UMASK = _read_umask()
    return 0o666 & ~_UMASK


def _read_umask() -> int:
    """The process's umask: Linux shows it in /proc/self/status; elsewhere os.umask, which sets
    it as it returns it, is put back at once."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write a file whole or not at all: a temporary file in the same folder, then a rename. The
    file gets the mode a plain write would give it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.chmod(tmp, _new_file_mode(path))
        if isinstance(text, bytes):
            with os.fdopen(fd, "wb") as fh:
                fh.write(text)
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def iobench_series_csv(results: list[IobenchResult]) -> str:
    """Per-interval IOPS of every case: one row per (case, interval)."""
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["case", "t_s", "iops"])
    for r in results:
        c = r.case
        if not r.iops_series:
            continue
        step = c.duration_s / len(r.iops_series)
        for i, v in enumerate(r.iops_series):
            w.writerow([c.label(), f"{c.warmup_s + (i + 1) * step:.6f}", f"{v:.1f}"])
    return buf.getvalue()
