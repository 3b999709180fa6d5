// libgpiod v1 (Debian/Raspberry Pi OS bookworm: libgpiod-dev 1.6). Only GPIOBackendV1.swift
// uses it; every other file sees the GPIOBackend protocol.
#include <gpiod.h>
