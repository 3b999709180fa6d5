# shellcheck shell=bash
# Helpers for the system test's guest stages (sourced; bash). Results go to /mnt/host/out/results
# as "SCENARIO PASS|FAIL|GAP text" lines; the host turns them into one line per scenario.
G=/mnt/host/guest
OUT=/mnt/host/out
RESULTS=$OUT/results
DIARY=/var/lib/venue-beacon/diary.sqlite
export PYTHONPATH=/opt/vbtest-python
export DEBIAN_FRONTEND=noninteractive

step() { echo "[$(cut -d' ' -f1 /proc/uptime)] $*"; }
pass() { echo "$1 PASS ${*:2}" >> "$RESULTS"; echo "PASS [$1] ${*:2}"; }
fail() { echo "$1 FAIL ${*:2}" >> "$RESULTS"; echo "FAIL [$1] ${*:2}"; }
gap() { echo "$1 GAP ${*:2}" >> "$RESULTS"; echo "GAP [$1] ${*:2}"; }
# check N TEXT COMMAND...: records PASS or FAIL for scenario N.
check() {
    local n="$1" text="$2"
    shift 2
    if "$@"; then pass "$n" "$text"; else fail "$n" "$text"; fi
}
# wait_for SECONDS COMMAND...: polls every half second until the command succeeds.
wait_for() {
    local end=$(( $(date +%s) + $1 ))
    shift
    until "$@"; do
        [ "$(date +%s)" -lt "$end" ] || return 1
        sleep 0.5
    done
}
# peer LOGNAME HCI SCRIPT ARGS...: a Bumble peer of the integration tests on hci-socket:HCI, in
# the background, output in $OUT/LOGNAME.log.
peer() {
    local name="$1" hci="$2" script="$3"
    shift 3
    python3 "$G/legacy.py" "$G/peers/$script" "hci-socket:$hci" "$@" > "$OUT/$name.log" 2>&1 &
}
# sql QUERY: the live diary, read as the service's user.
sql() { runuser -u venue-beacon -- sqlite3 -readonly "$DIARY" "$1"; }
has_visit() { [ "$(sql "select count(*) from visit where kind = '$1' and hex(payload) = upper('$2')")" -ge 1 ]; }
main_pid() { systemctl show -P MainPID venue-beacon; }
is_active() { [ "$(systemctl is-active venue-beacon)" = active ]; }
journal() { journalctl -u venue-beacon --no-pager -o cat "$@"; }
cursor() { journalctl -n 0 --show-cursor --no-pager | sed -n 's/^-- cursor: //p'; }
logs_since() { journal --after-cursor="$1"; }
logged_since() { logs_since "$1" | grep -q -- "$2"; }
# line N: the gpio-sim sysfs directory of line N (value: what the consumer drives; pull: input).
line() { echo /sys/devices/platform/gpio-sim.*/gpiochip*/sim_gpio"$1"; }
led() { cat "$(line "$1")/value"; }
# ledwatch LINE SECONDS: "samples=N on=N rises=N".
ledwatch() { python3 "$G/ledwatch.py" "$(line "$1")/value" "$2"; }
press() { echo pull-down > "$(line 23)/pull"; sleep 0.3; echo pull-up > "$(line 23)/pull"; }
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# The air: btvirt with four controllers (hci0 the venue's, hci1-3 the phones').
start_air() {
    systemd-run --quiet --unit=vbtest-air --collect sh "$G/air"
    wait_for 90 sh -c 'for i in 0 1 2 3; do hciconfig hci$i 2>/dev/null | grep -q "BD Address: 00:AA" || exit 1; done'
}
stop_air() { systemctl stop vbtest-air 2>/dev/null || true; }
# phones_down: the phones' controllers down (Bumble binds the user channel, like the service).
phones_down() { for i in 1 2 3; do hciconfig "hci$i" down 2>/dev/null || true; done; }

# The GPIO chip: gpio-sim with the lines the config names (status 17, activity 27, export 22,
# button 23), label vbtest-gpio.
make_chip() {
    modprobe gpio-sim || return 1
    local d=/sys/kernel/config/gpio-sim/vbtest
    [ -e "$d/live" ] && return 0
    mkdir -p "$d/bank0"
    echo 28 > "$d/bank0/num_lines"
    echo vbtest-gpio > "$d/bank0/label"
    for n in 17 22 23 27; do
        mkdir -p "$d/bank0/line$n"
        echo "GPIO$n" > "$d/bank0/line$n/name"
    done
    echo 1 > "$d/live"
    udevadm settle
}

start_ntp() {
    systemd-run --quiet --unit=vbtest-ntp --collect python3 "$G/ntp_server.py" "${1:-0}"
    sleep 1
    systemctl restart systemd-timesyncd
}
synchronised() { [ -e /run/systemd/timesync/synchronized ]; }

save_journal() { journalctl -b --no-pager > "$OUT/journal-$1.txt" 2>&1 || true; }
