"""Samples a gpio-sim line's value (what the consumer drives) every 5 ms.

usage: ledwatch.py VALUE_FILE SECONDS [until-rise]
Prints "samples=N on=N rises=N bursts=A,B,..." at the end: the LED's duty, how often it lit, and
for a flash code (flashes, then a pause) the flashes of each whole burst: those between two dark
spells of at least 0.9 s (a code's pause is 1.5 s, the gaps within it 0.3 s). With
"until-rise" it stops at the first rise (a pulse awaited for at most SECONDS).
"""
import sys
import time

path, seconds = sys.argv[1], float(sys.argv[2])
until_rise = sys.argv[3:] == ["until-rise"]
samples = on = rises = 0
last = None
dark_since = None
bursts = []
current = None  # rises since the last long dark spell; None before the first one
end = time.monotonic() + seconds
while time.monotonic() < end:
    with open(path) as f:
        value = f.read().strip() == "1"
    now = time.monotonic()
    samples += 1
    on += value
    if value and last is False:
        rises += 1
        if dark_since is not None and now - dark_since >= 0.9:
            if current:
                bursts.append(current)
            current = 0
        if current is not None:
            current += 1
    if not value and last is not False:
        dark_since = now
    last = value
    if until_rise and rises:
        break
    time.sleep(0.005)
print(f"samples={samples} on={on} rises={rises} bursts={','.join(map(str, bursts))}", flush=True)
