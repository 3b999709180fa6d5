// libgpiod, either major version: 1.x (Debian/Raspberry Pi OS bookworm: libgpiod-dev 1.6) or
// 2.x (trixie: libgpiod-dev 2.2). Both install <gpiod.h> and link -lgpiod, so this target is the
// same for both; Package.swift defines GPIOD_V2 for 2.x, and only the matching backend compiles
// (GPIOBackendV1.swift or GPIOBackendV2.swift). Every other file sees the GPIOBackend protocol.
#include <gpiod.h>
