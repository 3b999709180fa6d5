"""Runs a Bumble peer script with legacy LE commands only.

usage: legacy.py SCRIPT ARGS...
btvirt's controllers in the guest list the LE extended advertising feature and commands, but with
extended advertising a scanner sees only the controller's public address, extended scanning
sees nothing and extended create connection is refused: the peers use the legacy commands.
"""
import runpy
import sys

sys.path.insert(0, "/opt/vbtest-python")

from bumble import device, hci, host  # noqa: E402

EXTENDED = {value for name, value in vars(hci).items()
            if name.startswith("HCI_LE_") and "EXTENDED" in name and name.endswith("_COMMAND") and isinstance(value, int)}
_supports_command = host.Host.supports_command
host.Host.supports_command = lambda self, op_code: op_code not in EXTENDED and _supports_command(self, op_code)
device.Device.supports_le_extended_advertising = property(lambda self: False)

sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
