"""The peer for advert-bench: Home Assistant's bluetooth-data-tools parsing the same adverts.

Reads length-prefixed AD payloads from the file given and parses each, in `passes` timed passes
(default 5) each, with the library's cached parser (parse_advertisement_data_bytes, what Home
Assistant's scanners call per advert; its LRU cache persists across passes) and with its uncached
parser (gap._uncached_parse_advertisement_bytes, the same parse without the cache). Prints the
two median rates in reports per second (wall clock, one core): "cached uncached".
"""
import statistics
import sys
import time

from bluetooth_data_tools import gap, parse_advertisement_data_bytes


def rate(parse, adverts) -> float:
    start = time.perf_counter()
    for data in adverts:
        parse(data)
    return len(adverts) / (time.perf_counter() - start)


def main() -> None:
    raw = open(sys.argv[1], "rb").read()
    passes = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    adverts = []
    i = 0
    while i < len(raw):
        n = raw[i]
        adverts.append(raw[i + 1 : i + 1 + n])
        i += 1 + n
    cached = [rate(parse_advertisement_data_bytes, adverts) for _ in range(passes)]
    uncached = [rate(gap._uncached_parse_advertisement_bytes, adverts) for _ in range(passes)]
    print(statistics.median(cached), statistics.median(uncached))


main()
