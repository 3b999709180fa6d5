"""Bumble peer: a phone that finds the venue by its advert and talks to its GATT service.

usage: venue_client.py TRANSPORT ACTION [arguments]
  read                      read the payload characteristic; prints "VALUE <hex>"
  write HEX...              write each value to the Android signal characteristic (with
                            response); prints "OK" or "ERROR 0x<att error>" per value
  report PAYLOAD_HEX SECS   a phone that cannot advertise: writes its payload (0x01) once, then
                            its RSSI (0x02) every second for SECS seconds; prints "OK" per write
Finds the venue by scanning for 16-bit service FCF6 in an advert and prints "FOUND <address>"
and "CONNECTED". Exits 0 when done.
"""
import asyncio
import struct
import sys

from bumble.core import ProtocolError
from bumble.device import Device, Peer
from bumble.hci import Address
from bumble.transport import open_transport

HERALD_SERVICE = "FCF6"
ANDROID_SIGNAL = "f617b813-092e-437a-8324-e09a80821a11"
PAYLOAD = "3e98c0f8-8f05-4829-a121-43e38f8933e7"


def lists_herald(data: bytes) -> bool:
    i = 0
    while i + 1 < len(data) and data[i] > 0:
        length, kind = data[i], data[i + 1]
        body = data[i + 2:i + 1 + length]
        if kind in (0x02, 0x03) and any(body[k:k + 2] == b"\xf6\xfc" for k in range(0, len(body) - 1, 2)):
            return True
        i += 1 + length
    return False


async def find_venue(device: Device) -> Address:
    found: asyncio.Future = asyncio.get_running_loop().create_future()

    def on_advertisement(advertisement) -> None:
        if not found.done() and lists_herald(bytes(advertisement.data)):
            found.set_result(advertisement.address)

    device.on("advertisement", on_advertisement)
    # btvirt reports an advert when scanning is enabled, and Bumble may miss that very first
    # report: enable scanning again until the venue shows up.
    for _ in range(10):
        await device.start_scanning(legacy=True, active=True, filter_duplicates=False, own_address_type=0)
        try:
            return await asyncio.wait_for(asyncio.shield(found), 2)
        except asyncio.TimeoutError:
            pass
        finally:
            await device.stop_scanning()
    raise SystemExit("no venue advert (service FCF6) seen")


async def main() -> None:
    transport_name, action, arguments = sys.argv[1], sys.argv[2], sys.argv[3:]
    async with await open_transport(transport_name) as (source, sink):
        device = Device.with_hci("venue-client", Address("F0:F1:F2:F3:F4:F9"), source, sink)
        await device.power_on()
        address = await find_venue(device)
        print("FOUND", str(address).split("/")[0], flush=True)
        connection = await device.connect(address, own_address_type=0, timeout=10)
        print("CONNECTED", flush=True)
        peer = Peer(connection)
        await peer.discover_service(HERALD_SERVICE)
        service = peer.get_services_by_uuid(HERALD_SERVICE)[0]
        await service.discover_characteristics()
        payload = service.get_characteristics_by_uuid(PAYLOAD)[0]
        signal = service.get_characteristics_by_uuid(ANDROID_SIGNAL)[0]

        async def write(value: bytes) -> None:
            try:
                await signal.write_value(value, with_response=True)
                print("OK", flush=True)
            except ProtocolError as error:
                print(f"ERROR 0x{error.error_code:02x}", flush=True)

        if action == "read":
            value = await payload.read_value()
            print("VALUE", bytes(value).hex(), flush=True)
        elif action == "write":
            for text in arguments:
                await write(bytes.fromhex(text))
        elif action == "report":
            own, seconds = bytes.fromhex(arguments[0]), float(arguments[1])
            await write(bytes([0x01]) + struct.pack("<H", len(own)) + own)
            end = asyncio.get_running_loop().time() + seconds
            rssi = -55
            while asyncio.get_running_loop().time() < end:
                await asyncio.sleep(1)
                await write(bytes([0x02]) + struct.pack("<h", rssi))
        await connection.disconnect()
        print("DONE", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
