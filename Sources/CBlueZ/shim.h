// Headers of libbluetooth (Debian: libbluetooth-dev) used by the HCI user-channel transport:
// sockaddr_hci, HCI socket channels, ioctls (HCIDEVDOWN, HCIGETDEVLIST, HCIGETDEVINFO) and bdaddr helpers.
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
