#!/usr/bin/env python3
"""Exposure check benchmark (issue 18): a day of a national authority's keys against a diary of
10,000 gaen visits. Not a test.

    python3 Benchmarks/exposure/exposure_bench.py [--keys 35000] [--visits 10000] [--binary PATH] [--no-reference]

Builds, in a temporary directory: a key export zip of KEYS keys (rolling period 144, signed with a
fresh P-256 key), a sightings file whose 10,000 gaen visits spread over the key day (20 of them
carry identifiers of published keys, the rest are decoys), replays it into a diary, then times
the whole `venue-beacon exposure check --json` (parse, verify, derive, match, report) with
/usr/bin/time (wall time and peak RSS), and beside it, in the same run, a straightforward Python
reference with `cryptography` doing the same derivation (HKDF + 144 AES blocks per key) and
lookup in a set of the diary's identifiers, on one core (--no-reference leaves it out: for a
million keys it takes minutes). Prints one summary table.
"""
import argparse, json, os, random, struct, subprocess, sys, tempfile, time, zipfile
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives import serialization

p = argparse.ArgumentParser()
p.add_argument("--keys", type=int, default=35000)
p.add_argument("--visits", type=int, default=10000)
p.add_argument("--binary", default=os.path.join(os.path.dirname(__file__), "../../.build/release/venue-beacon"))
p.add_argument("--no-reference", action="store_true", help="time venue-beacon only, not the Python reference")
args = p.parse_args()
rng = random.Random(1)

def varint(v):
    b = bytearray()
    while True:
        x = v & 0x7F; v >>= 7
        if v: b.append(x | 0x80)
        else: b.append(x); return bytes(b)
def f_int(n, v): return varint(n << 3) + varint(v)
def f_bytes(n, b): return varint(n << 3 | 2) + varint(len(b)) + b

def rpi(tek, interval):
    rpik = HKDF(algorithm=hashes.SHA256(), length=16, salt=None, info=b"EN-RPIK").derive(tek)
    e = Cipher(algorithms.AES(rpik), modes.ECB()).encryptor()
    return e.update(b"EN-RPI" + bytes(6) + struct.pack("<I", interval)) + e.finalize()

day = 1795219200 // 600 // 144 * 144
keys = [bytes(rng.randrange(256) for _ in range(16)) for _ in range(args.keys)]
signing = ec.generate_private_key(ec.SECP256R1())
spki = signing.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
info = f_bytes(3, b"v1") + f_bytes(4, b"bench")
body = b"EK Export v1    " + f_bytes(3, b"XX") + f_int(4, 1) + f_int(5, 1) + f_bytes(6, info)
body += b"".join(f_bytes(7, f_bytes(1, k) + f_int(2, 4) + f_int(3, day) + f_int(4, 144) + f_int(5, 1)) for k in keys)
sig = f_bytes(1, f_bytes(1, info) + f_bytes(4, signing.sign(body, ec.ECDSA(hashes.SHA256()))))

tmp = tempfile.mkdtemp(prefix="exposure-bench-")
zpath = os.path.join(tmp, "keys.zip")
with zipfile.ZipFile(zpath, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("export.bin", body); z.writestr("export.sig", sig)
rows = []
positives = 20
for n in range(args.visits):
    interval = day + rng.randrange(144)
    ident = rpi(keys[n * 997 % len(keys)], interval) if n < positives else bytes(rng.randrange(256) for _ in range(16))
    start = interval * 600 + rng.randrange(300)
    for s in (0, 150, 300):
        rows.append((start + s, ident.hex()))
rows.sort()
with open(os.path.join(tmp, "s.csv"), "w") as f:
    f.write("time,kind,payload,rssi\n")
    for t, h in rows: f.write(f"{t},gaen,{h},-65\n")
import base64
cfg = os.path.join(tmp, "c.toml")
with open(cfg, "w") as f:
    f.write(f'[venue]\ncountry = 826\nstate = 0\ncode = 1\nname = "bench"\n[diary]\npath = "{tmp}/d.sqlite"\nshare_days = "all"\n'
            f'[exposure]\nverification_keys = ["bench:v1:{base64.b64encode(spki).decode()}"]\n')
subprocess.run([args.binary, "diary", "replay", os.path.join(tmp, "s.csv"), "--config", cfg], check=True, stdout=subprocess.DEVNULL)

# The command, whole: best of 3, with its peak RSS.
best = None
for _ in range(3):
    t0 = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", "taskset", "-c", "0", args.binary, "exposure", "check", zpath, "--json",
                        "--config", cfg, "--now", str((day + 144) * 600)], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    rss = int(r.stderr.strip().splitlines()[-1])
    if best is None or wall < best[0]: best = (wall, rss, json.loads(r.stdout))
wall, rss, report = best
assert len(report["exposures"]) == positives, len(report["exposures"])

rpis = len(keys) * 144
print(f"keys {len(keys)}, RPIs {rpis}, diary visits {args.visits}, zip {os.path.getsize(zpath)} B")
print(f"venue-beacon exposure check (whole command, 1 core): {wall:.3f} s wall, {len(keys)/wall:,.0f} keys/s, "
      f"{rpis/wall/1e6:.2f} M RPIs/s, peak RSS {rss/1024:.1f} MiB")
if args.no_reference:
    sys.exit(0)

# The Python reference: the same derivation and lookup, on one core.
diary = {bytes.fromhex(h) for _, h in rows}
t0 = time.perf_counter()
found = 0
for k in keys:
    rpik = HKDF(algorithm=hashes.SHA256(), length=16, salt=None, info=b"EN-RPIK").derive(k)
    e = Cipher(algorithms.AES(rpik), modes.ECB()).encryptor()
    for i in range(day, day + 144):
        if e.update(b"EN-RPI" + bytes(6) + struct.pack("<I", i)) in diary: found += 1
py = time.perf_counter() - t0
assert found == positives, found
print(f"python reference (derive + match only): {py:.3f} s, {len(keys)/py:,.0f} keys/s; "
      f"venue-beacon is {py/wall:.1f}x faster")
