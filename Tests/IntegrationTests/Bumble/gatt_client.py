"""Bumble peer: connect to a GATT server, read one characteristic, optionally write another.

usage: gatt_client.py TRANSPORT ADDRESS ADDRESS_TYPE SERVICE_UUID READ_UUID [WRITE_UUID WRITE_HEX]
ADDRESS_TYPE is "public" or "random". Prints "CONNECTED", "VALUE <hex>", "WROTE" and exits 0;
any failure exits non-zero with the reason.
"""
import asyncio
import sys

from bumble.device import Device, Peer
from bumble.hci import Address
from bumble.transport import open_transport


async def main() -> None:
    transport_name, address, address_type, service_uuid, read_uuid = sys.argv[1:6]
    write_uuid, write_hex = (sys.argv[6], sys.argv[7]) if len(sys.argv) > 7 else (None, None)
    kind = Address.PUBLIC_DEVICE_ADDRESS if address_type == "public" else Address.RANDOM_DEVICE_ADDRESS
    async with await open_transport(transport_name) as (source, sink):
        device = Device.with_hci("bumble-client", Address("F0:F1:F2:F3:F4:F8"), source, sink)
        await device.power_on()
        connection = await device.connect(Address(address, kind), own_address_type=0, timeout=10)
        print("CONNECTED", flush=True)
        peer = Peer(connection)
        await peer.discover_service(service_uuid)
        services = peer.get_services_by_uuid(service_uuid)
        if not services:
            sys.exit(f"service {service_uuid} not found")
        await services[0].discover_characteristics()
        readable = services[0].get_characteristics_by_uuid(read_uuid)
        if not readable:
            sys.exit(f"characteristic {read_uuid} not found")
        value = await readable[0].read_value()
        print("VALUE", bytes(value).hex(), flush=True)
        if write_uuid:
            writable = services[0].get_characteristics_by_uuid(write_uuid)
            if not writable:
                sys.exit(f"characteristic {write_uuid} not found")
            await writable[0].write_value(bytes.fromhex(write_hex), with_response=True)
            print("WROTE", flush=True)
        await connection.disconnect()


asyncio.run(main())
