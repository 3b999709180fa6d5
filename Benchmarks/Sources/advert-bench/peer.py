"""The peer for advert-bench: Home Assistant's bluetooth-data-tools parsing the same adverts.

Reads length-prefixed AD payloads from the file given, parses each with
parse_advertisement_data_bytes (what Home Assistant's scanners call per advert), and prints the
reports per second (wall clock, one core).
"""
import sys
import time

from bluetooth_data_tools import parse_advertisement_data_bytes


def main() -> None:
    raw = open(sys.argv[1], "rb").read()
    adverts = []
    i = 0
    while i < len(raw):
        n = raw[i]
        adverts.append(raw[i + 1 : i + 1 + n])
        i += 1 + n
    parse = parse_advertisement_data_bytes
    start = time.perf_counter()
    for data in adverts:
        parse(data)
    elapsed = time.perf_counter() - start
    print(len(adverts) / elapsed)


main()
