"""Bumble peer: a hostile (or broken) central that connects to the venue and holds the link
without ever reading or writing anything; when the link is dropped it connects again at once,
for as long as it runs.

usage: link_holder.py TRANSPORT ADDRESS SECONDS [LINKS]
  ADDRESS  our own address, one per holder
  LINKS    stop after this many links (default: no limit)
Finds the venue by its advert (16-bit service FCF6) and prints "FOUND <address>", then
"CONNECTED" for each link it gets and "DISCONNECTED after <seconds> s" when one ends, "DONE"
after LINKS links. Exits 0 after SECONDS.
"""
import asyncio
import sys
import time

from bumble.device import Device
from bumble.hci import Address
from bumble.transport import open_transport

from venue_client import find_venue


async def main() -> None:
    transport_name, own, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
    links = int(sys.argv[4]) if len(sys.argv) > 4 else None
    async with await open_transport(transport_name) as (source, sink):
        device = Device.with_hci("link-holder", Address(own), source, sink)
        await device.power_on()
        venue = await find_venue(device)
        print("FOUND", str(venue).split("/")[0], flush=True)
        loop = asyncio.get_running_loop()
        end = loop.time() + seconds
        while loop.time() < end and links != 0:
            try:
                connection = await device.connect(venue, own_address_type=0, timeout=2)
            except Exception:
                await asyncio.sleep(0.2)  # not connectable now (the venue is at its cap): again
                continue
            opened = time.monotonic()
            print("CONNECTED", flush=True)
            closed = asyncio.Event()
            connection.on("disconnection", lambda reason: closed.set())
            if device.connections.get(connection.handle) is not connection:
                closed.set()  # refused: it was gone before connect() returned
            try:
                await asyncio.wait_for(closed.wait(), max(0.1, end - loop.time()))
            except asyncio.TimeoutError:
                break
            print(f"DISCONNECTED after {time.monotonic() - opened:.1f} s", flush=True)
            if links is not None:
                links -= 1
        print("DONE", flush=True)
        # Stay on the air until SECONDS: btvirt gives the next client to open it this one's
        # controller address, which is what the node backed off.
        await asyncio.sleep(max(0.0, end - loop.time()))


asyncio.run(main())
