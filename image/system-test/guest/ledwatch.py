"""Samples a gpio-sim line's value (what the consumer drives) every 5 ms.

usage: ledwatch.py VALUE_FILE SECONDS
Prints "samples=N on=N rises=N" at the end: the LED's duty and how often it lit.
"""
import sys
import time

path, seconds = sys.argv[1], float(sys.argv[2])
samples = on = rises = 0
last = None
end = time.monotonic() + seconds
while time.monotonic() < end:
    with open(path) as f:
        value = f.read().strip() == "1"
    samples += 1
    on += value
    if value and last is False:
        rises += 1
    last = value
    time.sleep(0.005)
print(f"samples={samples} on={on} rises={rises}", flush=True)
