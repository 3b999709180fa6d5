#!/usr/bin/env python3
"""The venue hub's benchmarks (issue 23), against Debian's mosquitto on loopback.

Every scenario starts its own mosquitto (the repository's config/mosquitto/venue-beacon.conf
as shipped, with only its listener, password file and ACL path swapped for temporary ones, as
config/mosquitto/check does; the ACL is the repository's plus a `monitor` login that may read
$SYS) pinned to CPU 0, and the real `venue-beacon hub` (release build) pinned to CPU 1.

  ingest    mosquitto's own QoS 1 rate with a batch-sized payload (mosquitto_pub -q 1 -l of N
            lines into mosquitto_sub -q 1 -C N, live; and a persistent mosquitto_sub session
            draining what the broker queued for it while away; the subscriber on CPU 1 prints
            each message's receive time, %U: rate = messages after the first / first-to-last),
            then the hub draining the same way: the hub's session subscribed once, the hub away,
            3 nodes' visit batches (hub-bench batches: 300 a node, 900 in all, under the shipped
            max_queued_messages 1000) queued for it at the broker, then the hub starts; the time
            from its first acknowledgement to the last (one mosquitto_sub per node on
            venue-beacon/ack/<node>, %U) gives its commit rate. The store is then checked
            (sqlite3: every visit there). --hub-store-dir /dev/shm puts the store in memory
            (fsync free) to show what the disk costs; --hub-prefix runs the hub under perf.
  latency   one node replicating continuously (hub-bench latency: NodeReplicator.run in-process
            while visits are saved into its diary) to the live hub: visit close to the hub's
            acknowledgement covering it. The broker runs without use_username_as_clientid here
            (so the observer may log in as the node beside it).
  backlog   3 nodes x 20,000 visits, the hub away (its session subscribed before, and one short
            `replicate` pass per node while it is away), then the hub returns and
            `venue-beacon replicate` runs on all three: time until all three exit 0; broker
            drops from its log and $SYS/broker/publish/messages/dropped.

Usage: hub_bench.py --binary .build/release/venue-beacon --hub-bench Benchmarks/.build/release/hub-bench
                    [--repeats 3] [--only ingest,latency,backlog] [--work DIR]
Prints a summary and writes every figure to WORK/results.json.
"""
import argparse
import json
import os
import random
import shlex
import shutil
import signal
import socket
import statistics
import string
import subprocess
import sys
import threading
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CONF = os.path.join(REPO, "config/mosquitto/venue-beacon.conf")
ACL = os.path.join(REPO, "config/mosquitto/venue-beacon.acl")
NODES = ["hall", "room-2", "kitchen"]
BROKER_CPU = "0"
HUB_CPU = "1"


def log(*parts):
    print(*parts, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_seconds(pid):
    """utime + stime of a live process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Broker:
    def __init__(self, work, name, username_as_clientid=True):
        self.dir = os.path.join(work, name)
        shutil.rmtree(self.dir, ignore_errors=True)
        os.makedirs(self.dir + "/data")
        self.port = free_port()
        self.logins = {login: f"{login}-secret" for login in ["hub", "monitor", *NODES]}
        passwd = self.dir + "/passwd"
        for i, (login, password) in enumerate(self.logins.items()):
            subprocess.run(["mosquitto_passwd", *(["-c"] if i == 0 else []), "-b", passwd, login, password], check=True)
        acl = self.dir + "/venue-beacon.acl"
        with open(ACL) as f, open(acl, "w") as out:
            out.write(f.read() + "\n# hub_bench.py: the benchmark's monitor reads the broker's counters.\nuser monitor\ntopic read $SYS/#\n")
        self.log_path = self.dir + "/mosquitto.log"
        lines = []
        with open(CONF) as f:
            for line in f.read().splitlines():
                if line == "listener 1883":
                    line = f"listener {self.port} 127.0.0.1"
                elif line.startswith("password_file "):
                    line = f"password_file {passwd}"
                elif line.startswith("acl_file "):
                    line = f"acl_file {acl}"
                elif line.startswith("use_username_as_clientid") and not username_as_clientid:
                    line = "# (hub_bench.py) " + line
                lines.append(line)
        lines.append("# hub_bench.py: its own directory and log, and the $SYS counters every second.")
        if os.geteuid() == 0:
            lines.append("user root")
        lines += [f"persistence_location {self.dir}/data/", f"log_dest file {self.log_path}", "log_type error", "log_type warning",
                  "log_type notice", "log_type information", "sys_interval 1"]
        self.conf = self.dir + "/mosquitto.conf"
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.process = None

    def start(self):
        self.process = subprocess.Popen(["taskset", "-c", BROKER_CPU, "mosquitto", "-c", self.conf],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(100):
            if "running" in self.log():
                return self
            time.sleep(0.05)
        raise RuntimeError("mosquitto did not start: " + self.log())

    def stop(self):
        if self.process:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(10)
            self.process = None

    def log(self):
        try:
            with open(self.log_path, errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    @property
    def url(self):
        return f"mqtt://127.0.0.1:{self.port}"

    def client(self, tool, login, *args):
        return [tool, "-h", "127.0.0.1", "-p", str(self.port), "-V", "mqttv5", "-u", login, "-P", self.logins[login], *args]

    def sys_counter(self, topic):
        out = subprocess.run(self.client("mosquitto_sub", "monitor", "-t", topic, "-C", "1", "-W", "5"),
                             capture_output=True, text=True).stdout.strip()
        return int(out) if out.isdigit() else None

    def password_file(self, login):
        path = f"{self.dir}/{login}.pass"
        with open(path, "w") as f:
            f.write(self.logins[login] + "\n")
        return path


class Hub:
    prefix = []  # --hub-prefix: e.g. a profiler (the hub's CPU figures are then the profiler's)

    def __init__(self, binary, broker, store):
        self.binary = binary
        self.config = broker.dir + "/hub.toml"
        with open(self.config, "w") as f:
            f.write(f"""[venue]
country = 826
state = 4
code = 123123
name = "Riverside School"
[diary]
check_out_seconds = 300
recording_days = 21
[hub]
store = "{store}"
broker = "{broker.url}"
password_file = "{broker.password_file('hub')}"
""")
        self.process = None
        self.lines = []

    def start(self, wait=True):
        self.lines = []
        self.process = subprocess.Popen(["taskset", "-c", HUB_CPU, *Hub.prefix, self.binary, "hub", "--config", self.config],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        threading.Thread(target=lambda: [self.lines.append(l) for l in self.process.stderr], daemon=True).start()
        if wait:
            self.wait_ready()
        return self

    def wait_ready(self):
        for _ in range(400):
            if any("hub: subscribed" in l for l in self.lines):
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.025)
        raise RuntimeError("the hub did not subscribe: " + "".join(self.lines))

    def cpu(self):
        return cpu_seconds(self.process.pid)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(15)


def node_config(broker, node, diary):
    path = f"{broker.dir}/{node}.toml"
    with open(path, "w") as f:
        f.write(f"""[venue]
country = 826
state = 4
code = 123123
name = "Riverside School"
[diary]
path = "{diary}"
[replication]
broker = "{broker.url}"
node = "{node}"
password_file = "{broker.password_file(node)}"
""")
    return path


class AckObserver:
    """mosquitto_sub under a node's login on venue-beacon/ack/<node>: (receive time, acked)."""

    def __init__(self, broker, node):
        self.acks = []
        self.process = subprocess.Popen(
            ["taskset", "-c", BROKER_CPU, "stdbuf", "-oL"]
            + broker.client("mosquitto_sub", node, "-i", f"{node}-observer", "-q", "1", "-t", f"venue-beacon/ack/{node}", "-F", "%U %x"),
            stdout=subprocess.PIPE, text=True)
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        for line in self.process.stdout:
            t, hexed = line.split()
            self.acks.append((float(t), int(hexed[-16:], 16)))  # HubAck ends with acked, i64 big-endian

    def last(self):
        return self.acks[-1][1] if self.acks else 0

    def stop(self):
        self.process.terminate()
        self.process.wait(5)


def sqlite_count(store):
    return int(subprocess.run(["sqlite3", "-readonly", store, "SELECT count(*) FROM node_visit"], capture_output=True, text=True,
                              check=True).stdout)


# --- ingest -------------------------------------------------------------------------------------

def make_batches(args, work):
    """3 nodes' batches (once per sitting): {node: info}, files in WORK/batches."""
    out = work + "/batches"
    infos = {}
    shutil.rmtree(out, ignore_errors=True)
    for i, node in enumerate(NODES):
        r = subprocess.run([args.hub_bench, "batches", "--out", out, "--node", node, "--batches", str(args.batches_per_node),
                            "--seed", str(i + 1)], capture_output=True, text=True, check=True)
        infos[node] = json.loads(r.stdout)
        infos[node]["files"] = sorted(os.path.join(out, f) for f in os.listdir(out) if f.startswith(node + "-"))
    return infos


def mosquitto_rate(args, work, size, repeat):
    broker = Broker(work, f"broker-mosq-{repeat}").start()
    topic = "venue-beacon/node/hall/visits"
    rng = random.Random(repeat)
    body = "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(size - 8))
    lines_path = broker.dir + "/lines.txt"

    def write_lines(n):
        with open(lines_path, "w") as f:
            for i in range(n):
                f.write(f"{i:08d}{body}\n")

    result = {"payload_bytes": size}

    def receive(n, persistent):
        """mosquitto_sub on CPU 1 printing each message's receive time (%U): a Popen and its times."""
        sub = subprocess.Popen(["taskset", "-c", HUB_CPU, "stdbuf", "-oL"]
                               + broker.client("mosquitto_sub", "hub", *(["-c"] if persistent else []), "-i", "bench-sub", "-q", "1",
                                               "-t", topic, "-C", str(n), "-F", "%U"), stdout=subprocess.PIPE, text=True)
        times = []
        reader = threading.Thread(target=lambda: times.extend(float(l) for l in sub.stdout), daemon=True)
        reader.start()
        return sub, reader, times

    def rate(times, seconds_extra):
        span = times[-1] - times[0]
        return {"messages": len(times), "span_s": span, "msgs_per_s": (len(times) - 1) / span,
                "bytes_per_s": (len(times) - 1) * size / span, **seconds_extra}

    try:
        # Live: publisher and subscriber at once, N messages; first to last receipt at the subscriber.
        n = args.live_messages
        write_lines(n)
        sub, reader, times = receive(n, persistent=False)
        time.sleep(0.5)
        t0 = time.time()
        with open(lines_path) as f:
            subprocess.run(broker.client("mosquitto_pub", "hall", "-q", "1", "-l", "-t", topic), stdin=f, check=True)
        published = time.time()
        try:
            sub.wait(30)
        except subprocess.TimeoutExpired:
            sub.terminate()
            sub.wait(5)
        reader.join()
        time.sleep(1.2)
        result["live"] = rate(times, {"published": n, "publish_s": published - t0,
                                      "dropped_sys": broker.sys_counter("$SYS/broker/publish/messages/dropped"),
                                      "dropped_log": "Outgoing messages are being dropped" in broker.log()})

        # Drain: a persistent session away, N (<= max_queued_messages) queued, then it returns.
        n = args.drain_messages
        write_lines(n)
        subprocess.run(broker.client("mosquitto_sub", "hub", "-c", "-i", "bench-sub", "-q", "1", "-t", topic, "-E"), check=True)
        with open(lines_path) as f:
            subprocess.run(broker.client("mosquitto_pub", "hall", "-q", "1", "-l", "-t", topic), stdin=f, check=True)
        time.sleep(0.2)
        sub, reader, times = receive(n, persistent=True)
        sub.wait(60)
        reader.join()
        result["drain"] = rate(times, {"published": n})
    finally:
        broker.stop()
    return result


def hub_drain(args, work, batches, repeat):
    broker = Broker(work, f"broker-hub-{repeat}").start()
    store = (args.hub_store_dir or broker.dir) + f"/hub-{repeat}.sqlite"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(store + suffix):
            os.remove(store + suffix)
    hub = Hub(args.binary, broker, store)
    observers = []
    try:
        hub.start()
        hub.stop()  # the hub's session is subscribed; the hub is away
        # Queue every node's batches for it, as the nodes would publish them.
        def publish(node):
            for path in batches[node]["files"]:
                subprocess.run(broker.client("mosquitto_pub", node, "-q", "1", "-t", f"venue-beacon/node/{node}/visits", "-f", path),
                               check=True)
        threads = [threading.Thread(target=publish, args=(node,)) for node in NODES]
        for t in threads: t.start()
        for t in threads: t.join()
        observers = {node: AckObserver(broker, node) for node in NODES}
        time.sleep(0.5)
        spawn = time.time()
        hub.start(wait=False)
        deadline = time.time() + 600
        while time.time() < deadline and any(observers[n].last() < batches[n]["last"] for n in NODES):
            time.sleep(0.01)
        done = time.time()
        cpu = hub.cpu()
        hub.stop()
        acks = sorted(a for n in NODES for a in observers[n].acks)
        visits = sum(batches[n]["visits"] for n in NODES)
        bytes_ = sum(batches[n]["bytes"] for n in NODES)
        count = sqlite_count(store)
        first, last = acks[0][0], acks[-1][0]
        n_batches = sum(batches[n]["batches"] for n in NODES)
        per_batch_visits = visits / n_batches
        per_batch_bytes = bytes_ / n_batches
        # From the first acknowledgement to the last: the batches after the first.
        span = last - first
        return {
            "batches": n_batches, "visits": visits, "bytes": bytes_, "acks_heard": len(acks), "stored": count,
            "complete": all(observers[n].last() == batches[n]["last"] for n in NODES) and count == visits,
            "first_ack_after_spawn": first - spawn, "spawn_to_last_ack": last - spawn, "ack_span": span,
            "visits_per_s": (n_batches - 1) * per_batch_visits / span, "bytes_per_s": (n_batches - 1) * per_batch_bytes / span,
            "batches_per_s": (n_batches - 1) / span, "hub_cpu_s": cpu, "hub_cpu_per_wall": cpu / (done - spawn),
            "dropped_log": "Outgoing messages are being dropped" in broker.log(),
        }
    finally:
        for o in (observers.values() if isinstance(observers, dict) else []):
            o.stop()
        if hub.process and hub.process.poll() is None:
            hub.stop()
        broker.stop()


# --- latency ------------------------------------------------------------------------------------

def latency(args, work, repeat):
    broker = Broker(work, f"broker-lat-{repeat}", username_as_clientid=False).start()
    hub = Hub(args.binary, broker, broker.dir + "/hub.sqlite")
    try:
        hub.start()
        diary = broker.dir + "/hall.sqlite"
        subprocess.run([args.hub_bench, "fill", "--diary", diary, "--visits", "1000", "--seed", str(repeat)], check=True,
                       capture_output=True)
        r = subprocess.run([args.hub_bench, "latency", "--broker", broker.url, "--node", "hall", "--password-file",
                            broker.password_file("hall"), "--diary", diary, "--seconds", str(args.latency_seconds),
                            "--mean-interval", str(args.mean_interval), "--seed", str(repeat)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError("hub-bench latency: " + r.stderr)
        result = json.loads(r.stdout.strip().splitlines()[-1])
        result["hub_cpu_s"] = hub.cpu()
        return result
    finally:
        hub.stop()
        broker.stop()


# --- backlog ------------------------------------------------------------------------------------

def backlog(args, work, templates, repeat):
    broker = Broker(work, f"broker-backlog-{repeat}").start()
    store = broker.dir + "/hub.sqlite"
    hub = Hub(args.binary, broker, store)
    try:
        configs = {}
        for node in NODES:
            diary = f"{broker.dir}/{node}.sqlite"
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(templates[node] + suffix):
                    shutil.copyfile(templates[node] + suffix, diary + suffix)
            configs[node] = node_config(broker, node, diary)
        hub.start()
        hub.stop()  # the hub has run before; now it is away
        away = [subprocess.Popen([args.binary, "replicate", "--config", configs[n], "--timeout", str(args.away_seconds)],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for n in NODES]
        away_codes = [p.wait(120) for p in away]
        mark = len(broker.log())
        spawn = time.time()
        hub.start(wait=False)
        passes = {n: subprocess.Popen([args.binary, "replicate", "--config", configs[n], "--timeout", "300"],
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for n in NODES}
        ends, outputs, codes = {}, {}, {}
        while len(ends) < len(NODES):
            for n, p in passes.items():
                if n not in ends and p.poll() is not None:
                    ends[n] = time.time()
                    codes[n] = p.returncode
                    outputs[n] = p.stdout.read().strip()
            time.sleep(0.01)
        cpu = hub.cpu()
        time.sleep(2.2)  # sys_interval 1: the counter after the drain
        dropped_sys = broker.sys_counter("$SYS/broker/publish/messages/dropped")
        hub.stop()
        after = broker.log()[mark:]
        visits = args.backlog_visits * len(NODES)
        return {
            "visits": visits, "away_exit_codes": away_codes, "exit_codes": codes, "outputs": outputs,
            "drain_s": max(ends.values()) - spawn, "per_node_s": {n: ends[n] - spawn for n in NODES},
            "visits_per_s": visits / (max(ends.values()) - spawn), "hub_cpu_s": cpu, "stored": sqlite_count(store),
            "dropped_log_after_return": after.count("Outgoing messages are being dropped"),
            "dropped_log_while_away": broker.log()[:mark].count("Outgoing messages are being dropped"),
            "sys_publish_messages_dropped": dropped_sys,
        }
    finally:
        if hub.process and hub.process.poll() is None:
            hub.stop()
        broker.stop()


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--binary", default=os.path.join(REPO, ".build/release/venue-beacon"))
    p.add_argument("--hub-bench", default=os.path.join(REPO, "Benchmarks/.build/release/hub-bench"))
    p.add_argument("--built-from", default="", help="what the binaries were built from (recorded in results.json)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--only", default="ingest,latency,backlog")
    p.add_argument("--work", default="/var/tmp/venue-beacon-hub-bench")
    p.add_argument("--batches-per-node", type=int, default=300)
    p.add_argument("--live-messages", type=int, default=10000)
    p.add_argument("--drain-messages", type=int, default=1000)
    p.add_argument("--latency-seconds", type=float, default=60)
    p.add_argument("--mean-interval", type=float, default=0.25)
    p.add_argument("--backlog-visits", type=int, default=20000)
    p.add_argument("--away-seconds", type=int, default=12)
    p.add_argument("--hub-store-dir", default="", help="where the ingest scenario's hub store goes (default: the work directory)")
    p.add_argument("--hub-prefix", default="", help="a command the hub runs under, e.g. 'perf record -g -o FILE --'")
    args = p.parse_args()
    Hub.prefix = shlex.split(args.hub_prefix)
    args.binary = os.path.abspath(args.binary)
    args.hub_bench = os.path.abspath(args.hub_bench)
    work = args.work
    os.makedirs(work, exist_ok=True)
    only = args.only.split(",")
    head = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    model = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    machine = {"nproc": os.cpu_count(), "cpu": model, "date": time.strftime("%Y-%m-%dT%H:%MZ", time.gmtime()), "commit": head,
               "binary": args.binary, "built_from": args.built_from, "load_start": open("/proc/loadavg").read().split()[:3],
               "mosquitto": subprocess.run(["mosquitto", "-h"], capture_output=True, text=True).stdout.splitlines()[0]}
    log("== machine", json.dumps(machine))
    results = {"machine": machine, "args": vars(args), "ingest": [], "latency": [], "backlog": []}

    if "ingest" in only:
        batches = make_batches(args, work)
        size = round(sum(b["bytes"] for b in batches.values()) / sum(b["batches"] for b in batches.values()))
        log(f"== ingest: {sum(b['batches'] for b in batches.values())} batches of 200 visits, {size} bytes each on average")
        # The other reading of "mosquitto's own QoS 1 throughput": one visit a message, the
        # path without the node's batching (a batch's bytes over its 200 visits).
        visit_size = max(16, round(size / 200))
        for k in range(args.repeats):
            mosq = mosquitto_rate(args, work, size, k)
            mosq_visit = mosquitto_rate(args, work, visit_size, k)
            hubr = hub_drain(args, work, batches, k)
            row = {"mosquitto": mosq, "mosquitto_one_visit": mosq_visit, "hub": hubr, "load": open("/proc/loadavg").read().split()[:3],
                   "ratio_bytes_vs_live": hubr["bytes_per_s"] / mosq["live"]["bytes_per_s"],
                   "ratio_bytes_vs_drain": hubr["bytes_per_s"] / mosq["drain"]["bytes_per_s"],
                   "ratio_visits_vs_one_visit_messages": hubr["visits_per_s"] / mosq_visit["live"]["msgs_per_s"]}
            results["ingest"].append(row)
            log(f"  run {k + 1}: mosquitto live {mosq['live']['msgs_per_s']:,.0f} msg/s {mosq['live']['bytes_per_s'] / 1e6:,.1f} MB/s "
                f"({mosq['live']['messages']} of {mosq['live']['published']} received, $SYS dropped {mosq['live']['dropped_sys']}), "
                f"drain {mosq['drain']['msgs_per_s']:,.0f} msg/s {mosq['drain']['bytes_per_s'] / 1e6:,.1f} MB/s | hub "
                f"{hubr['visits_per_s']:,.0f} visits/s {hubr['batches_per_s']:,.1f} batches/s {hubr['bytes_per_s'] / 1e6:,.2f} MB/s "
                f"(cpu/wall {hubr['hub_cpu_per_wall']:.2f}, complete {hubr['complete']}) | hub/live {row['ratio_bytes_vs_live']:.3f} "
                f"hub/drain {row['ratio_bytes_vs_drain']:.3f} | one visit a message: mosquitto {mosq_visit['live']['msgs_per_s']:,.0f} msg/s, "
                f"hub visits/s over it {row['ratio_visits_vs_one_visit_messages']:.2f} | load {row['load']}")

    if "latency" in only:
        log(f"== latency: one node, visits closed every {args.mean_interval} s on average (exponential), {args.latency_seconds} s")
        for k in range(args.repeats):
            r = latency(args, work, k)
            results["latency"].append(r)
            log(f"  run {k + 1}: {json.dumps(r)}")

    if "backlog" in only:
        templates = {}
        for i, node in enumerate(NODES):
            path = f"{work}/template-{node}-{args.backlog_visits}.sqlite"
            if not os.path.exists(path):
                subprocess.run([args.hub_bench, "fill", "--diary", path, "--visits", str(args.backlog_visits), "--seed", str(100 + i)],
                               check=True, capture_output=True)
            templates[node] = path
        log(f"== backlog: {len(NODES)} nodes x {args.backlog_visits} visits, hub away, then back with `replicate` on all three")
        for k in range(args.repeats):
            r = backlog(args, work, templates, k)
            results["backlog"].append(r)
            log(f"  run {k + 1}: drain {r['drain_s']:.2f} s ({r['visits_per_s']:,.0f} visits/s), per node "
                f"{ {n: round(s, 2) for n, s in r['per_node_s'].items()} }, exits {r['exit_codes']} (away {r['away_exit_codes']}), "
                f"stored {r['stored']}, drops after return: log {r['dropped_log_after_return']}, $SYS {r['sys_publish_messages_dropped']}; "
                f"while away: log {r['dropped_log_while_away']}; hub cpu {r['hub_cpu_s']:.2f} s")

    def med(xs):
        return statistics.median(xs) if xs else float("nan")

    log("== medians")
    if results["ingest"]:
        i = results["ingest"]
        log(f"  hub {med([r['hub']['visits_per_s'] for r in i]):,.0f} visits/s, {med([r['hub']['bytes_per_s'] for r in i]) / 1e6:.2f} MB/s; "
            f"mosquitto live {med([r['mosquitto']['live']['bytes_per_s'] for r in i]) / 1e6:.1f} MB/s "
            f"({med([r['mosquitto']['live']['msgs_per_s'] for r in i]):,.0f} msg/s), drain "
            f"{med([r['mosquitto']['drain']['bytes_per_s'] for r in i]) / 1e6:.1f} MB/s; ratio (same run) vs live "
            f"{med([r['ratio_bytes_vs_live'] for r in i]):.3f}, vs drain {med([r['ratio_bytes_vs_drain'] for r in i]):.3f}; "
            f"one visit a message: mosquitto {med([r['mosquitto_one_visit']['live']['msgs_per_s'] for r in i]):,.0f} msg/s, hub visits/s "
            f"over it {med([r['ratio_visits_vs_one_visit_messages'] for r in i]):.2f}")
    if results["latency"]:
        l = results["latency"]
        log(f"  latency p50 {med([r['p50'] for r in l]):.3f} s, p95 {med([r['p95'] for r in l]):.3f} s, max {max(r['max'] for r in l):.3f} s")
    if results["backlog"]:
        b = results["backlog"]
        log(f"  backlog drain {med([r['drain_s'] for r in b]):.2f} s")
    with open(work + "/results.json", "w") as f:
        json.dump(results, f, indent=1)
    log(f"== results in {work}/results.json")


if __name__ == "__main__":
    main()
