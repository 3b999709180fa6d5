"""An SMTP sink on 127.0.0.1:2525: each message is written to DIR/N.eml.

usage: smtp_sink.py DIR
"""
import asyncio
import os
import sys

sys.path.insert(0, "/opt/vbtest-python")
from aiosmtpd.controller import Controller  # noqa: E402

directory = sys.argv[1]
os.makedirs(directory, exist_ok=True)


class Sink:
    count = 0

    async def handle_DATA(self, server, session, envelope):
        Sink.count += 1
        with open(os.path.join(directory, f"{Sink.count}.eml"), "wb") as f:
            f.write(envelope.original_content or envelope.content)
        return "250 OK"


controller = Controller(Sink(), hostname="127.0.0.1", port=2525)
controller.start()
print("READY", flush=True)
asyncio.get_event_loop().run_forever()
