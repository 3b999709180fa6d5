// zlib's raw inflate, for the deflated members of Exposure Notification key export zips.
#include <zlib.h>
