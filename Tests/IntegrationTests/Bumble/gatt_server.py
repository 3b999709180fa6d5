"""Bumble peer: a connectable advertiser with a GATT server, for our GATT client to read.

usage: gatt_server.py TRANSPORT SERVICE_UUID READ_UUID READ_VALUE_HEX WRITE_UUID [SECONDS]
The service holds a readable characteristic with READ_VALUE_HEX and a writable one (with and
without response). Prints "READY <address>" once advertising, "CONNECTED", "WRITE <hex>" for each
write, "DISCONNECTED".
"""
import asyncio
import sys

from bumble.device import Device
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble.hci import Address
from bumble.transport import open_transport


async def main() -> None:
    transport_name, service_uuid, read_uuid, read_hex, write_uuid = sys.argv[1:6]
    seconds = float(sys.argv[6]) if len(sys.argv) > 6 else 30.0
    async with await open_transport(transport_name) as (source, sink):
        device = Device.with_hci("bumble-gatt", Address("F0:F1:F2:F3:F4:F7"), source, sink)

        def on_write(connection, value) -> None:
            print("WRITE", bytes(value).hex(), flush=True)

        device.add_service(Service(service_uuid, [
            Characteristic(read_uuid, Characteristic.Properties.READ, Characteristic.READABLE,
                           bytes.fromhex(read_hex)),
            Characteristic(write_uuid,
                           Characteristic.Properties.WRITE | Characteristic.Properties.WRITE_WITHOUT_RESPONSE,
                           Characteristic.WRITEABLE, CharacteristicValue(write=on_write)),
        ]))
        device.on("connection", lambda c: (print("CONNECTED", flush=True),
                                           c.on("disconnection", lambda r: print("DISCONNECTED", flush=True))))
        await device.power_on()
        await device.start_advertising(advertising_data=bytes.fromhex("020106"), own_address_type=0,
                                       auto_restart=True)
        print("READY", str(device.public_address).split("/")[0], flush=True)
        await asyncio.sleep(seconds)


asyncio.run(main())
