"""A unix socket relay between a client and btvirt, so a test can make the controller vanish.

usage: relay.py TRANSPORT LISTEN_PATH
Relays every connection on LISTEN_PATH to the emulator (TRANSPORT is "unix:/tmp/bt-server-le"). On SIGUSR1 it closes the relayed
connections and refuses new ones for 3 seconds (the client sees its controller disappear), then
accepts again. Prints "READY", "DROPPED" and "ACCEPTING".
"""
import asyncio
import os
import signal
import sys


async def main() -> None:
    target_path, listen_path = sys.argv[1].removeprefix("unix:"), sys.argv[2]
    writers: list[asyncio.StreamWriter] = []
    paused = False

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(4096):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()

    async def on_client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if paused:
            writer.close()
            return
        target_reader, target_writer = await asyncio.open_unix_connection(target_path)
        writers.extend([writer, target_writer])
        await asyncio.gather(pipe(reader, target_writer), pipe(target_reader, writer))

    async def drop() -> None:
        nonlocal paused
        paused = True
        for writer in writers:
            writer.close()
        writers.clear()
        print("DROPPED", flush=True)
        await asyncio.sleep(3)
        paused = False
        print("ACCEPTING", flush=True)

    if os.path.exists(listen_path):
        os.unlink(listen_path)
    server = await asyncio.start_unix_server(on_client, listen_path)
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGUSR1, lambda: loop.create_task(drop()))
    # The test process may have started us with SIGUSR1 blocked (children inherit the mask).
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGUSR1])
    print("READY", flush=True)
    try:
        async with server:
            await server.serve_forever()
    finally:
        if os.path.exists(listen_path):
            os.unlink(listen_path)


asyncio.run(main())
