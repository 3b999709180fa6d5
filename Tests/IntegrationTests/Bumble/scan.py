"""Bumble peer: scan (passive, legacy) and print each advertising report as one JSON line.

usage: scan.py TRANSPORT SECONDS
Prints "READY" once scanning is enabled, then lines like
{"address": "00:AA:01:01:00:42", "type": 0, "data": "020106..."} until the time runs out.
"""
import asyncio
import json
import sys

from bumble.device import Device
from bumble.hci import Address
from bumble.transport import open_transport


async def main() -> None:
    transport_name, seconds = sys.argv[1], float(sys.argv[2])
    async with await open_transport(transport_name) as (source, sink):
        device = Device.with_hci("bumble-scan", Address("F0:F1:F2:F3:F4:F6"), source, sink)

        def on_advertisement(advertisement) -> None:
            print(json.dumps({
                "address": str(advertisement.address).split("/")[0],
                "type": int(advertisement.address.address_type),
                "data": bytes(advertisement.data).hex(),
            }), flush=True)

        device.on("advertisement", on_advertisement)
        await device.power_on()
        await device.start_scanning(legacy=True, active=False, filter_duplicates=False, own_address_type=0)
        print("READY", flush=True)
        await asyncio.sleep(seconds)


asyncio.run(main())
