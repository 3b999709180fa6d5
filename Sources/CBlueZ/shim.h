// Headers of libbluetooth (Debian: libbluetooth-dev) used by the HCI user-channel transport:
// sockaddr_hci, HCI socket channels, ioctls (HCIDEVDOWN, HCIGETDEVLIST, HCIGETDEVINFO) and bdaddr helpers.
//
// The small inline helpers below exist because Swift cannot call variadic C functions (ioctl) or
// expand function-like macros (_IOR/_IOW): each wraps exactly one system call and reports failure
// the C way (-1 and errno).
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>

/// socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI), unbound.
static inline int cbluez_hci_socket(void) {
    return socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
}

/// HCIGETDEVLIST: writes up to `max` (≤ HCI_MAX_DEV) adapter indices to `ids`; returns the count.
static inline int cbluez_dev_list(int fd, uint16_t *ids, int max) {
    if (max > HCI_MAX_DEV) max = HCI_MAX_DEV;
    struct hci_dev_list_req *req = calloc(1, sizeof(*req) + (size_t)max * sizeof(struct hci_dev_req));
    if (!req) { errno = ENOMEM; return -1; }
    req->dev_num = (uint16_t)max;
    if (ioctl(fd, HCIGETDEVLIST, (void *)req) < 0) {
        int saved = errno;
        free(req);
        errno = saved;
        return -1;
    }
    int count = req->dev_num;
    for (int i = 0; i < count; i++) ids[i] = req->dev_req[i].dev_id;
    free(req);
    return count;
}

/// HCIGETDEVINFO for info->dev_id.
static inline int cbluez_dev_info(int fd, struct hci_dev_info *info) {
    return ioctl(fd, HCIGETDEVINFO, (void *)info);
}

/// HCIDEVDOWN: powers the adapter down (needs CAP_NET_ADMIN).
static inline int cbluez_dev_down(int fd, int dev_id) {
    return ioctl(fd, HCIDEVDOWN, dev_id);
}

/// Binds `fd` to the HCI user channel of adapter `dev_id` (needs CAP_NET_ADMIN).
static inline int cbluez_bind_user_channel(int fd, uint16_t dev_id) {
    struct sockaddr_hci addr = {0};
    addr.hci_family = AF_BLUETOOTH;
    addr.hci_dev = dev_id;
    addr.hci_channel = HCI_CHANNEL_USER;
    return bind(fd, (struct sockaddr *)&addr, sizeof(addr));
}

/// Connects a new unix stream socket to `path`; returns the socket or -1 (errno set).
static inline int cbluez_connect_unix(const char *path) {
    struct sockaddr_un addr = {0};
    size_t len = 0;
    while (path[len]) len++;
    if (len >= sizeof(addr.sun_path)) { errno = ENAMETOOLONG; return -1; }
    addr.sun_family = AF_UNIX;
    for (size_t i = 0; i < len; i++) addr.sun_path[i] = path[i];
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/// Names the calling thread (shown by `top -H` and in crash reports); at most 15 characters kept.
static inline void cbluez_name_thread(const char *name) {
    prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}
