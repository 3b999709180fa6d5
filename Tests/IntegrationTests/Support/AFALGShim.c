// LD_PRELOAD shim for running BlueZ's btvirt on kernels without AF_ALG (the kernel crypto API).
//
// btvirt creates a crypto context (AF_ALG sockets for ecb(aes) and cmac(aes)) for every LE
// controller it emulates and drops the client when that fails. LE advertising, scanning,
// connections and ACL forwarding never use that crypto, so the tests hand it an ordinary socket
// instead: socket(AF_ALG, ...) returns an AF_UNIX SOCK_SEQPACKET socket and bind() to an AF_ALG
// address succeeds. Everything else goes to the real libc functions.
//
// Built by the integration test harness: cc -shared -fPIC -o afalg-shim.so AFALGShim.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/socket.h>

#ifndef AF_ALG
#define AF_ALG 38
#endif

int socket(int domain, int type, int protocol) {
    static int (*real_socket)(int, int, int);
    if (!real_socket) real_socket = (int (*)(int, int, int))dlsym(RTLD_NEXT, "socket");
    if (domain == AF_ALG) return real_socket(AF_UNIX, SOCK_SEQPACKET | (type & SOCK_CLOEXEC), 0);
    return real_socket(domain, type, protocol);
}

int bind(int fd, const struct sockaddr *addr, socklen_t len) {
    static int (*real_bind)(int, const struct sockaddr *, socklen_t);
    if (!real_bind) real_bind = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT, "bind");
    if (addr && len >= (socklen_t)sizeof(sa_family_t) && addr->sa_family == AF_ALG) return 0;
    return real_bind(fd, addr, len);
}
