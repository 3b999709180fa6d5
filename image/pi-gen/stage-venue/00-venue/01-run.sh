#!/bin/bash -e
# pi-gen sub-stage (runs on the build host, working directory = this directory): install the
# venue-beacon package and the site's settings into the image.
#
# files/venue-beacon_*_arm64.deb   required: image/build-deb run on an arm64 host
# files/venue-beacon.toml          optional: the venue's config (else the package's, which the
#                                  service refuses until [venue] is filled in)
# files/msmtprc                    optional: the mail account exports are sent through

shopt -s nullglob
debs=(files/venue-beacon_*_arm64.deb)
if [ "${#debs[@]}" -ne 1 ]; then
    echo "stage-venue: put exactly one venue-beacon_*_arm64.deb in $(pwd)/files (see image/README.md)" >&2
    exit 1
fi
install -m 0644 "${debs[0]}" "${ROOTFS_DIR}/tmp/venue-beacon.deb"

# The journal lives in RAM: the SD card is spared, and the diary is what must survive.
install -D -m 0644 files/journald-volatile.conf "${ROOTFS_DIR}/etc/systemd/journald.conf.d/50-venue-beacon-volatile.conf"

on_chroot <<'CHROOT'
set -e
apt-get install -y --no-install-recommends /tmp/venue-beacon.deb
rm -f /tmp/venue-beacon.deb
# The HCI user channel needs the adapter to itself: bluetoothd must never hold it.
systemctl mask bluetooth.service
# The package enabled them already (deb-systemd-helper); say so plainly for the image. The
# timer refreshes venue-beacon-status.txt on the boot partition (docs/install.md).
systemctl enable venue-beacon.service venue-beacon-status.timer
CHROOT

if [ -f files/venue-beacon.toml ]; then
    install -m 0644 files/venue-beacon.toml "${ROOTFS_DIR}/etc/venue-beacon/venue-beacon.toml"
fi
if [ -f files/msmtprc ]; then
    # Readable by the service (it runs msmtp as venue-beacon), by nobody else: it may hold a password.
    install -m 0640 files/msmtprc "${ROOTFS_DIR}/etc/msmtprc"
    on_chroot <<'CHROOT'
chgrp venue-beacon /etc/msmtprc
CHROOT
fi
