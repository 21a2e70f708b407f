"""Memory of processes from /proc, for the benchmarks that measure it (noise_memory's Python
side, es_real and its peers)."""

KIB = 1024


def pss_bytes(pid):
    """The proportional set size of `pid` in bytes (/proc/PID/smaps_rollup: its private pages,
    and its share of the pages it maps with others), None if it is gone or unreadable."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * KIB
    except OSError:
        pass
    return None
