"""Bumble peer: advertise on an H4 transport until killed or the time runs out.

usage: advertise.py TRANSPORT HEX_ADV_DATA [SECONDS]
Prints "READY <address>" once advertising is enabled.
"""
import asyncio
import sys

from bumble.device import Device
from bumble.hci import Address
from bumble.transport import open_transport


async def main() -> None:
    transport_name, adv_hex = sys.argv[1], sys.argv[2]
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 30.0
    async with await open_transport(transport_name) as (source, sink):
        device = Device.with_hci("bumble-adv", Address("F0:F1:F2:F3:F4:F5"), source, sink)
        await device.power_on()
        await device.start_advertising(advertising_data=bytes.fromhex(adv_hex), own_address_type=0)
        print("READY", device.public_address, flush=True)
        await asyncio.sleep(seconds)


asyncio.run(main())
