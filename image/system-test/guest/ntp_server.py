"""A minimal NTP (SNTP) server on 127.0.0.1:123 for systemd-timesyncd: it answers with this
machine's clock plus OFFSET seconds (the true time when the guest's clock was set back).

usage: ntp_server.py OFFSET_SECONDS
"""
import socket
import struct
import sys
import time

offset = float(sys.argv[1])
NTP_EPOCH = 2208988800


def ntp(t: float) -> bytes:
    t += NTP_EPOCH
    return struct.pack("!II", int(t), int((t % 1) * 2**32))


sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sock.bind(("127.0.0.1", 123))
print("READY", flush=True)
while True:
    data, peer = sock.recvfrom(512)
    received = time.time() + offset
    if len(data) < 48:
        continue
    version = (data[0] >> 3) & 7
    reply = bytes([(0 << 6) | (version << 3) | 4, 2, data[2], 0xEC])  # LI 0, server, stratum 2, precision
    reply += struct.pack("!II", 0, 0)   # root delay, root dispersion
    reply += b"LOCL"                    # reference id
    reply += ntp(received - 1)          # reference time
    reply += data[40:48]                # origin = the client's transmit time
    reply += ntp(received) + ntp(time.time() + offset)
    sock.sendto(reply, peer)
