#include <stddef.h>

/// Bytes the process holds in malloc'd blocks (glibc mallinfo2 uordblks; mmapped blocks included).
size_t heap_bytes_in_use(void);
