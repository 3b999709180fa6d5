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
ledwatch() { python3 "$G/ledwatch.py" "$(line "$1")/value" "$2" "${@:3}"; }
# led_wait LINE WINDOW LIMIT TEST...: samples LINE in windows of WINDOW seconds until `TEST...
# WINDOW_RESULT` holds, for at most LIMIT seconds; prints the last window's "samples= on= rises=
# bursts=" and succeeds when TEST held. A pattern changes at the service's next tick after its
# cause (the status LED's state is judged every 10 s): later on a loaded machine, so checks wait.
led_wait() {
    local led="$1" window="$2" limit="$3" st end
    shift 3
    end=$(( $(date +%s) + limit ))
    while :; do
        st="$(ledwatch "$led" "$window")"
        if "$@" "$st"; then echo "$st"; return 0; fi
        [ "$(date +%s)" -lt "$end" ] || { echo "$st"; return 1; }
    done
}
# led_check N TEXT LINE WINDOW LIMIT TEST...: led_wait, recorded as PASS or FAIL with the last window.
led_check() {
    local n="$1" text="$2" st
    shift 2
    if st="$(led_wait "$@")"; then pass "$n" "$text ($st)"; else fail "$n" "$text ($st)"; fi
}
steady_on() { [ -n "$(field "$1" samples)" ] && [ "$(field "$1" on)" = "$(field "$1" samples)" ]; }
blinks_fast() { [ "$(field "$1" rises)" -ge 5 ]; }
# flashes N WINDOW: the window's bursts (flashes between pauses) are some, and all N.
flashes() { all_bursts "$(field "$2" bursts)" "$1"; }
# peer_ready NAME: waits for the Bumble peer NAME's "READY" (Python's start-up takes seconds, over a
# minute on a loaded machine), so the waits after it time the node, not the peer; logs how long.
peer_ready() {
    local t
    t=$(date +%s)
    if wait_for 300 grep -q '^READY' "$OUT/$1.log"; then
        echo "TIMING peer $1: READY after $(( $(date +%s) - t )) s" >> "$RESULTS"
    else
        echo "TIMING peer $1: no READY in 300 s" >> "$RESULTS"
    fi
}
press() { echo pull-down > "$(line 23)/pull"; sleep 0.3; echo pull-up > "$(line 23)/pull"; }
field() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
# all_bursts BURSTS N: ledwatch's bursts (flashes between pauses) are some, and all N.
all_bursts() { local b="$1" n="$2"; [ -n "$b" ] && [ "$(echo "$b" | tr ',' '\n' | grep -cvx "$n")" = 0 ]; }
# flash_code N SECONDS: the status LED shows the code of N flashes and a pause in a 12 s window
# within SECONDS; steady_led SECONDS: steady on in a 2 s window within SECONDS. The last window in
# $OUT/bootpart-led.txt.
flash_code() { led_wait 17 12 "$2" flashes "$1" > "$OUT/bootpart-led.txt"; }
steady_led() { led_wait 17 2 "$1" steady_on > "$OUT/bootpart-led.txt"; }

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
make_chip() { sh "$G/gpio-chip"; }

start_ntp() {
    systemd-run --quiet --unit=vbtest-ntp --collect python3 "$G/ntp_server.py" "${1:-0}"
    sleep 1
    systemctl restart systemd-timesyncd
}
synchronised() { [ -e /run/systemd/timesync/synchronized ]; }

save_journal() { journalctl -b --no-pager > "$OUT/journal-$1.txt" 2>&1 || true; }

# The venue hub (scenario 8): mosquitto and venue-beacon-hub on this machine, the node "hall".
HUB_CONFIG=/etc/venue-beacon/venue-hub.toml
HUB_STORE=/var/lib/venue-beacon/hub.sqlite
hub_sql() { runuser -u venue-beacon -- sqlite3 -readonly "$HUB_STORE" "$1"; }
# node_held / hub_held: each visit of the node's diary as "id|kind|payload|change", and the
# hub's copy of each as "visit|kind|payload|version" (the change it holds), by id.
node_held() { sql "select v.id || '|' || v.kind || '|' || hex(v.payload) || '|' || c.change from visit v join visit_change c on c.visit = v.id order by v.id"; }
hub_held() { hub_sql "select visit || '|' || kind || '|' || hex(payload) || '|' || version from node_visit where node = 'hall' order by visit"; }
hub_complete() {
    local node hub
    node="$(node_held)" && hub="$(hub_held 2>/dev/null)" && [ -n "$node" ] && [ "$node" = "$hub" ]
}
hub_has() { [ "$(hub_sql "select count(*) from node_visit where node = 'hall' and kind = '$1' and hex(payload) = upper('$2')" 2>/dev/null)" = 1 ]; }
hub_up() { systemctl is-active -q mosquitto && systemctl is-active -q venue-beacon-hub; }
# hub_once DIARY: the hub holds as many rows of node hall as the diary has visits, each visit
# once, all of DIARY.
hub_once() {
    local count
    count="$(sql 'select count(*) from visit')"
    [ "$(hub_sql "select count(*) || ' ' || count(distinct visit) || ' ' || group_concat(distinct diary) from node_visit where node = 'hall'")" = "$count $count $1" ]
}
# hub_status_agrees FILE: `venue-beacon hub status` (into FILE) says the node is online with as
# many visits as its diary and acknowledged up to its last change.
hub_status_agrees() {
    local count last
    count="$(sql 'select count(*) from visit')"
    last="$(sql 'select max(change) from visit_change')"
    runuser -u venue-beacon -- venue-beacon hub status --config "$HUB_CONFIG" > "$1" 2>&1
    grep -Eq "^hall: online, .*, $count visits, acknowledged up to change $last(;|\$)" "$1"
}
# hub_checks TAG TEXT: the hub holds every visit of the node's diary at its latest committed
# change, each once, from the node's one diary; its store is intact and 0600; `hub status`
# agrees. (A check-out is committed with the next check-in or within 10 minutes: the diary may
# change meanwhile, so the comparisons are retried for a while.)
hub_checks() {
    local tag="$1" text="$2" diary files
    if wait_for 150 hub_complete; then
        pass 8 "$text: every visit of the node's diary is at the hub ($(node_held | wc -l) visits: ids, kinds, payloads and latest changes equal)"
    else
        fail 8 "$text: the hub does not hold the node's diary (hub-$tag.diff)"
        diff <(node_held) <(hub_held 2>&1) > "$OUT/hub-$tag.diff"
        journalctl -b -u venue-beacon-hub -u mosquitto --no-pager > "$OUT/hub-journal-$tag.txt" 2>&1
        cp /var/log/mosquitto/mosquitto.log "$OUT/mosquitto-$tag.txt" 2>/dev/null
    fi
    diary="$(sql 'select id from diary_info')"
    check 8 "$text: none twice at the hub (one row per visit, all of the node's one diary $diary)" wait_for 30 hub_once "$diary"
    check 8 "$text: no phone's visit twice at the hub (kind, payload, check-in)" test \
        "$(hub_sql 'select count(*) from (select 1 from node_visit group by node, kind, payload, check_in having count(*) > 1)')" = 0
    check 8 "$text: the hub store passes PRAGMA integrity_check" test "$(hub_sql 'pragma integrity_check')" = ok
    files="$(stat -c '%n %a %U' "$HUB_STORE"*)"
    echo "$files" > "$OUT/hub-files-$tag.txt"
    # shellcheck disable=SC2016 # awk's own fields
    check 8 "$text: the hub's files are 0600 venue-beacon ($(echo "$files" | wc -l) files)" \
        awk '$2 != 600 || $3 != "venue-beacon" {bad = 1} END {exit bad || NR == 0}' "$OUT/hub-files-$tag.txt"
    wait_for 30 hub_status_agrees "$OUT/hub-status-$tag.txt"
    check 8 "$text: hub status agrees with the diary ($(head -n 1 "$OUT/hub-status-$tag.txt"))" hub_status_agrees "$OUT/hub-status-$tag.txt"
}
