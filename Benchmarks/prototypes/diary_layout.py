"""A measured prototype for the diary's disk-write goal (issue 6 benchmark 3; its figures are in
docs/benchmarks-history.md, "Disk writes per venue hour"): a different table layout with the same SQLite settings as the
diary (WAL, synchronous = FULL, automatic checkpoints), driven by the same kind of venue as
disk-bench (300 visits an hour for 6 hours plus walk-pasts, phones measured every second, check-in
after 120 s, check-out after 300 s unseen). Not product code: it answers "how many bytes would this
layout write", before anyone changes VenueDiary.

Layout:
  identity(id INTEGER PRIMARY KEY, kind, payload)   appended once per phone (lookups in memory)
  visit(id INTEGER PRIMARY KEY, identity, check_in, check_out, samples, rssi_max, rssi_sum)
      written at check-in and at check-out only; index on check_in (appends in time order)
  progress(visit INTEGER PRIMARY KEY, last_seen, samples, rssi_max, rssi_sum)
      one narrow row per open visit, rewritten by each refresh, deleted at check-out

Usage: python3 diary_layout.py [--interval S] [--check-ins-at-next-tick] [--hours H] [--visits-per-hour N]
Prints bytes written (wchar and write_bytes from /proc/self/io) per venue hour.
"""
import os
import random
import sqlite3
import sys
import tempfile


def arg(name, default):
    return type(default)(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def io():
    fields = dict(line.split(": ") for line in open("/proc/self/io").read().splitlines())
    return int(fields["wchar"]), int(fields["write_bytes"])


interval = arg("--interval", 30)
next_tick = "--check-ins-at-next-tick" in sys.argv
hours = arg("--hours", 6)
per_hour = arg("--visits-per-hour", 300)
rng = random.Random(7)
span = hours * 3600
guests = []
for k in range(hours * per_hour * 4 // 3):
    walk_past = k % 4 == 3
    arrive = rng.randrange(span)
    roll = rng.randrange(10)
    stay = (10 + rng.randrange(50) if walk_past else 300 + rng.randrange(600) if roll < 2
            else 900 + rng.randrange(2700) if roll < 7 else 3600 + rng.randrange(7200))
    guests.append((arrive, arrive + stay, bytes([0, 0, 0]) + k.to_bytes(4, "little") + bytes(122), -55 - rng.randrange(30)))
guests.sort()
end = span + 3 * 3600

directory = tempfile.mkdtemp(prefix="diary-layout-")
path = os.path.join(directory, "diary.sqlite")
db = sqlite3.connect(path, isolation_level=None)
db.execute("PRAGMA journal_mode = WAL")
db.execute("PRAGMA synchronous = FULL")
db.executescript("""
CREATE TABLE identity(id INTEGER PRIMARY KEY, kind TEXT NOT NULL, payload BLOB NOT NULL);
CREATE TABLE visit(id INTEGER PRIMARY KEY, identity INTEGER NOT NULL, check_in REAL NOT NULL, check_out REAL,
                   samples INTEGER NOT NULL, rssi_max INTEGER, rssi_sum INTEGER);
CREATE INDEX visit_check_in ON visit(check_in);
CREATE TABLE progress(visit INTEGER PRIMARY KEY, last_seen REAL NOT NULL, samples INTEGER NOT NULL,
                      rssi_max INTEGER, rssi_sum INTEGER);
""")

identities = {}     # payload -> identity id
open_visits = {}    # guest -> [first, last, samples, max, sum, visit id or None]
pending_in, pending_out = [], []
start = io()
present, nxt, commits, last_flush = [], 0, 0, 0


def flush(now, refresh):
    global commits, last_flush
    if not (pending_in or pending_out or refresh):
        return
    db.execute("BEGIN")
    for g in pending_in:
        v = open_visits[g]
        payload = guests[g][2]
        if payload not in identities:
            identities[payload] = db.execute("INSERT INTO identity(kind, payload) VALUES ('herald', ?)", (payload,)).lastrowid
        v[5] = db.execute("INSERT INTO visit(identity, check_in, samples, rssi_max, rssi_sum) VALUES (?, ?, ?, ?, ?)",
                          (identities[payload], v[0], v[2], v[3], v[4])).lastrowid
        db.execute("INSERT INTO progress VALUES (?, ?, ?, ?, ?)", (v[5], v[1], v[2], v[3], v[4]))
    for v in pending_out:
        db.execute("UPDATE visit SET check_out = ?, samples = ?, rssi_max = ?, rssi_sum = ? WHERE id = ?", (v[1], v[2], v[3], v[4], v[5]))
        db.execute("DELETE FROM progress WHERE visit = ?", (v[5],))
    if refresh:
        for v in open_visits.values():
            if v[5] is not None:
                db.execute("UPDATE progress SET last_seen = ?, samples = ?, rssi_max = ?, rssi_sum = ? WHERE visit = ?", (v[1], v[2], v[3], v[4], v[5]))
        last_flush = now
    db.execute("COMMIT")
    commits += 1
    pending_in.clear()
    pending_out.clear()


for t in range(end):
    while nxt < len(guests) and guests[nxt][0] <= t:
        present.append(nxt)
        nxt += 1
    present = [g for g in present if guests[g][1] >= t]
    for g in present:
        rssi = guests[g][3] + (t * 2654435761 + g) % 7 - 3
        v = open_visits.get(g)
        if v is None:
            open_visits[g] = [t, t, 1, rssi, rssi, None]
            continue
        v[1] = t
        v[2] += 1
        v[3] = max(v[3], rssi)
        v[4] += rssi
        if v[5] is None and v[1] - v[0] > 120 and g not in pending_in:
            pending_in.append(g)
    for g, v in list(open_visits.items()):
        if t - v[1] > 300:
            del open_visits[g]
            if v[5] is not None:
                pending_out.append(v)
            elif g in pending_in:  # checked in but not written yet: write it closed
                pending_in.remove(g)
                open_visits[g] = v
                flush(t, False)
                del open_visits[g]
                pending_out.append(v)
    if t - last_flush >= interval:
        flush(t, True)
    elif next_tick and pending_in:
        flush(t, False)
flush(end, True)
db.close()
wchar, write_bytes = (a - b for a, b in zip(io(), start))
visits = len({v for v in identities.values()})
print(f"prototype layout, refresh every {interval} s, check-ins {'at the next tick' if next_tick else 'with the refresh'}: "
      f"{commits} commits, {len(identities)} identities; per venue hour: wchar {wchar / (end / 3600) / 1e6:.3f} MB, "
      f"write_bytes {write_bytes / (end / 3600) / 1e6:.3f} MB")
for name in os.listdir(directory):
    os.remove(os.path.join(directory, name))
os.rmdir(directory)
