"""The peer for advert-bench: Home Assistant's advertisement parser (PyPI bluetooth-data-tools)
parsing the same adverts, read from the same btsnoop capture.

Usage: python bdt_peer.py CAPTURE [--passes N] [--uncached] [--json] [--build-only]

--build-only makes the fresh bytes objects of each pass without parsing them: Benchmarks/run
subtracts its instruction count from the parsing run's under callgrind.

The capture is read here (outside the timing) into the AD bytes of every report. Each timed pass
calls parse_advertisement_data_bytes (the library's cached Cython parser, the entry point Home
Assistant's scanners use for raw adverts) once per report, in capture order, on a fresh bytes
object per report (as a scanner receives them), timed with thread CPU time and wall time.
Its cache persists across passes, as in a running Home Assistant.

--uncached then times the library's uncached parser (gap._uncached_parse_advertisement_bytes, the
same parse without the LRU cache; its UUID strings stay cached) in as many passes, after the
cached ones, and prints its result too ("peer-parse-uncached").
"""
import json
import statistics
import struct
import sys
import time
from importlib.metadata import version

from bluetooth_data_tools import gap, parse_advertisement_data_bytes


def advert_slices(path):
    """(buffer, [(start, end)]) for the AD bytes of every LE advertising report in the capture."""
    with open(path, "rb") as f:
        buf = f.read()
    if buf[:8] != b"btsnoop\0" or struct.unpack(">I", buf[12:16])[0] != 1002:
        raise SystemExit(f"{path}: not a btsnoop H4 (1002) capture")
    slices = []
    i = 16
    while i + 24 <= len(buf):
        included = struct.unpack(">I", buf[i + 4:i + 8])[0]
        p = i + 24
        i = p + included
        # H4 event 0x04, LE Meta 0x3E, length, subevent 0x02 (advertising report), count.
        if buf[p] != 0x04 or buf[p + 1] != 0x3E or buf[p + 3] != 0x02:
            continue
        count = buf[p + 4]
        r = p + 5
        for _ in range(count):
            length = buf[r + 8]
            slices.append((r + 9, r + 9 + length))
            r += 10 + length
    return buf, slices


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("--"):
        raise SystemExit(__doc__)
    path = args[0]
    passes = int(args[args.index("--passes") + 1]) if "--passes" in args else 3
    build_only = "--build-only" in args
    buf, slices = advert_slices(path)
    n = len(slices)
    distinct = len({buf[a:b] for a, b in slices})
    parsers = [("peer-parse", parse_advertisement_data_bytes)]
    if "--uncached" in args:
        parsers.append(("peer-parse-uncached", gap._uncached_parse_advertisement_bytes))
    for stage, parse in parsers:
        result = timed(stage, parse, buf, slices, passes, build_only)
        result["distinct_adverts"] = distinct
        if "--json" in args:
            print(json.dumps(result))
        else:
            print(f"{stage} {result['peer']}: {result['median_cpu_rate']:,} reports/s (thread CPU, median of {passes}), "
                  f"{result['median_wall_rate']:,} reports/s wall, {result['ns_per_report']} ns/report "
                  f"[{n:,} reports, {distinct:,} distinct adverts]")


def timed(stage, parse, buf, slices, passes, build_only):
    """`passes` timed passes of `parse` over fresh bytes objects of the adverts."""
    n = len(slices)
    cpu_rates, wall_rates = [], []
    for _ in range(passes):
        ads = [buf[a:b] for a, b in slices]  # fresh objects: no hash cached from the last pass
        c0, w0 = time.thread_time(), time.perf_counter()
        if not build_only:
            for ad in ads:
                parse(ad)
        c1, w1 = time.thread_time(), time.perf_counter()
        cpu_rates.append(n / (c1 - c0))
        wall_rates.append(n / (w1 - w0))
    return {
        "stage": stage,
        "peer": f"bluetooth-data-tools {version('bluetooth-data-tools')}",
        "reports": n,
        "cpu_rates": [int(r) for r in cpu_rates],
        "median_cpu_rate": int(statistics.median(cpu_rates)),
        "median_wall_rate": int(statistics.median(wall_rates)),
        "ns_per_report": round(1e9 / statistics.median(cpu_rates), 1),
    }


if __name__ == "__main__":
    main()
