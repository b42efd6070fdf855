#!/usr/bin/env python3
"""rmqgw load comparison runner (run it through bench/compare.sh).

Starts Apache RocketMQ 5.4.0's name server and broker as separate JVMs, rmqgw in front of them
(bin/rmqgw start, -Xmx256m) and Apache RocketMQ's proxy 5.4.0 in cluster mode (its remoting port),
then runs each workload against the three targets in turn (direct, gateway, proxy; A B C, B C A, C A B, ...)
with `rmqgw bench` (rocketmq-client 5.4.0, which sends the broker name Apache's proxy needs), and
prints medians and ratios. The first --warmup of every run is left out, and a warm-up round against
every target comes first and is discarded.

Also measured, per run: CPU time of the broker, the gateway, the proxy and the load generator (from
/proc/PID/stat and the child's rusage) per message, and the CPU other processes on the machine used
meanwhile (a shared machine disturbs the figures: look at that column before believing a ratio).
During the 64-thread run the gateway's memory is sampled from its admin port every second.

--only broker-effect (issue 3): the same rocketmq-client 4.9.7 load (JSON headers) through two
gateways, upstream.header-encoding rocketmq and preserve (and directly, for reference); broker CPU
time per 100k messages from /proc/BROKER/stat before and after each run, and the ratio.

--only soak (not part of the default run): one gateway (-Dio.netty.leakDetection.level=advanced, a GC log) under
produce-128b-64t and a push consumer of the same topic at once for --soak-duration (default 10m); its memory
every 10 s, its live heap after a forced full GC (jcmd GC.run) at 1 minute and near the end, and the count of
Netty leak reports ("LEAK:") in its log; a verdict on growth and leaks.

--only virtual-queues (issue 11; not part of the default run): one gateway serving three groups on virtual queues,
each on its own topic of 4 queues; slow consumers (5 ms of work per message, one thread each): 4 direct vs 16 through
the gateway; fast consumers (no work): 4 direct vs 4 through the gateway; end-to-end latency through the gateway vs
direct; the gateway's rmqgw_vq_* counters after every round (vq-metrics.txt).

--only logical-topics (issue 29; not part of the default run): a second cluster (its own name server and broker) and
one gateway in front of both with a logical topic over the two (`logical-topics`); produce-1k-16t (or --workloads'
produce workloads) directly to the first cluster, through the gateway to a topic of the first cluster alone, and
through the gateway to the logical topic, in turn; throughput, p99 and CPU per message of the gateway and each broker.

--coalesce-topics T1,T2: the gateway under test ("gateway") coalesces single sends to these topics
(`coalescing.topics`, the other coalescing keys at their defaults); a baseline gateway (--baseline-home, which
may be this build) never does, so `--targets direct,gateway,baseline --baseline-home .` compares coalescing on,
off and direct side by side; the gateway's rmqgw_coalesce_* counters are saved after the run (coalesce-metrics.txt).

--targets direct,relay,gateway: "relay" is the floor relay (benchmarks' FloorRelay: a TCP forwarder built as rmqgw
is, doing no work on what it forwards), to split the gateway's cost into what any relay costs here and its own.

All output (per-run JSON and logs, server logs, summary.md, summary.json, the gateway profile) goes
to --out (default: a new directory under /tmp); the broker's store is removed at the end unless --keep.
"""

import argparse
import atexit
import glob
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

LOOPBACK = "127.0.0.1"
NAMESRV_PORT = 19876
BROKER_PORT = 10911
PROXY_PORT = 18080
PROXY_GRPC_PORT = 18081
GATEWAY = {"rocketmq": (29876, "21000-21099", 29877), "preserve": (39876, "22000-22099", 39877),
           "baseline": (49876, "23000-23099", 49877)}

DIRECT = f"{LOOPBACK}:{NAMESRV_PORT}"
GW = f"{LOOPBACK}:{GATEWAY['rocketmq'][0]}"
GW_PRESERVE = f"{LOOPBACK}:{GATEWAY['preserve'][0]}"
PROXY = f"{LOOPBACK}:{PROXY_PORT}"
GW_BASE = f"{LOOPBACK}:{GATEWAY['baseline'][0]}"
# "relay": the floor relay (benchmarks' FloorRelay), a TCP forwarder built as rmqgw is that does no work on what it
# forwards; its broker ports have as many digits as the broker's (it routes by replacing addresses in route bytes)
RELAY_NAMESRV_PORT = 59876
RELAY_BROKER_PORTS = {BROKER_PORT: 59911, BROKER_PORT - 2: 59909}  # the broker's port and its VIP channel's
RELAY = f"{LOOPBACK}:{RELAY_NAMESRV_PORT}"
# "baseline": a second rmqgw build (--baseline-home) beside the one under test, same settings
TARGETS = {"direct": DIRECT, "gateway": GW, "proxy": PROXY, "baseline": GW_BASE, "relay": RELAY}

QUEUES = 8
CLK_TCK = os.sysconf("SC_CLK_TCK")

WORKLOADS = {
    "produce-1k-16t": dict(mode="produce", topic="bench_1k", size=1024, args=["--threads", "16"]),
    "produce-128b-64t": dict(mode="produce", topic="bench_128b", size=128, args=["--threads", "64"]),
    "produce-100k-4t": dict(mode="produce", topic="bench_100k", size=102400, args=["--threads", "4"]),
    # one sender: the latency a relay adds to a 100 KiB send on an idle machine, apart from CPU contention
    "produce-100k-1t": dict(mode="produce", topic="bench_100k", size=102400, args=["--threads", "1"]),
    "consume-1k": dict(mode="consume", topic="bench_backlog", size=1024, args=[]),
    "latency-1k-half": dict(mode="latency", topic=None, size=1024, args=["--threads", "64", "--no-e2e"]),
    "e2e-1k-half": dict(mode="latency", topic=None, size=1024, args=["--threads", "64"]),
    # issue 12: sends at a low fixed rate (coalescing adds no delay when nothing is in flight); list bench_128b_low in
    # --coalesce-topics to compare coalescing on (gateway) and off (baseline)
    "latency-128b-low": dict(mode="latency", topic="bench_128b_low", size=128, rate=1000,
                             args=["--threads", "16", "--no-e2e"]),
    # issue 12: one operation = 8 x 1 KiB messages over 4 topics at 200 operations/s: one batch to the gateway's
    # fan-out topic (target gateway) vs one batch send per topic (direct, and through the baseline gateway)
    "fanout-8x4": dict(mode="fanout", topic=None, size=1024, rate=200, args=["--threads", "4", "--batch", "8"]),
}
OPT_IN_WORKLOADS = ("latency-128b-low", "fanout-8x4", "produce-100k-1t")  # run when named
FANOUT_TOPICS = ("bench_fo_a", "bench_fo_b", "bench_fo_c", "bench_fo_d")
FANOUT_TOPIC = "RMQGW_FANOUT"

# --only virtual-queues (issue 11): groups the gateway serves on virtual queues, each on its own topic of VQ_QUEUES
# queues; direct runs read the same topics with new groups (a group listed there is refused any other way through
# the gateway, and direct clients never pass it)
VQ_QUEUES = 4
VQ_SLOW = ("bench_vq_slow", "bench_vq_slow")  # (topic, group): consumers that spend --vq-work per message
VQ_FAST = ("bench_vq_fast", "bench_vq_fast")  # no work: plain throughput
VQ_E2E = ("bench_vq_e2e", "bench_vq_e2e")  # end-to-end latency at --vq-e2e-rate
VQ_GROUPS = (VQ_SLOW, VQ_FAST, VQ_E2E)

SOAK_TOPIC = "bench_soak"
SOAK_SETUP = 100  # messages the soak topic is created with; its consumer (from the first offset) receives them too
SOAK_INTERVAL = 10.0  # seconds between memory samples
SOAK_GC_AT = 60.0  # the first forced GC (the baseline), seconds into the load
SOAK_HEAP_GROWTH = 16 * 1048576  # growth: live heap at the end above the baseline by more than this
SOAK_POOLED_GROWTH = 32 * 1048576  # or pooled direct memory at the end above twice the baseline and above this
SOAK_RULE = ("growth = live heap at the end > live heap at 1 min + 16 MiB, or Netty pooled direct at the end > 2 x its"
             " value at 1 min and > 32 MiB")

# --only logical-topics (issue 29): a second cluster (name server and broker) beside the first; the gateway serves
# LOGICAL_TOPIC over both (logical-topics), bench_1k stays the first cluster's alone
NAMESRV2_PORT = 19976
BROKER2_PORT = 11911
DIRECT2 = f"{LOOPBACK}:{NAMESRV2_PORT}"
LOGICAL_TOPIC = "bench_logical"

SERVICES = []  # started services, stopped in reverse order at exit

# The broker's store may grow this far before it deletes its oldest files: a full run writes well over 100 GiB
# (the 100 KiB runs alone about 10 GiB each), and a broker that reaches its disk limit refuses every send
STORE_BUDGET = 16 << 30



def last_json_line(path):
    """The last run appended to a bench --json-file (JSON Lines: one summary per line)."""
    with open(path) as f:
        lines = [line for line in f.read().splitlines() if line.strip()]
    if not lines:
        raise ValueError(f"{path} is empty")
    return json.loads(lines[-1])

def disk_budget(path, budget):
    """Broker settings that make it delete its oldest commit log files (cleanFileForciblyEnable) once the store's
    disk is `budget` bytes fuller than now, checked every second, as a share of the disk the way RocketMQ 5 measures
    it: used / (used + usable)."""
    st = os.statvfs(path)
    used = (st.f_blocks - st.f_bfree) * st.f_frsize
    usable = st.f_bavail * st.f_frsize
    ratio = max(10, min(85, int(100 * (used + budget) / max(1, used + usable)) + 1))
    return [f"diskMaxUsedSpaceRatio={ratio}", f"diskSpaceCleanForciblyRatio={ratio}", "cleanFileForciblyEnable=true",
            "cleanResourceInterval=1000", "deleteFileBatchMax=64", f"diskSpaceWarningLevelRatio={max(90, ratio + 5)}"]


def log(msg):
    print(time.strftime("%H:%M:%S ") + msg, flush=True)


def seconds(text):
    m = re.fullmatch(r"\s*([0-9.]+)\s*(ms|s|m|h)?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"not a duration: {text}")
    n = float(m.group(1))
    return n * {"ms": 0.001, "s": 1, None: 1, "m": 60, "h": 3600}[m.group(2)]


# ---------------------------------------------------------------------------------------------- processes

def proc_times(pid):
    """(utime, stime) of a process, in clock ticks (None when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            s = f.read()
    except OSError:
        return None
    fields = s[s.rindex(")") + 2:].split()
    return int(fields[11]), int(fields[12])


def proc_ticks(pid):
    """utime + stime of a process, in clock ticks (None when it is gone)."""
    t = proc_times(pid)
    return None if t is None else t[0] + t[1]


def total_busy_ticks():
    with open("/proc/stat") as f:
        cpu = f.readline().split()[1:]
    v = [int(x) for x in cpu]
    # user nice system idle iowait irq softirq steal (guest is inside user)
    return v[0] + v[1] + v[2] + v[5] + v[6] + (v[7] if len(v) > 7 else 0)


def children_cpu_seconds():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def java_pid_under(pid, timeout=15.0):
    """The java process under `timeout` (its child, which may be bin/rmqgw until that execs java)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        found = find_java(pid, 3)
        if found:
            return found
        time.sleep(0.1)
    return None


def find_java(pid, depth):
    try:
        with open(f"/proc/{pid}/comm") as f:
            if f.read().strip() == "java":
                return pid
        if depth == 0:
            return None
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = [int(k) for k in f.read().split()]
    except OSError:
        return None
    for k in kids:
        found = find_java(k, depth - 1)
        if found:
            return found
    return None


# --pin-gateway CPU: the gateways run on that CPU alone, every other process (name server, broker, proxy, load
# generator) on the others; None: no pinning
PIN_GATEWAY = None


# --broker-cpus F: the broker runs in a CPU cgroup of its own limited to F cores (CFS quota); None: no limit
BROKER_CGROUP = None


def in_turn(targets, rnd):
    """The targets of round {rnd}, each round starting one further on (A B C, B C A, C A B, ...): a run leaves the
    machine changed for the next one (the broker's page cache and commit-log files, the disk's writeback), so no
    target always follows the same one."""
    k = (rnd - 1) % len(targets)
    return targets[k:] + targets[:k]


def pinned(name, cmd):
    """{cmd} under taskset when --pin-gateway is set (gateways on their CPU, everything else on the rest), and the
    broker in its CPU-limited cgroup when --broker-cpus is set."""
    if name == "broker" and BROKER_CGROUP:
        # the shell joins the cgroup before it becomes the JVM, so every thread the broker starts is inside
        cmd = ["sh", "-c", f'echo $$ > {BROKER_CGROUP}/cgroup.procs && exec "$@"', "sh"] + cmd
    if PIN_GATEWAY is None:
        return cmd
    others = ",".join(str(c) for c in range(os.cpu_count() or 1) if c != PIN_GATEWAY)
    return ["taskset", "-c", str(PIN_GATEWAY) if name.startswith("gateway") or name == "relay" else others] + cmd


def broker_cgroup(cpus):
    """A CPU cgroup limited to {cpus} cores (cgroup v1's cpu controller, else v2's cpu.max); its path."""
    period = 100_000
    quota = max(1000, int(cpus * period))
    v1 = "/sys/fs/cgroup/cpu"
    if os.path.isfile(os.path.join(v1, "cpu.cfs_quota_us")):
        path = os.path.join(v1, f"rmqgw-bench-broker-{os.getpid()}")
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "cpu.cfs_period_us"), "w") as f:
            f.write(str(period))
        with open(os.path.join(path, "cpu.cfs_quota_us"), "w") as f:
            f.write(str(quota))
        return path
    v2 = "/sys/fs/cgroup"
    with open(os.path.join(v2, "cgroup.controllers")) as f:
        if "cpu" not in f.read().split():
            raise SystemExit("--broker-cpus: no cgroup cpu controller on this machine")
    path = os.path.join(v2, f"rmqgw-bench-broker-{os.getpid()}")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "cpu.max"), "w") as f:
        f.write(f"{quota} {period}")
    return path


class Service:
    def __init__(self, name, cmd, env, logfile, ready, ready_timeout, max_runtime):
        self.name = name
        self.cmd = cmd
        self.env = env
        self.logfile = logfile
        self.ready = ready
        self.ready_timeout = ready_timeout
        self.max_runtime = max_runtime
        self.proc = None
        self.pid = None  # the JVM's pid

    def start(self):
        out = open(self.logfile, "ab")
        cmd = ["timeout", "-k", "20s", f"{int(self.max_runtime)}s"] + pinned(self.name, self.cmd)
        self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     env=self.env, start_new_session=True)
        out.close()
        SERVICES.append(self)
        self.pid = java_pid_under(self.proc.pid)
        deadline = time.time() + self.ready_timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"{self.name} exited with {self.proc.returncode} while starting; see {self.logfile}:\n"
                                 + tail(self.logfile))
            if self.ready(self):
                log(f"{self.name} ready (pid {self.pid}) after {self.ready_timeout - (deadline - time.time()):.1f}s")
                return self
            time.sleep(0.25)
        raise SystemExit(f"{self.name} not ready after {self.ready_timeout}s; see {self.logfile}:\n" + tail(self.logfile))

    def log_contains(self, text):
        try:
            with open(self.logfile, "rb") as f:
                return text.encode() in f.read()
        except OSError:
            return False

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=10)


def tail(path, n=30):
    try:
        with open(path, "rb") as f:
            return b"".join(f.readlines()[-n:]).decode(errors="replace")
    except OSError:
        return ""


def stop_all():
    for s in reversed(SERVICES):
        try:
            s.stop()
        except Exception as e:  # keep stopping the others
            print(f"stopping {s.name}: {e}", file=sys.stderr)
    SERVICES.clear()


def http_ok(url):
    try:
        with urllib.request.urlopen(url, timeout=2) as r:
            return r.status == 200
    except Exception:
        return False


# ---------------------------------------------------------------------------------------------- the cluster

class Bench:
    def __init__(self, a):
        self.a = a
        self.out = a.out
        self.work = os.path.join(self.out, "work")
        self.runs_dir = os.path.join(self.out, "runs")
        os.makedirs(self.runs_dir, exist_ok=True)
        os.makedirs(os.path.join(self.work, "home", "conf"), exist_ok=True)
        with open(os.path.join(HERE, "servers", "target", "servers.classpath")) as f:
            self.servers_cp = f.read().strip()
        with open(os.path.join(HERE, "client-4.9.7", "target", "client.classpath")) as f:
            self.client497_cp = os.path.join(HERE, "client-4.9.7", "target", "classes") + ":" + f.read().strip()
        self.env = dict(os.environ, ROCKETMQ_HOME=os.path.join(self.work, "home"))
        self.env.pop("JAVA_OPTS", None)
        self.services = {}
        self.results = []  # every run's record
        self.deadline = time.time() + a.max_runtime
        self.restarts = []
        self.soak_record = None
        self.vq_metrics = {}

    # -- servers

    def server(self, name, main, conf_args, heap, logback, extra=()):
        home = os.path.join(self.work, name)
        os.makedirs(home, exist_ok=True)
        cmd = ["java", f"-Xms{heap}", f"-Xmx{heap}", "-XX:+UseG1GC", f"-Duser.home={home}",
               f"-Drmq.logback.configurationFile={logback}", f"-Drocketmq.log.root={home}/logs",
               *extra, "-cp", self.servers_cp, main, *conf_args]
        return cmd

    def start_cluster(self):
        w = self.work
        ns_conf = os.path.join(w, "namesrv.conf")
        with open(ns_conf, "w") as f:
            f.write(f"listenPort={NAMESRV_PORT}\nbindAddress={LOOPBACK}\nscanAvailableNameSrv=false\n"
                    f"kvConfigPath={w}/namesrv/kvConfig.json\nconfigStorePath={w}/namesrv/namesrv.properties\n")
        ns = Service("namesrv", self.server("namesrv", "org.apache.rocketmq.namesrv.NamesrvStartup", ["-c", ns_conf],
                                            "256m", "rmq.namesrv.logback.xml"),
                     self.env, os.path.join(self.out, "namesrv.log"),
                     lambda s: s.log_contains("The Name Server boot success"), 60, self.a.max_runtime).start()
        self.services["namesrv"] = ns

        store = os.path.join(w, "broker", "store")
        b_conf = os.path.join(w, "broker.conf")
        with open(b_conf, "w") as f:
            f.write("\n".join([
                "brokerClusterName=DefaultCluster", "brokerName=broker-a", "brokerId=0",
                f"namesrvAddr={DIRECT}", f"listenPort={BROKER_PORT}", f"bindAddress={LOOPBACK}",
                f"brokerIP1={LOOPBACK}", f"brokerIP2={LOOPBACK}", f"haListenPort={BROKER_PORT + 1}",
                f"storePathRootDir={store}", f"storePathCommitLog={store}/commitlog",
                "mappedFileSizeCommitLog=268435456",
                *disk_budget(w, STORE_BUDGET),
                "autoCreateTopicEnable=true", "autoCreateSubscriptionGroup=true", ""]))
        broker = Service("broker", self.server("broker", "org.apache.rocketmq.broker.BrokerStartup", ["-c", b_conf],
                                               "1g", "rmq.broker.logback.xml"),
                         self.env, os.path.join(self.out, "broker.log"),
                         lambda s: s.log_contains("boot success"), 120, self.a.max_runtime).start()
        self.services["broker"] = broker

    def start_second_cluster(self):
        """--only logical-topics: a second name server and broker (cluster Idc2Cluster, broker broker-b)."""
        w = os.path.join(self.work, "idc2")
        os.makedirs(w, exist_ok=True)
        ns_conf = os.path.join(w, "namesrv.conf")
        with open(ns_conf, "w") as f:
            f.write(f"listenPort={NAMESRV2_PORT}\nbindAddress={LOOPBACK}\nscanAvailableNameSrv=false\n"
                    f"kvConfigPath={w}/namesrv/kvConfig.json\nconfigStorePath={w}/namesrv/namesrv.properties\n")
        self.services["namesrv-b"] = Service("namesrv-b", self.server("namesrv-b", "org.apache.rocketmq.namesrv.NamesrvStartup",
                                                                      ["-c", ns_conf], "256m", "rmq.namesrv.logback.xml"),
                                             self.env, os.path.join(self.out, "namesrv-b.log"),
                                             lambda s: s.log_contains("The Name Server boot success"), 60,
                                             self.a.max_runtime).start()
        store = os.path.join(w, "store")
        b_conf = os.path.join(w, "broker.conf")
        with open(b_conf, "w") as f:
            f.write("\n".join([
                "brokerClusterName=Idc2Cluster", "brokerName=broker-b", "brokerId=0",
                f"namesrvAddr={DIRECT2}", f"listenPort={BROKER2_PORT}", f"bindAddress={LOOPBACK}",
                f"brokerIP1={LOOPBACK}", f"brokerIP2={LOOPBACK}", f"haListenPort={BROKER2_PORT + 1}",
                f"storePathRootDir={store}", f"storePathCommitLog={store}/commitlog",
                "mappedFileSizeCommitLog=268435456",
                *disk_budget(w, STORE_BUDGET),
                "autoCreateTopicEnable=true", "autoCreateSubscriptionGroup=true", ""]))
        self.services["broker-b"] = Service("broker-b", self.server("broker-b", "org.apache.rocketmq.broker.BrokerStartup",
                                                                    ["-c", b_conf], "1g", "rmq.broker.logback.xml"),
                                            self.env, os.path.join(self.out, "broker-b.log"),
                                            lambda s: s.log_contains("boot success"), 120, self.a.max_runtime).start()

    def logical_topics(self):
        """--only logical-topics: the same produce load to the first cluster directly, through the gateway to one
        cluster, and through the gateway to the logical topic over both, in turn."""
        a = self.a
        self.setup_topic("bench_1k", 100)
        self.setup_topic(LOGICAL_TOPIC, 100)
        self.setup_topic(LOGICAL_TOPIC, 100, namesrv=DIRECT2)
        runs = [("direct", DIRECT, "bench_1k"), ("gateway", GW, "bench_1k"), ("gateway-logical", GW, LOGICAL_TOPIC)]
        for wl in a.workloads:
            spec = WORKLOADS[wl]
            if spec["mode"] != "produce":
                continue
            for r in range(1, a.rounds + 1):
                for label, namesrv, topic in in_turn(runs, r):
                    self.run(wl, label, namesrv, "produce",
                             ["--topic", topic, "--size", str(spec["size"]), "--duration", f"{a.duration}s",
                              "--warmup", f"{a.warmup}s", *spec["args"]], r)
        with open(os.path.join(a.out, "logical-metrics.txt"), "w") as f:
            f.write("".join(line + "\n" for line in metrics_text(self.services["gateway"]).splitlines()
                            if line.startswith(("rmqgw_cluster_", "rmqgw_broker_weight", "rmqgw_logical_"))))

    def start_proxy(self):
        p_conf = os.path.join(self.work, "proxy.json")
        with open(p_conf, "w") as f:
            json.dump({"rocketMQClusterName": "DefaultCluster", "namesrvAddr": DIRECT, "proxyMode": "cluster",
                       "remotingListenPort": PROXY_PORT, "grpcServerPort": PROXY_GRPC_PORT,
                       "localServeAddr": LOOPBACK, "remotingAccessAddr": LOOPBACK}, f)
        proxy = Service("proxy", self.server("proxy", "org.apache.rocketmq.proxy.ProxyStartup",
                                             ["-pc", p_conf, "-pm", "cluster"], "1g", "rmq.proxy.logback.xml"),
                        self.env, os.path.join(self.out, "proxy.log"),
                        lambda s: s.log_contains("rocketmq-proxy startup successfully"), 120,
                        self.a.max_runtime).start()
        proxy.restart = self.start_proxy
        self.services["proxy"] = proxy

    def start_gateway(self, encoding):
        """The gateway under test with {encoding} headers upstream; "baseline": the --baseline-home build (rocketmq)."""
        listen, ports, admin = GATEWAY[encoding]
        home = self.a.baseline_home if encoding == "baseline" else self.a.rmqgw_home
        header_encoding = "rocketmq" if encoding == "baseline" else encoding
        conf = os.path.join(self.work, f"gateway-{encoding}.yaml")
        with open(conf, "w") as f:
            f.write(f"listen: {LOOPBACK}:{listen}\nbroker-ports: {ports}\n"
                    f"upstream:\n  namesrv: {DIRECT}\n  header-encoding: {header_encoding}\n"
                    f"embedded:\n  enabled: false\n"
                    f"admin:\n  enabled: true\n  listen: {LOOPBACK}:{admin}\n")
            if self.a.only == "virtual-queues" and encoding == "rocketmq":
                lease = f", lease-timeout: {self.a.vq_lease_timeout:g}s" if self.a.vq_lease_timeout else ""
                lease += f", window-size: {self.a.vq_window_size}" if self.a.vq_window_size else ""
                f.write("virtual-queues:\n" + "".join(
                    f"  - {{group: {g}, topic: {t}, per-real-queue: {self.a.vq_per_real_queue}{lease}}}\n"
                    for t, g in VQ_GROUPS))
            if self.a.coalesce_topics and encoding == "rocketmq":
                f.write(f"coalescing:\n  topics: [{self.a.coalesce_topics}]\n")
                if self.a.coalesce_max_in_flight:
                    f.write(f"  max-in-flight: {self.a.coalesce_max_in_flight}\n")
                if self.a.coalesce_max_delay is not None:
                    f.write(f"  max-delay: {self.a.coalesce_max_delay * 1000:g}ms\n")
            if self.a.only == "logical-topics" and encoding == "rocketmq":
                f.write(f"clusters:\n  idc2: {{namesrv: '{DIRECT2}'}}\n"
                        f"logical-topics:\n  - {{topic: {LOGICAL_TOPIC}, clusters: [default, idc2]}}\n")
            if "fanout-8x4" in self.a.workloads and encoding == "rocketmq":
                f.write(f"fanout:\n  enabled: true\n  topic: {FANOUT_TOPIC}\n")
        env = dict(self.env, JAVA_OPTS=f"-Xms256m -Xmx256m -XX:+UseG1GC {self.a.gateway_java_opts}".strip())
        name = {"rocketmq": "gateway", "baseline": "gateway-base"}.get(encoding, f"gateway-{encoding}")
        gw = Service(name, [os.path.join(home, "bin", "rmqgw"), "start", "-c", conf], env,
                     os.path.join(self.out, f"{name}.log"),
                     lambda s: http_ok(f"http://{LOOPBACK}:{admin}/health/ready"), 60, self.a.max_runtime).start()
        gw.admin = f"http://{LOOPBACK}:{admin}"
        gw.restart = lambda: self.start_gateway(encoding)
        self.services[name] = gw
        return gw

    def start_relay(self):
        """The floor relay (target "relay"), with the gateway's JVM options."""
        jar = os.path.join(self.a.rmqgw_home, "benchmarks", "target", "benchmarks.jar")
        if not os.path.isfile(jar):
            raise SystemExit(f"target relay needs {jar}: mvn -q -B -pl benchmarks -am package -DskipTests")
        # the JVM options bin/rmqgw gives the gateway by default, so both run the same Netty
        cmd = ["java", "-Xms256m", "-Xmx256m", "-XX:+UseG1GC", "-Dio.netty.leakDetection.level=disabled",
               "-Dio.netty.recycler.ratio=1"]
        cmd += self.a.gateway_java_opts.split() + ["-cp", jar, "io.rmqgw.benchmarks.FloorRelay",
                                                   "--namesrv", f"{RELAY}={DIRECT}"]
        for port, relay_port in RELAY_BROKER_PORTS.items():
            cmd += ["--broker", f"{LOOPBACK}:{relay_port}={LOOPBACK}:{port}"]
        relay = Service("relay", cmd, self.env, os.path.join(self.out, "relay.log"),
                        lambda s: s.log_contains("floor relay ready"), 60, self.a.max_runtime).start()
        relay.restart = self.start_relay
        self.services["relay"] = relay

    # -- load generator runs

    def bench_cmd(self, client):
        if client == "5.4.0":
            return [os.path.join(self.a.rmqgw_home, "bin", "rmqgw"), "bench"]
        return ["java", "-cp", self.client497_cp, "io.rmqgw.loadgen.BenchMain"]

    def run(self, workload, target, namesrv, mode, args, rnd, client="5.4.0", record=True, sampler=None, limit=None):
        """One load-generator run; returns its record (the bench's JSON plus CPU figures)."""
        if time.time() > self.deadline - 60:
            raise SystemExit("--max-runtime nearly over; stopping before the next run")
        self.ensure_alive()
        self.wait_quiet()
        tag = f"{workload}.r{rnd}.{target}"
        json_path = os.path.join(self.runs_dir, tag + ".jsonl")
        log_path = os.path.join(self.runs_dir, tag + ".log")
        cmd = self.bench_cmd(client) + [mode, "--namesrv", namesrv, "--label", target, "--json-file", json_path,
                                        "--log-dir", os.path.join(self.work, "client-logs", tag)] + args
        limit = int(limit or self.a.warmup + self.a.duration + 240)
        env = dict(self.env, JAVA_OPTS="-Xms512m -Xmx512m")
        watched = {k: s.pid for k, s in self.services.items() if s.pid}
        before = {k: proc_times(p) for k, p in watched.items()}
        busy0 = total_busy_ticks()
        child0 = children_cpu_seconds()
        t0 = time.time()
        if sampler:
            sampler.start()
        with open(log_path, "wb") as lf:
            lf.write((" ".join(cmd) + "\n").encode())
            lf.flush()
            rc = subprocess.call(["timeout", "-k", "10s", f"{limit}s"] + pinned("loadgen", cmd), stdout=lf, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, env=env)
        wall = time.time() - t0
        if sampler:
            sampler.stop()
        loadgen_cpu = children_cpu_seconds() - child0
        busy = (total_busy_ticks() - busy0) / CLK_TCK
        cpu, cpu_sys = {}, {}
        for k, p in watched.items():
            after = proc_times(p)
            if after is not None and before.get(k) is not None:
                cpu[k] = (after[0] + after[1] - before[k][0] - before[k][1]) / CLK_TCK
                cpu_sys[k] = (after[1] - before[k][1]) / CLK_TCK
        own = sum(cpu.values()) + loadgen_cpu
        rec = {"workload": workload, "target": target, "round": rnd, "client": client, "rc": rc, "wall": wall,
               "cpuSeconds": cpu, "cpuSystemSeconds": cpu_sys, "loadgenCpuSeconds": loadgen_cpu, "machineBusySeconds": busy,
               "otherCpuSeconds": max(0.0, busy - own), "log": log_path}
        try:
            rec["bench"] = last_json_line(json_path)
        except (OSError, ValueError):
            rec["bench"] = None
        b = rec["bench"]
        if b:
            msgs = b["ok"] + b["errors"] + b["warmupOk"] + b["warmupErrors"]
            rec["messages"] = msgs
            rec["cpuUsPerMsg"] = {k: v * 1e6 / msgs for k, v in cpu.items()} if msgs else {}
            rec["cpuUsPerMsg"]["loadgen"] = loadgen_cpu * 1e6 / msgs if msgs else None
            lat = b.get("e2eUs") if mode == "latency" else None
            log(f"{tag:36s} rc={rc} tps={b['tps']:9.0f} p50={b['latencyUs']['p50'] / 1000:7.2f}ms "
                f"p99={b['latencyUs']['p99'] / 1000:7.2f}ms errors={b['errors']}"
                + (f" e2e-p99={lat['p99'] / 1000:.2f}ms" if lat else "")
                + f" other-cpu={rec['otherCpuSeconds']:.1f}s")
        else:
            log(f"{tag:36s} rc={rc}: no summary; see {log_path}\n{tail(log_path, 15)}")
        if isinstance(sampler, MemorySampler):
            rec["gatewayMemory"] = sampler.result()
        if record:
            self.results.append(rec)
        self.save()
        return rec

    def ensure_alive(self):
        """A server that died between runs (something outside stopped it) is restarted (gateway, proxy) or ends
        the comparison (name server, broker); restarts are recorded in summary.json."""
        for name, svc in list(self.services.items()):
            if svc.proc.poll() is None:
                continue
            msg = f"{name} (pid {svc.pid}) exited with {svc.proc.returncode} between runs; see {svc.logfile}"
            restart = getattr(svc, "restart", None)
            if restart is None:
                raise SystemExit(msg)
            log(msg + "; restarting it")
            self.restarts.append({"service": name, "at": time.strftime("%H:%M:%S"), "rc": svc.proc.returncode})
            SERVICES.remove(svc)
            restart()

    def wait_quiet(self):
        """With --wait-quiet S: wait up to S seconds for other processes to leave the CPUs (under 20% of one core)."""
        if self.a.wait_quiet <= 0:
            return
        end = time.time() + self.a.wait_quiet
        while True:
            own0 = sum(proc_ticks(s.pid) or 0 for s in self.services.values() if s.pid)
            b0 = total_busy_ticks()
            time.sleep(2)
            own1 = sum(proc_ticks(s.pid) or 0 for s in self.services.values() if s.pid)
            other = ((total_busy_ticks() - b0) - (own1 - own0)) / CLK_TCK / 2
            if other < 0.2 or time.time() > end:
                if other >= 0.2:
                    log(f"machine still busy ({other * 100:.0f}% of a core by other processes); running anyway")
                return

    def save(self):
        with open(os.path.join(self.out, "runs.json"), "w") as f:
            json.dump(self.results, f, indent=1)

    # -- phases

    def create_topics(self):
        for name in ("bench_1k", "bench_128b", "bench_100k", "bench_backlog"):
            self.setup_topic(name, 100)
        if "latency-128b-low" in self.a.workloads:
            self.setup_topic(WORKLOADS["latency-128b-low"]["topic"], 100)
        if "fanout-8x4" in self.a.workloads:
            for name in FANOUT_TOPICS:
                self.setup_topic(name, 100)

    def setup_topic(self, name, count, queues=QUEUES, namesrv=DIRECT):
        """Creates the topic with {queues} queues by sending it {count} messages directly; retried while the broker's
        default topic (TBW102) has no route yet, which a broker only just registered can show for a few seconds."""
        for attempt in range(1, 6):
            rec = self.run("setup", name, namesrv, "produce",
                           ["--topic", name, "--queues", str(queues), "--count", str(count), "--warmup", "0s",
                            "--threads", "4", "--size", "128"], 0, record=False)
            if rec["rc"] == 0 and rec["bench"]:
                return
            time.sleep(3)
        raise SystemExit(f"could not create topic {name}; see the setup logs in {self.runs_dir}")

    def three_way(self):
        a = self.a
        common = ["--warmup", f"{a.warmup}s"]
        if a.warmup_round > 0:
            # large sends take the streaming path (cut-through), which 1 KiB sends never reach: the JIT compiles
            # some 300 methods on a gateway's first 100 KiB run, so that path is warmed up too when measured
            large = any(WORKLOADS[wl]["mode"] == "produce" and WORKLOADS[wl]["size"] >= 32 * 1024 for wl in a.workloads)
            log(f"warm-up round ({a.warmup_round:.0f}s per target{' and size' if large else ''}, discarded)")
            for t in a.targets:
                self.run("warmup", t, TARGETS[t], "produce",
                         ["--topic", "bench_1k", "--size", "1024", "--threads", "16", "--warmup", "0s",
                          "--duration", f"{a.warmup_round}s"], 0, record=False)
                if large:
                    self.run("warmup-large", t, TARGETS[t], "produce",
                             ["--topic", "bench_100k", "--size", "102400", "--threads", "4", "--warmup", "0s",
                              "--duration", f"{a.warmup_round}s"], 0, record=False)
        for wl in a.workloads:
            spec = WORKLOADS[wl]
            if spec["mode"] == "produce":
                for r in range(1, a.rounds + 1):
                    for t in in_turn(a.targets, r):
                        sampler = MemorySampler(self.services["gateway"]) if (t == "gateway" and wl == "produce-128b-64t") else None
                        self.run(wl, t, TARGETS[t], "produce",
                                 ["--topic", spec["topic"], "--size", str(spec["size"]), "--duration", f"{a.duration}s",
                                  *common, *spec["args"]], r, sampler=sampler)
            elif spec["mode"] == "consume":
                log(f"producing a backlog of {a.backlog:,} x 1 KiB on bench_backlog (direct, asynchronous)")
                self.run("backlog", "direct", DIRECT, "produce",
                         ["--topic", "bench_backlog", "--size", "1024", "--count", str(a.backlog), "--warmup", "0s",
                          "--async", "--window", "1024", "--threads", "4", "--retries", "2"], 0, record=False)
                for r in range(1, a.rounds + 1):
                    for t in in_turn(a.targets, r):
                        self.run(wl, t, TARGETS[t], "consume",
                                 ["--topic", "bench_backlog", "--size", "1024", "--count", str(a.backlog),
                                  "--duration", f"{a.duration}s", "--warmup", f"{a.consume_warmup}s",
                                  "--idle-timeout", "60s", "--timeout", "400s"], r, limit=460)
            elif spec["mode"] == "latency":
                rate = spec.get("rate") or a.latency_rate or self.half_direct_rate()
                log(f"{wl}: latency runs at {rate:,.0f} msg/s")
                for r in range(1, a.rounds + 1):
                    for t in in_turn(a.targets, r):
                        # a fixed topic (created with the others) when the workload names one, e.g. to coalesce it
                        topic = spec["topic"] or f"bench_{wl.split('-')[0]}_r{r}_{t}"
                        queues = [] if spec["topic"] else ["--queues", str(QUEUES), "--admin-namesrv", DIRECT]
                        self.run(wl, t, TARGETS[t], "latency",
                                 ["--topic", topic, *queues, "--size", str(spec["size"]), "--rate", f"{rate:.0f}",
                                  "--duration", f"{a.duration}s", *common, *spec["args"]], r)
            elif spec["mode"] == "fanout":
                log(f"{wl}: {spec['rate']} operations/s, each 8 messages over {len(FANOUT_TOPICS)} topics; the gateway "
                    f"gets them as one batch to {FANOUT_TOPIC}, the other targets as one batch send per topic")
                for r in range(1, a.rounds + 1):
                    for t in in_turn(a.targets, r):
                        via = ["--fanout-topic", FANOUT_TOPIC] if t == "gateway" else []
                        self.run(wl, t, TARGETS[t], "produce",
                                 ["--fanout", ",".join(FANOUT_TOPICS), *via, "--size", str(spec["size"]),
                                  "--rate", str(spec["rate"]), "--duration", f"{a.duration}s", *common,
                                  *spec["args"]], r)

    def half_direct_rate(self):
        tps = [r["bench"]["tps"] for r in self.results
               if r["workload"] == "produce-1k-16t" and r["target"] == "direct" and r["bench"]]
        if not tps:
            raise SystemExit("latency needs the direct produce-1k-16t runs (or --latency-rate)")
        return statistics.median(tps) / 2

    def profile(self):
        """A CPU profile of the gateway during one produce workload (--profile-workload, not counted): async-profiler
        (perf events, kernel frames included) when its library loads, else JFR."""
        gw = self.services["gateway"]
        lib = async_profiler_library()
        wl = self.a.profile_workload
        spec = WORKLOADS[wl]
        args = ["--topic", spec["topic"], "--size", str(spec["size"]), *spec["args"], "--warmup", "0s",
                "--duration", f"{self.a.duration}s"]
        if lib and jcmd_ok(gw.pid, "JVMTI.agent_load", lib, '"start,event=cpu,interval=1ms,threads"'):
            log(f"profiling the gateway (async-profiler, cpu, 1 ms) during {wl} for {self.a.duration:.0f}s")
            self.run("profile", "gateway", GW, "produce", args, 0, record=False)
            html = os.path.join(self.out, "gateway-profile.html")
            collapsed = os.path.join(self.out, "gateway-profile.collapsed")
            jcmd_ok(gw.pid, "JVMTI.agent_load", lib, f'"dump,file={html}"')
            jcmd_ok(gw.pid, "JVMTI.agent_load", lib, f'"stop,file={collapsed},collapsed"')
            summary = collapsed_summary(collapsed) if os.path.exists(collapsed) else "no profile written\n"
        else:
            jfr = os.path.join(self.out, "gateway.jfr")
            log(f"profiling the gateway (JFR, settings=profile) during {wl} for {self.a.duration:.0f}s")
            jcmd_ok(gw.pid, "JFR.start", "name=rmqgw-bench", "settings=profile")
            self.run("profile", "gateway", GW, "produce", args, 0, record=False)
            jcmd_ok(gw.pid, "JFR.stop", "name=rmqgw-bench", f"filename={jfr}")
            summary = jfr_summary(jfr) if os.path.exists(jfr) else "no recording written\n"
        with open(os.path.join(self.out, "gateway-profile.txt"), "w") as f:
            f.write(summary)
        log("gateway profile: " + os.path.join(self.out, "gateway-profile.txt"))

    def broker_effect(self):
        a = self.a
        if "gateway-preserve" not in self.services:
            self.start_gateway("preserve")
        targets = [("gw-rocketmq", GW), ("gw-preserve", GW_PRESERVE), ("direct-json", DIRECT)]
        args = ["--topic", "bench_1k", "--size", "1024", "--threads", "16", "--duration", f"{a.duration}s",
                "--warmup", f"{a.warmup}s"]
        log("broker effect: rocketmq-client 4.9.7 (JSON headers), produce-1k-16t; warm-up round first")
        for name, ns in targets:
            self.run("be-warmup", name, ns, "produce",
                     ["--topic", "bench_1k", "--size", "1024", "--threads", "16", "--warmup", "0s",
                      "--duration", f"{max(5, a.warmup_round / 2)}s"], 0, client="4.9.7", record=False)
        for r in range(1, a.rounds + 1):
            for name, ns in targets:
                self.run("broker-effect", name, ns, "produce", args, r, client="4.9.7")

    def virtual_queues(self):
        """--only virtual-queues (issue 11): one gateway serving three groups on virtual queues (--vq-per-real-queue
        per real queue), each on its own topic of VQ_QUEUES queues, against direct consumers of the same topics, in
        the same rounds:
        - slow consumers (--vq-work per message, one consume thread each): --vq-direct-consumers direct (the most that
          can work: one per queue), the same number plus the rest of --vq-consumers direct (the extra ones idle), and
          --vq-consumers through the gateway;
        - fast consumers (no work, 20 threads each): --vq-direct-consumers direct and through the gateway, each round
          draining a fresh backlog of --vq-fast-backlog messages (--vq-fast-start: produced while the settled
          consumers wait, paused, or before they start), after --vq-fast-warm-rounds unrecorded rounds;
        - end-to-end latency at --vq-e2e-rate through the gateway (producer and one consumer) and direct.
        A group served on virtual queues that never committed starts at the end of its queues, so each group is
        started first (a short consumer through the gateway; the gateway keeps consuming after it leaves) and its
        backlogs are produced after that."""
        a = self.a
        gw = self.services["gateway"]
        for topic, _ in VQ_GROUPS:
            self.setup_topic(topic, 100, queues=VQ_QUEUES)
        for topic, group in VQ_GROUPS:
            self.start_vq_group(gw, topic, group)
        slow_topic, slow_group = VQ_SLOW
        fast_topic, fast_group = VQ_FAST
        e2e_topic, e2e_group = VQ_E2E
        work = f"{a.vq_work * 1000:g}ms"
        per_consumer = 1.0 / a.vq_work if a.vq_work > 0 else 0
        # enough for every gateway round at its ideal rate (the direct runs read from the first offset with new groups)
        slow_backlog = a.vq_slow_backlog or int(a.rounds * (a.vq_warmup + a.duration + 15) * a.vq_consumers * per_consumer
                                                 * 1.2)
        if "slow" in a.vq_parts:
            log(f"virtual queues: backlog of {slow_backlog:,} x 1 KiB on {slow_topic} (direct, asynchronous)")
            self.produce_backlog(slow_topic, slow_backlog)
        slow = ["--topic", slow_topic, "--size", "1024", "--threads", "1", "--work", work, "--pull-batch", "32",
                "--duration", f"{a.duration}s", "--warmup", f"{a.vq_warmup}s", "--idle-timeout", "30s"]
        extra = max(0, a.vq_consumers - a.vq_direct_consumers)
        for r in range(1, a.rounds + 1) if "slow" in a.vq_parts else ():
            self.run("vq-slow", "direct", DIRECT, "consume", [*slow, "--clients", str(a.vq_direct_consumers)], r)
            if extra and not a.vq_skip_direct_all:
                self.run("vq-slow", "direct-all", DIRECT, "consume", [*slow, "--clients", str(a.vq_consumers)], r)
            self.run("vq-slow", "gateway-vq", GW, "consume",
                     [*slow, "--clients", str(a.vq_consumers), "--group", slow_group], r)
            self.scrape_vq(gw, f"vq-slow.r{r}")
        fast = ["--topic", fast_topic, "--size", "1024", "--clients", str(a.vq_direct_consumers),
                "--count", str(a.vq_fast_backlog), "--duration", f"{a.duration}s", "--warmup", f"{a.consume_warmup}s",
                "--idle-timeout", "30s"]
        # direct: a long-lived group of its own topic, like the gateway's group (a new group per round would pay a
        # fresh rebalance and start from the first offset every time); started once, it goes on from its commits
        direct_topic, direct_group = f"{fast_topic}_direct", f"{fast_group}_direct"
        if "fast" in a.vq_parts:
            self.setup_topic(direct_topic, 1, queues=VQ_QUEUES)
            self.run("vq-start", direct_group, DIRECT, "consume",
                     ["--topic", direct_topic, "--group", direct_group, "--duration", "2s", "--warmup", "0s",
                      "--idle-timeout", "2s", "--threads", "1"], 0, record=False, limit=60)
        settled = a.vq_fast_start == "settled"
        if settled:
            # the consumers start on an empty backlog and produce it themselves (directly) once settled and paused
            fast[fast.index("--count")] = "--backlog"
            fast += ["--settle-first", "--admin-namesrv", DIRECT]
        fast_rounds = range(1 - a.vq_fast_warm_rounds, a.rounds + 1) if "fast" in a.vq_parts else ()
        for r in fast_rounds:
            if not settled:
                log(f"virtual queues: fresh backlogs of {a.vq_fast_backlog:,} x 1 KiB on {direct_topic} and {fast_topic}")
                self.produce_backlog(direct_topic, a.vq_fast_backlog)
                self.produce_backlog(fast_topic, a.vq_fast_backlog)
            direct_fast = list(fast)
            direct_fast[direct_fast.index("--topic") + 1] = direct_topic
            record = r >= 1
            self.run("vq-fast", "direct", DIRECT, "consume", [*direct_fast, "--group", direct_group], r, record=record)
            # the trace scrapes the gateway's whole /metrics 4 times a second: CPU charged to the gateway alone
            trace = VqTraceSampler(gw, fast_group, os.path.join(self.out, f"vq-fast-trace.r{r}.txt")) \
                if a.vq_trace else None
            self.run("vq-fast", "gateway-vq", GW, "consume", [*fast, "--group", fast_group], r, sampler=trace,
                     record=record)
            self.scrape_vq(gw, f"vq-fast.r{r}")
        e2e = ["--size", "1024", "--rate", f"{a.vq_e2e_rate:g}", "--threads", "16", "--duration", f"{a.duration}s",
               "--warmup", f"{a.warmup}s"]
        for r in range(1, a.rounds + 1) if "e2e" in a.vq_parts else ():
            self.run("vq-e2e", "direct", DIRECT, "latency",
                     ["--topic", f"bench_vq_e2e_r{r}_direct", "--queues", str(VQ_QUEUES), "--admin-namesrv", DIRECT, *e2e],
                     r)
            self.run("vq-e2e", "gateway-vq", GW, "latency", ["--topic", e2e_topic, "--group", e2e_group, *e2e], r)
        self.scrape_vq(gw, "end")

    def produce_backlog(self, topic, count):
        self.run("backlog", "direct", DIRECT, "produce",
                 ["--topic", topic, "--size", "1024", "--count", str(count), "--warmup", "0s", "--async", "--window",
                  "1024", "--threads", "4", "--retries", "2"], 0, record=False, limit=count / 2000 + 300)

    def start_vq_group(self, gw, topic, group):
        """Starts the gateway's consumer of {group} on {topic}: a consumer of the group registers through the gateway
        (a short run that ends by itself; nothing is produced yet) and the gateway then owns the topic's real queues
        (rmqgw_vq_real_queues), from their end for a new group."""
        for attempt in range(1, 4):
            log(f"virtual queues: starting {group} on {topic} through the gateway")
            self.run("vq-start", f"{group}.{attempt}", GW, "consume",
                     ["--topic", topic, "--group", group, "--duration", "2s", "--warmup", "0s", "--idle-timeout", "2s",
                      "--threads", "1"], 0, record=False, limit=60)
            deadline = time.time() + 30
            while time.time() < deadline:
                owned = vq_metric(gw, "rmqgw_vq_real_queues", group)
                if owned is not None and owned >= VQ_QUEUES:
                    log(f"virtual queues: the gateway owns {owned:.0f} real queues of {topic} for {group}")
                    return
                time.sleep(1)
        raise SystemExit(f"the gateway did not start consuming {topic} for {group} in 3 attempts; see {gw.logfile}")

    def scrape_vq(self, gw, tag):
        """The gateway's rmqgw_vq_* series now, into vq-metrics.txt (what the summary's redelivery and invariant
        figures come from)."""
        text = metrics_text(gw)
        self.vq_metrics[tag] = {k: v for k, v in parse_metrics(text).items() if k.startswith("rmqgw_vq_")}
        with open(os.path.join(self.out, "vq-metrics.txt"), "a") as f:
            f.write(f"# {tag} {time.strftime('%H:%M:%S')}\n")
            f.writelines(line + "\n" for line in text.splitlines() if line.startswith("rmqgw_vq_"))

    def soak(self):
        """--only soak: produce-128b-64t and a push consumer of the same topic through one gateway at once for
        --soak-duration; the gateway's memory every 10 s, its live heap after forced full GCs (1 minute in, and
        10 s before the load ends, so that the traffic after it brings out Netty's reports of what it collected),
        leak reports and error counters at the end."""
        a = self.a
        d = a.soak_duration
        gc_log = os.path.join(self.out, "gateway-gc.log")
        a.gateway_java_opts = f"-Dio.netty.leakDetection.level=advanced -Xlog:gc:file={gc_log} {a.gateway_java_opts}".strip()
        gw = self.start_gateway("rocketmq")
        topic = SOAK_TOPIC
        self.setup_topic(topic, SOAK_SETUP)
        spec = WORKLOADS["produce-128b-64t"]
        first = SOAK_GC_AT if a.warmup + d - 10 >= SOAK_GC_AT + 15 else (a.warmup + d) / 2  # a short soak: halfway
        sampler = SoakSampler(gw, gc_log, {"oneMinute": first, "end": max(first + 1, a.warmup + d - 10)})
        tag = "soak-consume.r1.gateway"
        c_json = os.path.join(self.runs_dir, tag + ".jsonl")
        c_log = os.path.join(self.runs_dir, tag + ".log")
        c_cmd = self.bench_cmd("5.4.0") + [
            "consume", "--namesrv", GW, "--label", "gateway", "--json-file", c_json,
            "--log-dir", os.path.join(self.work, "client-logs", tag), "--topic", topic, "--size", "128",
            "--warmup", f"{a.warmup}s", "--duration", f"{d + 60}s", "--idle-timeout", "20s"]
        c_limit = int(a.warmup + d + 300)
        log(f"soak: {d:.0f}s of produce-128b-64t and a push consumer on {topic} through the gateway at once "
            f"(memory every {SOAK_INTERVAL:.0f}s, forced GCs at {sampler.gc_at['oneMinute']:.0f}s and "
            f"{sampler.gc_at['end']:.0f}s)")
        with open(c_log, "wb") as lf:
            lf.write((" ".join(c_cmd) + "\n").encode())
            lf.flush()
            consumer = subprocess.Popen(["timeout", "-k", "10s", f"{c_limit}s"] + c_cmd, stdout=lf, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, env=dict(self.env, JAVA_OPTS="-Xms512m -Xmx512m"),
                                        start_new_session=True)
        try:
            rec = self.run("soak-produce", "gateway", GW, "produce",
                           ["--topic", topic, "--size", str(spec["size"]), "--duration", f"{d}s", "--warmup", f"{a.warmup}s",
                            *spec["args"]], 1, record=False, sampler=sampler, limit=a.warmup + d + 240)
            if "end" not in sampler.gcs:  # the load ended early
                sampler.gcs["end"] = sampler.force_gc("end")
            try:
                consumer.wait(timeout=c_limit + 30)
            except subprocess.TimeoutExpired:
                pass
        finally:
            if consumer.poll() is None:
                try:
                    os.killpg(consumer.pid, signal.SIGTERM)
                    consumer.wait(timeout=20)
                except (ProcessLookupError, subprocess.TimeoutExpired):
                    pass
        sampler.gcs["idle"] = sampler.force_gc("idle")  # after the load: what the gateway keeps when idle
        try:
            received = last_json_line(c_json)
        except (OSError, ValueError):
            received = None
            log(f"soak consumer rc={consumer.returncode}: no summary; see {c_log}\n{tail(c_log, 15)}")
        self.soak_record = soak_record(a, gw, sampler, rec, received, consumer.returncode)
        with open(os.path.join(self.out, "soak-memory.csv"), "w") as f:
            keys = ["t", "heapUsed", "nettyPooledDirect", "nettyPooledHeap", "jvmDirectBuffers", "rss", "gc", "liveHeap"]
            f.write(",".join(keys) + "\n")
            rows = sampler.series + [dict(g, gc=n) for n, g in sampler.gcs.items()]
            for row in sorted(rows, key=lambda r: r["t"]):
                f.write(",".join("" if row.get(k) is None else str(row[k]) for k in keys) + "\n")


# ---------------------------------------------------------------------------------------------- memory

class Sampler:
    """Something sampled on a thread of its own while one run lasts (run(..., sampler=)): start, _loop, stop."""

    def __init__(self):
        self._stop = threading.Event()
        self._thread = None

    def start(self):
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self):
        raise NotImplementedError

    def stop(self):
        self._stop.set()
        if self._thread:
            self._thread.join(5)


class MemorySampler(Sampler):
    """Peaks of the gateway's memory from its admin /metrics (every second) and /proc (VmHWM) during one run."""

    SERIES = {
        "nettyPooledDirect": re.compile(r'^rmqgw_netty_pooled_memory_used_bytes\{[^}]*memory="direct"[^}]*\}\s+(\S+)', re.M),
        "nettyPooledHeap": re.compile(r'^rmqgw_netty_pooled_memory_used_bytes\{[^}]*memory="heap"[^}]*\}\s+(\S+)', re.M),
        "jvmHeapUsed": re.compile(r'^jvm_memory_used_bytes\{[^}]*area="heap"[^}]*\}\s+(\S+)', re.M),
        "jvmDirectBuffers": re.compile(r'^jvm_buffer_memory_used_bytes\{[^}]*id="direct"[^}]*\}\s+(\S+)', re.M),
    }

    def __init__(self, service):
        super().__init__()
        self.service = service
        self.peaks = {}
        self.samples = 0

    def _loop(self):
        while not self._stop.is_set():
            try:
                with urllib.request.urlopen(self.service.admin + "/metrics", timeout=2) as r:
                    text = r.read().decode()
                for k, rx in self.SERIES.items():
                    vals = [float(v) for v in rx.findall(text)]
                    if vals:
                        self.peaks[k] = max(self.peaks.get(k, 0.0), sum(vals))
                self.samples += 1
            except Exception:
                pass
            self._stop.wait(1.0)

    def result(self):
        res = {k: int(v) for k, v in self.peaks.items()}
        res["samples"] = self.samples
        try:
            with open(f"/proc/{self.service.pid}/status") as f:
                for line in f:
                    if line.startswith(("VmHWM", "VmRSS")):
                        k, v = line.split(":")
                        res[k] = int(v.split()[0]) * 1024
        except OSError:
            pass
        try:
            res["heapInfo"] = subprocess.run(["jcmd", str(self.service.pid), "GC.heap_info"], capture_output=True,
                                             text=True, timeout=30).stdout
        except Exception:
            pass
        return res


class VqTraceSampler(Sampler):
    """The gateway's rmqgw_vq_* series of one group every 250 ms during a run, into a file (one block per sample,
    seconds since the start first): what the group's pulls, fetches, starts and refusals did second by second."""

    def __init__(self, gw, group, path):
        super().__init__()
        self.gw, self.group, self.path = gw, group, path

    def _loop(self):
        t0 = time.time()
        with open(self.path, "w") as f:
            while not self._stop.is_set():
                text = metrics_text(self.gw)
                f.write(f"# t={time.time() - t0:.2f}\n")
                f.writelines(line + "\n" for line in text.splitlines()
                             if line.startswith("rmqgw_vq_") and f'group="{self.group}"' in line)
                self._stop.wait(0.25)


class SoakSampler(MemorySampler):
    """The gateway's memory every SOAK_INTERVAL during the soak (admin /metrics, /proc/PID/status), and its live heap
    after a forced full GC (jcmd GC.run) at the given seconds after the start, read from its GC log."""

    FULL_GC = re.compile(r"Pause Full \((.+?)\) (\d+)([KMG])->(\d+)([KMG])\(")
    UNIT = {"K": 1024, "M": 1048576, "G": 1073741824}

    def __init__(self, service, gc_log, gc_at):
        super().__init__(service)
        self.gc_log = gc_log
        self.gc_at = gc_at  # name -> seconds after start
        self.series = []  # a sample every SOAK_INTERVAL
        self.gcs = {}  # name -> the sample right after that forced GC, with liveHeap
        self.t0 = time.time()

    def start(self):
        self.t0 = time.time()
        super().start()

    def _loop(self):
        next_sample = 0.0
        while not self._stop.is_set():
            now = time.time() - self.t0
            for name, at in self.gc_at.items():
                if name not in self.gcs and now >= at:
                    self.gcs[name] = self.force_gc(name)
            if now >= next_sample:
                self.series.append(self.sample())
                next_sample += SOAK_INTERVAL
            due = [next_sample] + [at for name, at in self.gc_at.items() if name not in self.gcs]
            self._stop.wait(max(0.05, min(due) - (time.time() - self.t0)))

    def sample(self):
        row = {"t": round(time.time() - self.t0, 1)}
        try:
            with urllib.request.urlopen(self.service.admin + "/metrics", timeout=2) as r:
                text = r.read().decode()
            for k, rx in self.SERIES.items():
                vals = [float(v) for v in rx.findall(text)]
                if vals:
                    row[k] = int(sum(vals))
                    self.peaks[k] = max(self.peaks.get(k, 0.0), sum(vals))
            self.samples += 1
        except Exception:
            pass
        row["heapUsed"] = row.pop("jvmHeapUsed", None)
        try:
            with open(f"/proc/{self.service.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS"):
                        row["rss"] = int(line.split(":")[1].split()[0]) * 1024
        except OSError:
            pass
        return row

    def full_gcs(self):
        """(heap before, heap after) of every full GC in the GC log so far, in bytes."""
        try:
            with open(self.gc_log) as f:
                text = f.read()
        except OSError:
            return []
        return [(int(m.group(2)) * self.UNIT[m.group(3)], int(m.group(4)) * self.UNIT[m.group(5)])
                for m in self.FULL_GC.finditer(text)]

    def force_gc(self, name):
        before = len(self.full_gcs())
        t = round(time.time() - self.t0, 1)
        ok = jcmd_ok(self.service.pid, "GC.run")
        row = self.sample()
        row["t"] = t
        row["gcOk"] = ok
        deadline = time.time() + 5
        gcs = self.full_gcs()
        while len(gcs) <= before and time.time() < deadline:
            time.sleep(0.1)
            gcs = self.full_gcs()
        if len(gcs) > before:
            row["heapBeforeGc"], row["liveHeap"] = gcs[-1]
        else:  # no GC log line: the heap used right after (an upper bound)
            row["liveHeap"] = row.get("heapUsed")
            row["liveHeapFrom"] = "heap used after jcmd GC.run (no full GC in the GC log)"
        live = row.get("liveHeap")
        log(f"soak: forced GC '{name}' at {t:.0f}s: live heap "
            + (f"{live / 1048576:.1f} MiB" if live is not None else "unknown")
            + (f", Netty pooled direct {row['nettyPooledDirect'] / 1048576:.1f} MiB" if "nettyPooledDirect" in row else ""))
        return row


# ---------------------------------------------------------------------------------------------- profile

def async_profiler_library():
    arch = {"x86_64": "linux-x64", "amd64": "linux-x64", "aarch64": "linux-arm64", "arm64": "linux-arm64"}
    d = arch.get(os.uname().machine.lower())
    lib = os.path.join(HERE, "servers", "target", "async-profiler", d or "-", "libasyncProfiler.so")
    return lib if d and os.path.exists(lib) else None


def jcmd_ok(pid, *args):
    try:
        r = subprocess.run(["jcmd", str(pid), *args], capture_output=True, text=True, timeout=120)
    except Exception:
        return False
    return r.returncode == 0 and "return code: 0" in r.stdout if args[0] == "JVMTI.agent_load" else r.returncode == 0


def collapsed_summary(path, top=30):
    """async-profiler's collapsed stacks (with threads): where the gateway's CPU goes."""
    total = 0
    leaf, incl, threads, kinds, syscalls = {}, {}, {}, {}, {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            stack, _, count = line.rpartition(" ")
            try:
                n = int(count)
            except ValueError:
                continue
            frames = stack.split(";")
            thread = "?"
            if frames and frames[0].startswith("["):
                thread = re.sub(r"\d+", "N", re.sub(r" tid=\d+", "", frames[0].strip("[]")))
                frames = frames[1:]
            if not frames:
                continue
            total += n
            threads[thread] = threads.get(thread, 0) + n
            names = [fr.replace("/", ".") for fr in frames]
            top_frame = names[-1]
            leaf[top_frame] = leaf.get(top_frame, 0) + n
            if top_frame.endswith("_[k]"):
                kind = "kernel"
            elif "." in top_frame and not top_frame.startswith(("G1", "Interpreter")):
                parts = top_frame.split(".")
                kind = "java " + ".".join(parts[:min(3, len(parts) - 2)]) if len(parts) > 2 else "java"
            else:
                kind = "jvm / native"
            kinds[kind] = kinds.get(kind, 0) + n
            for fr in names:
                if fr.startswith("__x64_sys_") or fr.startswith("__arm64_sys_"):
                    sc = fr.split("_sys_", 1)[1].replace("_[k]", "")
                    syscalls[sc] = syscalls.get(sc, 0) + n
                    break
            seen = set()
            for fr in names:
                if (fr.startswith("io.rmqgw") or fr.startswith("io.netty.channel.epoll") or fr.startswith("io.netty.handler")
                        or fr.startswith("io.netty.buffer")) and fr not in seen:
                    seen.add(fr)
                    incl[fr] = incl.get(fr, 0) + n

    def table(title, d, limit=top):
        lines = [f"\n{title}"]
        for k, c in sorted(d.items(), key=lambda kv: -kv[1])[:limit]:
            lines.append(f"  {100.0 * c / max(1, total):5.1f}%  {c:7d}  {k}")
        return "\n".join(lines)

    return (f"{path}: {total} CPU samples (async-profiler, event=cpu, 1 ms)\n"
            + table("Where the samples are (top frame):", kinds, 20)
            + table("System calls (samples with the syscall on the stack):", syscalls, 15)
            + table("Top frames (self):", leaf)
            + table("rmqgw and Netty methods on the stack (inclusive):", incl)
            + table("Threads:", threads, 15) + "\n")


def jfr_summary(path, top=25):
    """Top frames of the gateway's JFR samples: jdk.ExecutionSample (threads in Java code) by self frame, by
    package and by rmqgw method on the stack; jdk.NativeMethodSample (threads in native code: epoll, socket
    reads and writes) by self frame; sampled threads."""
    try:
        raw = subprocess.run(["jfr", "print", "--json", "--events", "jdk.ExecutionSample,jdk.NativeMethodSample", path],
                             capture_output=True, text=True, timeout=600).stdout
        events = json.loads(raw)["recording"]["events"]
    except Exception as e:
        return f"cannot read {path}: {e}\n"
    java = {"self": {}, "pkg": {}, "incl": {}, "threads": {}, "n": 0}
    native = {"self": {}, "pkg": {}, "incl": {}, "threads": {}, "n": 0}
    for ev in events:
        d = native if ev.get("type") == "jdk.NativeMethodSample" else java
        v = ev.get("values", {})
        frames = (v.get("stackTrace") or {}).get("frames") or []
        if not frames:
            continue
        d["n"] += 1
        th = (v.get("sampledThread") or {}).get("javaName") or "?"
        th = re.sub(r"\d+", "N", th)
        d["threads"][th] = d["threads"].get(th, 0) + 1
        names = []
        for fr in frames:
            m = fr.get("method") or {}
            t = (m.get("type") or {}).get("name", "?").replace("/", ".")
            names.append(f"{t}.{m.get('name', '?')}")
        d["self"][names[0]] = d["self"].get(names[0], 0) + 1
        parts = names[0].split(".")
        pk = ".".join(parts[:min(4, len(parts) - 2)]) if len(parts) > 2 else names[0]
        d["pkg"][pk] = d["pkg"].get(pk, 0) + 1
        seen = set()
        for nm in names:
            if nm.startswith("io.rmqgw") and nm not in seen:
                seen.add(nm)
                d["incl"][nm] = d["incl"].get(nm, 0) + 1

    def table(title, dd, n):
        lines = [f"\n{title}"]
        for k, c in sorted(dd.items(), key=lambda kv: -kv[1])[:top]:
            lines.append(f"  {100.0 * c / max(1, n):5.1f}%  {c:6d}  {k}")
        return "\n".join(lines)

    return (f"{path}: {java['n']} execution samples (threads in Java code), "
            f"{native['n']} native method samples (threads in native code)\n"
            + table("Java samples, top frames (self):", java["self"], java["n"])
            + table("Java samples, by package of the top frame:", java["pkg"], java["n"])
            + table("Java samples, rmqgw methods anywhere on the stack (inclusive):", java["incl"], java["n"])
            + table("Java samples, threads:", java["threads"], java["n"])
            + table("Native samples, top frames:", native["self"], native["n"])
            + table("Native samples, threads:", native["threads"], native["n"]) + "\n")


# ---------------------------------------------------------------------------------------------- summary

def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, kind):
    if v is None:
        return "-"
    if kind == "tps":
        return f"{v:,.0f}"
    if kind == "ms":
        return f"{v / 1000:.2f}"
    if kind == "ratio":
        return f"{v:.2f}"
    if kind == "us":
        return f"{v:.0f}"
    return str(v)


def summarize(results, a):
    """Medians per workload and target, ratios; returns (markdown, json-able dict)."""
    by = {}
    for r in results:
        if not r.get("bench"):
            continue
        by.setdefault((r["workload"], r["target"]), []).append(r)
    agg = {}
    for (wl, t), rs in by.items():
        b = [r["bench"] for r in rs]
        e2e = [x.get("e2eUs", {}).get("p99") for x in b if x.get("e2eUs")]
        agg[(wl, t)] = {
            "runs": len(rs),
            "tps": med([x["tps"] for x in b]),
            "tpsAll": [round(x["tps"]) for x in b],
            "p50": med([x["latencyUs"]["p50"] for x in b]),
            "p99": med([x["latencyUs"]["p99"] for x in b]),
            "p99All": [x["latencyUs"]["p99"] for x in b],
            "p999": med([x["latencyUs"]["p999"] for x in b]),
            "e2eP99": med(e2e) if e2e else None,
            "errors": sum(x["errors"] for x in b),
            "otherCpuPct": med([100.0 * r["otherCpuSeconds"] / max(1e-9, r["wall"]) for r in rs]),
            "cpuUsPerMsg": {k: med([r.get("cpuUsPerMsg", {}).get(k) for r in rs])
                            for k in ("broker", "gateway", "proxy", "loadgen", "gateway-preserve", "gateway-base",
                                      "relay")},
            "sysShare": {k: med([r["cpuSystemSeconds"][k] / r["cpuSeconds"][k] for r in rs
                                 if r.get("cpuSystemSeconds", {}).get(k) is not None and r["cpuSeconds"].get(k)])
                         for k in ("broker", "gateway", "proxy")},
        }
    lines = []
    three = [wl for wl in WORKLOADS if any((wl, t) in agg for t in ("direct", "gateway", "proxy"))]
    if three:
        lines.append("| workload | direct TPS | gateway TPS | proxy TPS | gw/direct TPS | gw/proxy TPS "
                     "| direct p99 ms | gateway p99 ms | proxy p99 ms | gw/direct p99 | gw/proxy p99 | errors d/g/p |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for wl in three:
            d, g, p = (agg.get((wl, t)) for t in ("direct", "gateway", "proxy"))
            consume = WORKLOADS[wl]["mode"] == "consume"

            def val(x, k):
                return x[k] if x else None

            def ratio(x, y, k):
                return x[k] / y[k] if x and y and x[k] and y[k] else None

            p99 = (lambda x: None) if consume else (lambda x: val(x, "p99"))
            r99 = (lambda x, y: None) if consume else (lambda x, y: ratio(x, y, "p99"))
            lines.append(f"| {wl} | {fmt(val(d, 'tps'), 'tps')} | {fmt(val(g, 'tps'), 'tps')} | {fmt(val(p, 'tps'), 'tps')} "
                         f"| {fmt(ratio(g, d, 'tps'), 'ratio')} | {fmt(ratio(g, p, 'tps'), 'ratio')} "
                         f"| {fmt(p99(d), 'ms')} | {fmt(p99(g), 'ms')} | {fmt(p99(p), 'ms')} "
                         f"| {fmt(r99(g, d), 'ratio')} | {fmt(r99(g, p), 'ratio')} "
                         f"| {val(d, 'errors')}/{val(g, 'errors')}/{val(p, 'errors')} |")
        lat = [wl for wl in three if WORKLOADS[wl]["mode"] == "latency"]
        for wl in lat:
            d, g, p = (agg.get((wl, t)) for t in ("direct", "gateway", "proxy"))
            if d and g:
                lines.append("")
                lines.append(f"{wl}: added send p50/p99 gateway - direct = {(g['p50'] - d['p50']) / 1000:.2f}/"
                             f"{(g['p99'] - d['p99']) / 1000:.2f} ms"
                             + (f", proxy - direct = {(p['p50'] - d['p50']) / 1000:.2f}/{(p['p99'] - d['p99']) / 1000:.2f} ms"
                                if p else "")
                             + ("; end-to-end p99 (born to receipt, ms resolution) direct/gateway/proxy = "
                                + "/".join(fmt(x["e2eP99"] if x else None, "ms") for x in (d, g, p)) + " ms"
                                if d.get("e2eP99") is not None else ""))
        lines.append("")
        lines.append("CPU per message (median, microseconds; warm-up included; consume: per message received):")
        lines.append("")
        lines.append("| workload | target | broker | gateway | proxy | load generator | kernel share broker/gw/proxy "
                     "| other processes (% of one core) |")
        lines.append("|---|---|---:|---:|---:|---:|---|---:|")
        for wl in three:
            for t in ("direct", "gateway", "proxy"):
                x = agg.get((wl, t))
                if not x:
                    continue
                c = x["cpuUsPerMsg"]
                sh = x["sysShare"]
                share = "/".join(f"{100 * sh[k]:.0f}%" if sh.get(k) is not None and (k == "broker" or k == t) else "-"
                                 for k in ("broker", "gateway", "proxy"))
                lines.append(f"| {wl} | {t} | {fmt(c['broker'], 'us')} | {fmt(c['gateway'], 'us') if t == 'gateway' else '-'} "
                             f"| {fmt(c['proxy'], 'us') if t == 'proxy' else '-'} | {fmt(c['loadgen'], 'us')} "
                             f"| {share} | {x['otherCpuPct']:.0f} |")
        lines.append("")
        lines.append("Every run (TPS; p99 ms):")
        lines.append("")
        for wl in three:
            for t in ("direct", "gateway", "proxy"):
                x = agg.get((wl, t))
                if x:
                    lines.append(f"- {wl} {t}: TPS {x['tpsAll']}; p99 {[round(v / 1000, 2) for v in x['p99All']]}")
    floor = [wl for wl in WORKLOADS if (wl, "relay") in agg]
    if floor:
        lines.append("")
        lines.append("Against the floor relay (a TCP forwarder built as rmqgw is, doing no work on what it forwards): "
                     "TPS medians, CPU per message (us) of the gateway and of the relay, and the broker's:")
        lines.append("")
        lines.append("| workload | direct TPS | relay TPS | gateway TPS | relay/direct | gw/direct | gw/relay "
                     "| CPU us/msg gw / relay | broker us/msg direct / relay / gw | runs TPS direct / relay / gw |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---|---|---|")
        for wl in floor:
            d, r, g = (agg.get((wl, t)) for t in ("direct", "relay", "gateway"))

            def tps(x):
                return x["tps"] if x else None

            def ratio(x, y):
                return fmt(x / y if x is not None and y else None, "ratio")

            def us(x, k):
                v = x["cpuUsPerMsg"].get(k) if x else None
                return "-" if v is None else f"{v:.1f}"

            lines.append(f"| {wl} | {fmt(tps(d), 'tps')} | {fmt(tps(r), 'tps')} | {fmt(tps(g), 'tps')} "
                         f"| {ratio(tps(r), tps(d))} | {ratio(tps(g), tps(d))} | {ratio(tps(g), tps(r))} "
                         f"| {us(g, 'gateway')} / {us(r, 'relay')} | {us(d, 'broker')} / {us(r, 'broker')} / {us(g, 'broker')} "
                         f"| {d['tpsAll'] if d else '-'} / {r['tpsAll']} / {g['tpsAll'] if g else '-'} |")
    two = [wl for wl in WORKLOADS if (wl, "gateway") in agg and (wl, "baseline") in agg]
    if two:
        lines.append("")
        lines.append(f"Two builds side by side: gateway = {a.build}, baseline = {a.baseline_build}")
        lines.append("")
        lines.append("| workload | gateway TPS | baseline TPS | gw/base TPS | p50 ms gw/base | gw/base p50 "
                     "| p99 ms gw/base | gw/base p99 | gateway CPU us/msg gw/base | gw/base CPU | errors gw/base "
                     "| runs TPS gw / base |")
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|")
        for wl in two:
            g, bs = agg[(wl, "gateway")], agg[(wl, "baseline")]
            lat = WORKLOADS[wl]["mode"] != "consume"
            cg, cb = g["cpuUsPerMsg"]["gateway"], bs["cpuUsPerMsg"]["gateway-base"]

            def pair(x, y, kind):
                return f"{fmt(x, kind)}/{fmt(y, kind)}" if lat or kind != "ms" else "-"

            def ratio(x, y):
                return fmt(x / y if x is not None and y else None, "ratio")

            lines.append(f"| {wl} | {fmt(g['tps'], 'tps')} | {fmt(bs['tps'], 'tps')} | {ratio(g['tps'], bs['tps'])} "
                         f"| {pair(g['p50'], bs['p50'], 'ms')} | {ratio(g['p50'], bs['p50']) if lat else '-'} "
                         f"| {pair(g['p99'], bs['p99'], 'ms')} | {ratio(g['p99'], bs['p99']) if lat else '-'} "
                         f"| {'-' if cg is None else f'{cg:.1f}'}/{'-' if cb is None else f'{cb:.1f}'} | {ratio(cg, cb)} "
                         f"| {g['errors']}/{bs['errors']} | {g['tpsAll']} / {bs['tpsAll']} |")
    be = [t for t in ("gw-rocketmq", "gw-preserve", "direct-json") if ("broker-effect", t) in agg]
    if be:
        lines.append("")
        lines.append("Broker effect (rocketmq-client 4.9.7, JSON headers; produce 1 KiB, 16 threads): broker CPU per 100k messages")
        lines.append("")
        lines.append("| target | TPS | broker CPU s / 100k msgs | runs (s / 100k) |")
        lines.append("|---|---:|---:|---|")
        per = {}
        for t in be:
            rs = by[("broker-effect", t)]
            vals = [r["cpuSeconds"].get("broker", 0) * 1e5 / r["messages"] for r in rs if r.get("messages")]
            per[t] = med(vals)
            lines.append(f"| {t} | {fmt(agg[('broker-effect', t)]['tps'], 'tps')} | {per[t]:.2f} | {[round(v, 2) for v in vals]} |")
        if per.get("gw-rocketmq") and per.get("gw-preserve"):
            lines.append("")
            lines.append(f"Ratio rocketmq / preserve = {per['gw-rocketmq'] / per['gw-preserve']:.3f} "
                         f"(broker CPU per message with binary headers relative to JSON headers)")
    mem = [r for r in results if r.get("gatewayMemory")]
    if mem:
        peak = {}
        for r in mem:
            for k, v in r["gatewayMemory"].items():
                if isinstance(v, int):
                    peak[k] = max(peak.get(k, 0), v)
        lines.append("")
        lines.append("Gateway memory during produce-128b-64t (peak over runs, -Xmx256m): "
                     + ", ".join(f"{k} {v / 1048576:.1f} MiB" for k, v in sorted(peak.items()) if k != "samples"))
    md = "\n".join(lines) + "\n"
    return md, {f"{wl}|{t}": v for (wl, t), v in agg.items()}


def logical_summary(results):
    """--only logical-topics: medians per workload and target, ratios to direct and to the gateway on one cluster."""
    by = {}
    for r in results:
        if r.get("bench") and r["target"] in ("direct", "gateway", "gateway-logical"):
            by.setdefault((r["workload"], r["target"]), []).append(r)
    if not by:
        return ""
    lines = ["Logical topic over two clusters vs one cluster (medians; CPU per message in microseconds):", "",
             "| workload | target | TPS | /direct | /gateway one cluster | p99 ms | errors | gateway CPU | broker CPU"
             " | broker-b CPU |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for wl in sorted({w for w, _ in by}):
        m = {t: rs for (w, t), rs in by.items() if w == wl}

        def tps(t):
            return med([r["bench"]["tps"] for r in m[t]]) if t in m else None

        for t in ("direct", "gateway", "gateway-logical"):
            if t not in m:
                continue
            rs = m[t]
            cpu = {k: med([r.get("cpuUsPerMsg", {}).get(k) for r in rs]) for k in ("gateway", "broker", "broker-b")}
            lines.append(f"| {wl} | {t} | {fmt(tps(t), 'tps')} | {fmt(tps(t) / tps('direct') if tps('direct') else None, 'ratio')}"
                         f" | {fmt(tps(t) / tps('gateway') if tps('gateway') else None, 'ratio')}"
                         f" | {fmt(med([r['bench']['latencyUs']['p99'] for r in rs]), 'ms')}"
                         f" | {sum(r['bench']['errors'] for r in rs)}"
                         + "".join(f" | {cpu[k]:.1f}" if cpu[k] is not None else " | -" for k in ("gateway", "broker", "broker-b"))
                         + " |")
    return "\n".join(lines) + "\n"


def metrics_text(gw):
    """The gateway's Prometheus text from its admin port ("" when it does not answer)."""
    try:
        with urllib.request.urlopen(gw.admin + "/metrics", timeout=5) as resp:
            return resp.read().decode()
    except Exception:
        return ""


def parse_metrics(text):
    """{'name{labels}': value} of a Prometheus text."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z_:][A-Za-z0-9_:]*)(\{[^}]*\})?\s+(\S+)", line)
        if m:
            try:
                out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
            except ValueError:
                pass
    return out


def vq_metric(gw, name, group, metrics=None):
    """The sum of the series {name} tagged group="{group}" (None when there is none)."""
    metrics = parse_metrics(metrics_text(gw)) if metrics is None else metrics
    vals = [v for k, v in metrics.items() if k.split("{")[0] == name and f'group="{group}"' in k]
    return sum(vals) if vals else None


def vq_summary(results, vq_metrics, a):
    """The virtual-queue section of summary.md: medians per workload and target, the ratios issue 11 asks for, every
    run, messages per consumer, and what the gateway counted (redeliveries, invariant violations)."""
    by = {}
    for r in results:
        if r["workload"].startswith("vq-") and r.get("bench"):
            by.setdefault((r["workload"], r["target"]), []).append(r["bench"])
    if not by:
        return ""

    def tps(wl, t):
        return med([b["tps"] for b in by.get((wl, t), [])])

    def ratio(x, y):
        return x / y if x is not None and y else None

    lines = [f"Virtual queues (issue 11): topics of {VQ_QUEUES} queues, per-real-queue {a.vq_per_real_queue}, lease-timeout "
             f"{f'{a.vq_lease_timeout:g}s' if a.vq_lease_timeout else 'the gateway default (15s)'}, slow work {a.vq_work * 1000:g} ms, "
             f"rocketmq-client 5.4.0, medians of {a.rounds} rounds", ""]
    lines.append("| workload | target | consumers x threads | median msg/s | runs msg/s | ratio to direct (per round) |")
    lines.append("|---|---|---|---:|---|---|")
    for wl in ("vq-slow", "vq-fast"):
        d = by.get((wl, "direct"), [])
        for t in ("direct", "direct-all", "gateway-vq"):
            bs = by.get((wl, t))
            if not bs:
                continue
            per_round = [ratio(x["tps"], y["tps"]) for x, y in zip(bs, d)] if t != "direct" else []
            lines.append(f"| {wl} | {t} | {bs[0]['clients']} x {bs[0]['threads']} | {fmt(tps(wl, t), 'tps')} "
                         f"| {[round(b['tps']) for b in bs]} | "
                         + (f"**{fmt(ratio(tps(wl, t), tps(wl, 'direct')), 'ratio')}** "
                            f"({', '.join(fmt(x, 'ratio') for x in per_round)})" if t != "direct" else "-") + " |")
    lines.append("")
    for wl in ("vq-slow", "vq-fast"):
        for t in ("direct", "direct-all", "gateway-vq"):
            for i, b in enumerate(by.get((wl, t), []), 1):
                pc = b.get("receivedPerClient") or []
                if pc:
                    lines.append(f"- {wl} {t} r{i}: messages per consumer (from its start until it shut down) {pc}; "
                                 f"{sum(1 for n in pc if n == 0)} of {len(pc)} got none")
    e2e = {t: by.get(("vq-e2e", t), []) for t in ("direct", "gateway-vq")}
    if e2e["direct"] or e2e["gateway-vq"]:
        lines.append("")
        lines.append(f"End to end at {a.vq_e2e_rate:g} msg/s, 1 KiB (born timestamp to receipt, ms resolution; send"
                     " latency as measured by the producer):")
        lines.append("")
        lines.append("| target | e2e p50 ms | e2e p99 ms | e2e max ms | send p50 ms | send p99 ms | received / sent | runs e2e p99 |")
        lines.append("|---|---:|---:|---:|---:|---:|---|---|")
        for t, bs in e2e.items():
            if not bs:
                continue
            ee = [b["e2eUs"] for b in bs if b.get("e2eUs")]
            lines.append(f"| {t} | {fmt(med([x['p50'] for x in ee]), 'ms')} | {fmt(med([x['p99'] for x in ee]), 'ms')} "
                         f"| {fmt(med([x['max'] for x in ee]), 'ms')} | {fmt(med([b['latencyUs']['p50'] for b in bs]), 'ms')} "
                         f"| {fmt(med([b['latencyUs']['p99'] for b in bs]), 'ms')} "
                         f"| {sum(b.get('e2eReceived', 0) for b in bs):,} / {sum(b['ok'] for b in bs):,} "
                         f"| {[round(x['p99'] / 1000, 2) for x in ee]} |")
    end = vq_metrics.get("end") or (list(vq_metrics.values())[-1] if vq_metrics else None)
    if end:
        lines.append("")
        lines.append("The gateway's counters at the end (vq-metrics.txt has them after every round):")
        lines.append("")
        for _, g in VQ_GROUPS:
            def m(name):
                v = vq_metric(None, name, g, end)
                return "-" if v is None else f"{v:,.0f}"

            redeliveries = {k.split('reason="')[1].split('"')[0]: v for k, v in end.items()
                            if k.startswith("rmqgw_vq_redeliveries_total") and f'group="{g}"' in k and v}
            lines.append(f"- {g}: deliveries {m('rmqgw_vq_deliveries_total')}, acknowledged "
                         f"{m('rmqgw_vq_acknowledged_total')}, redeliveries {redeliveries or 0}, dead-lettered "
                         f"{m('rmqgw_vq_dead_lettered_total')}, invariant violations "
                         f"{m('rmqgw_vq_invariant_violations_total')}")
    lines.append("")
    return "\n".join(lines)


def soak_record(a, gw, sampler, produced, received, consumer_rc):
    """The soak's figures (summary.json "soak") from its produce run, its consumer, the sampler and the gateway's log."""
    b = produced.get("bench") if produced else None
    r = {"durationSeconds": a.soak_duration, "warmupSeconds": a.warmup, "topic": SOAK_TOPIC, "queues": QUEUES,
         "gatewayJavaOpts": f"-Xms256m -Xmx256m -XX:+UseG1GC {a.gateway_java_opts}".strip(),
         "produce": {"rc": produced.get("rc"), "log": produced.get("log")} if produced else None,
         "consume": {"rc": consumer_rc}, "rule": SOAK_RULE, "gcAt": sampler.gc_at, "gcs": sampler.gcs,
         "samples": len(sampler.series), "gatewayAlive": gw.proc.poll() is None}
    if b:
        r["produce"].update(sent=b["ok"] + b["warmupOk"], errors=b["errors"] + b["warmupErrors"], tps=b["tps"],
                            warmupErrors=b["warmupErrors"], errorsByReason=b.get("errorsByReason"),
                            p99Ms=b["latencyUs"]["p99"] / 1000)
    if received:
        r["consume"].update(received=max(0, received["ok"] + received["warmupOk"] - SOAK_SETUP),
                            errors=received["errors"] + received["warmupErrors"], tps=received["tps"])
    peaks = {}
    for row in sampler.series + list(sampler.gcs.values()):
        for k in ("heapUsed", "nettyPooledDirect", "nettyPooledHeap", "jvmDirectBuffers", "rss"):
            if row.get(k) is not None:
                peaks[k] = max(peaks.get(k, 0), row[k])
    try:
        with open(f"/proc/{gw.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM"):
                    peaks["VmHWM"] = int(line.split(":")[1].split()[0]) * 1024
    except OSError:
        pass
    r["peaks"] = peaks
    # Netty's leak reports, and what else the gateway logged at WARN or ERROR
    leaks, errors, warns = 0, [], []
    try:
        with open(gw.logfile, errors="replace") as f:
            for line in f:
                if "LEAK:" in line:
                    leaks += 1
                if " ERROR " in line:
                    errors.append(line.strip())
                elif " WARN " in line:
                    warns.append(line.strip())
    except OSError:
        pass
    r["leakReports"] = leaks
    r["logErrors"] = {"count": len(errors), "first": errors[:5]}
    r["logWarnings"] = {"count": len(warns), "first": warns[:5]}
    # the gateway's own error counters: rmqgw_ series named *error*, *closed* or *fail*, and requests answered with an error
    counters = {}
    try:
        with urllib.request.urlopen(gw.admin + "/metrics", timeout=5) as resp:
            text = resp.read().decode()
        with open(os.path.join(a.out, "gateway-metrics-end.txt"), "w") as f:
            f.write(text)
        for line in text.splitlines():
            m = re.match(r"^(rmqgw_[A-Za-z0-9_]+)(\{[^}]*\})?\s+(\S+)", line)
            if m and (re.search(r"error|closed|fail", m.group(1)) or re.search(r"error", m.group(2) or "", re.I)):
                counters[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    except Exception as e:
        counters = {"unavailable": str(e)}
    r["errorCounters"] = counters
    one, end = sampler.gcs.get("oneMinute", {}), sampler.gcs.get("end", {})
    problems = []
    if one.get("liveHeap") is None or end.get("liveHeap") is None:
        problems.append("live heap not measured (see gcs in summary.json)")
    elif end["liveHeap"] > one["liveHeap"] + SOAK_HEAP_GROWTH:
        problems.append(f"live heap grew by {(end['liveHeap'] - one['liveHeap']) / 1048576:.1f} MiB")
    pd1, pd2 = one.get("nettyPooledDirect"), end.get("nettyPooledDirect")
    if pd1 is not None and pd2 is not None and pd2 > 2 * pd1 and pd2 > SOAK_POOLED_GROWTH:
        problems.append(f"Netty pooled direct grew from {pd1 / 1048576:.1f} to {pd2 / 1048576:.1f} MiB")
    if leaks:
        problems.append(f"{leaks} leak report{'s' if leaks > 1 else ''}")
    if not r["gatewayAlive"]:
        problems.append(f"the gateway exited (rc {gw.proc.returncode})")
    r["verdict"] = "no growth and no leak reports" if not problems else "; ".join(problems)
    return r


def soak_summary(r):
    """The soak section of summary.md."""
    def mib(v):
        return "-" if v is None else f"{v / 1048576:.1f} MiB"

    p, c, g, pk = r.get("produce") or {}, r.get("consume") or {}, r["gcs"], r["peaks"]
    one, end, idle = g.get("oneMinute", {}), g.get("end", {}), g.get("idle", {})
    diff = (end["liveHeap"] - one["liveHeap"]) if one.get("liveHeap") is not None and end.get("liveHeap") is not None else None
    nonzero = {k: v for k, v in r["errorCounters"].items() if not isinstance(v, float) or v}
    send_errors = (f" ({p['warmupErrors']} in the warm-up)" if p.get("warmupErrors") else "") \
        + (f" {p['errorsByReason']}" if p.get("errorsByReason") else "")
    lines = [
        f"Soak: {r['durationSeconds']:.0f} s through the gateway ({r['gatewayJavaOpts']}): produce-128b-64t and a push "
        f"consumer of the same topic ({r['topic']}, {r['queues']} queues) at once",
        "",
        f"- messages: {p.get('sent', 0):,} sent ({fmt(p.get('tps'), 'tps')} msg/s after the {r['warmupSeconds']:.0f} s warm-up, "
        f"p99 {p['p99Ms']:.2f} ms), "
        + (f"{c['received']:,} received ({fmt(c.get('tps'), 'tps')} msg/s; the topic's {SOAK_SETUP} setup messages not"
           " counted)" if "received" in c else "no consumer summary")
        + f"; errors: {p.get('errors', '-')} send{send_errors}, {c.get('errors', '-')} receive; load generator rc "
        f"{p.get('rc')}/{c.get('rc')}" if "p99Ms" in p else
        f"- messages: no produce summary (rc {p.get('rc')}; see {p.get('log')})",
        f"- live heap after a forced full GC (jcmd GC.run, under load; GC log, 1 MiB resolution): at 1 min ({one.get('t', '-')} s) "
        f"{mib(one.get('liveHeap'))}, at the end ({end.get('t', '-')} s) {mib(end.get('liveHeap'))}, difference "
        + ("-" if diff is None else f"{diff / 1048576:+.1f} MiB") + f"; after the load (idle) {mib(idle.get('liveHeap'))}",
        f"- Netty pooled direct at those GCs: {mib(one.get('nettyPooledDirect'))}, {mib(end.get('nettyPooledDirect'))}, "
        f"idle {mib(idle.get('nettyPooledDirect'))}",
        f"- peaks ({r['samples']} samples every {SOAK_INTERVAL:.0f} s): heap used {mib(pk.get('heapUsed'))}, Netty pooled direct "
        f"{mib(pk.get('nettyPooledDirect'))}, Netty pooled heap {mib(pk.get('nettyPooledHeap'))}, JVM direct buffers "
        f"{mib(pk.get('jvmDirectBuffers'))}, RSS {mib(pk.get('rss'))} (VmHWM {mib(pk.get('VmHWM'))})",
        f"- leak reports (\"LEAK:\" in the gateway's log): {r['leakReports']}; gateway log: {r['logErrors']['count']} ERROR, "
        f"{r['logWarnings']['count']} WARN lines",
        "- gateway error counters (rmqgw_ series named *error*, *closed*, *fail*, or with an error result): "
        + (", ".join(f"{k} {v:g}" if isinstance(v, float) else f"{k}: {v}" for k, v in sorted(nonzero.items()))
           if nonzero else f"all zero ({len(r['errorCounters'])} series; decode errors and closed connections are exported"
                           " from their first count on)")
        + "; all metrics at the end: gateway-metrics-end.txt",
        f"- rule: {r['rule']}",
        f"- verdict: {r['verdict']}",
    ]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------- main

def machine():
    info = {}
    try:
        info["nproc"] = os.cpu_count()
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        info["memTotal"] = open("/proc/meminfo").readline().split(":")[1].strip()
        info["java"] = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
        info["kernel"] = os.uname().release
        info["loadavgStart"] = open("/proc/loadavg").read().strip()
    except Exception:
        pass
    return info


def describe_build(home):
    """The commit of the rmqgw build under test, and whether its work tree differs from it."""
    try:
        commit = subprocess.run(["git", "-C", home, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                timeout=10).stdout.strip()
        if not commit:
            return "unknown (not a git checkout)"
        dirty = subprocess.run(["git", "-C", home, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
        return commit + (" with uncommitted changes" if dirty else "")
    except Exception:
        return "unknown"


def main():
    p = argparse.ArgumentParser(prog="bench/compare.sh", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--duration", type=seconds, default=20.0, help="measured seconds per run (default 20s)")
    p.add_argument("--warmup", type=seconds, default=5.0, help="warm-up of each run, left out (default 5s)")
    p.add_argument("--warmup-round", type=seconds, default=15.0,
                   help="a discarded produce run per target before the rounds (default 15s; 0: none)")
    p.add_argument("--rounds", type=int, default=3, help="rounds of the targets, each starting one further on: A B C, B C A, ... (default 3)")
    p.add_argument("--workloads", default=",".join(w for w in WORKLOADS if w not in OPT_IN_WORKLOADS),
                   help="comma-separated, from: " + ", ".join(WORKLOADS) + " (default all but "
                        + ", ".join(OPT_IN_WORKLOADS) + ")")
    p.add_argument("--targets", default="direct,gateway,proxy", help="default direct,gateway,proxy")
    p.add_argument("--broker-cpus", type=float, default=None, metavar="CORES",
                   help="limit the broker to CORES of CPU time (a cgroup's CFS quota, e.g. 0.3; needs root): a"
                        " broker-bound deployment, where the broker and not the clients is the bottleneck")
    p.add_argument("--pin-gateway", type=int, default=None, metavar="CPU",
                   help="run the gateways on this CPU alone and every other process on the other CPUs (taskset): the "
                        "gateway as a sidecar with a core of its own; direct runs then have one core fewer")
    p.add_argument("--coalesce-max-in-flight", type=int, default=0,
                   help="coalescing.max-in-flight of the gateway under test (default: the gateway's)")
    p.add_argument("--coalesce-max-delay", type=seconds, default=None,
                   help="coalescing.max-delay of the gateway under test, e.g. 0ms: how long a send to an idle, busy queue"
                        " waits for company (default: the gateway's, 1ms)")
    p.add_argument("--coalesce-topics", default="",
                   help="comma-separated topics the gateway under test coalesces sends to (the baseline gateway never)")
    p.add_argument("--only", choices=["three-way", "broker-effect", "soak", "virtual-queues", "logical-topics"],
                   help="run one part only (default both three-way and broker-effect; soak and virtual-queues run only"
                        " when asked for)")
    p.add_argument("--vq-work", type=seconds, default=0.005,
                   help="--only virtual-queues: work per message of the slow consumers (default 5ms)")
    p.add_argument("--vq-consumers", type=int, default=16,
                   help="--only virtual-queues: slow consumers through the gateway (default 16)")
    p.add_argument("--vq-direct-consumers", type=int, default=VQ_QUEUES,
                   help=f"--only virtual-queues: consumers direct, and fast consumers on both (default {VQ_QUEUES})")
    p.add_argument("--vq-per-real-queue", type=int, default=4,
                   help="--only virtual-queues: the groups' per-real-queue (default 4)")
    p.add_argument("--vq-lease-timeout", type=seconds, default=0.0,
                   help="--only virtual-queues: the groups' lease-timeout (default: the gateway's, 15s)")
    p.add_argument("--vq-warmup", type=seconds, default=10.0,
                   help="--only virtual-queues: warm-up of the slow runs, from the first message (default 10s)")
    p.add_argument("--vq-slow-backlog", type=int, default=0,
                   help="--only virtual-queues: the slow topic's backlog (default: what every gateway round needs at"
                        " its ideal rate, +20%%)")
    p.add_argument("--vq-window-size", type=int, default=0,
                   help="--only virtual-queues: the groups' window-size (default: the gateway's)")
    p.add_argument("--vq-parts", default="slow,fast,e2e",
                   help="--only virtual-queues: which parts run, from slow, fast, e2e (default all)")
    p.add_argument("--vq-fast-backlog", type=int, default=300_000,
                   help="--only virtual-queues: the fresh backlog of each fast round (default 300000)")
    p.add_argument("--vq-fast-start", choices=("settled", "cold"), default="settled",
                   help="--only virtual-queues: how a fast round starts: settled (default: the consumers start first,"
                        " wait, paused, until their rebalance settled and the backlog was produced, then drain it: the"
                        " steady state of a running group) or cold (the backlog first, then the consumers start on it)")
    p.add_argument("--vq-fast-warm-rounds", type=int, default=1,
                   help="--only virtual-queues: unrecorded fast rounds of each target first (default 1: the gateway's"
                        " and broker's JIT warm, as in a running deployment)")
    p.add_argument("--vq-trace", action="store_true",
                   help="--only virtual-queues: record the fast group's rmqgw_vq_* series every 250 ms during the gateway's"
                        " fast rounds (vq-fast-trace.rN.txt); off by default: each scrape of the whole /metrics costs the"
                        " gateway CPU that direct runs do not pay")
    p.add_argument("--vq-e2e-rate", type=float, default=2000.0,
                   help="--only virtual-queues: sends per second of the end-to-end runs (default 2000)")
    p.add_argument("--vq-skip-direct-all", action="store_true",
                   help="--only virtual-queues: leave out the slow run with all --vq-consumers direct")
    p.add_argument("--soak-duration", type=seconds, default=600.0,
                   help="--only soak: length of the soak's load (default 10m)")
    p.add_argument("--backlog", type=int, default=1_000_000,
                   help="messages of the consume backlog (default 1000000, 1 GiB); each consume run drains it with a new"
                        " group from the first offset, ending when all arrived or after --duration")
    p.add_argument("--consume-warmup", type=seconds, default=1.0,
                   help="warm-up of consume runs, counted from the first message (default 1s)")
    p.add_argument("--latency-rate", type=float, default=0.0,
                   help="rate of the latency runs (default: half the direct produce-1k-16t median)")
    p.add_argument("--no-profile", action="store_true", help="skip the profile of the gateway")
    p.add_argument("--profile-workload", default="produce-1k-16t",
                   choices=[w for w, spec in WORKLOADS.items() if spec["mode"] == "produce"],
                   help="the produce workload the gateway is profiled under (default produce-1k-16t)")
    p.add_argument("--wait-quiet", type=seconds, default=0.0,
                   help="before each run wait up to this long for other processes to leave the CPUs (default 0)")
    p.add_argument("--gateway-java-opts", default="", help="extra JVM options for the gateway")
    p.add_argument("--out", default=None, help="output directory (default: a new one under /tmp)")
    p.add_argument("--keep", action="store_true", help="keep the broker's store and client logs")
    p.add_argument("--max-runtime", type=seconds, default=3 * 3600.0,
                   help="hard limit: every process started is killed after this (default 3h)")
    p.add_argument("--rmqgw-home", default=ROOT, help=argparse.SUPPRESS)
    p.add_argument("--baseline-home", default=None,
                   help="another rmqgw checkout, built (mvn install -DskipTests): target 'baseline' runs it beside"
                        " this one, same settings, in the same rounds")
    a = p.parse_args()
    if a.pin_gateway is not None:
        if not 0 <= a.pin_gateway < (os.cpu_count() or 1) or (os.cpu_count() or 1) < 2:
            p.error(f"--pin-gateway: a CPU of 0..{(os.cpu_count() or 1) - 1}, on a machine with at least 2")
        global PIN_GATEWAY
        PIN_GATEWAY = a.pin_gateway
    if a.broker_cpus is not None:
        if not 0.01 <= a.broker_cpus <= (os.cpu_count() or 1):
            p.error(f"--broker-cpus: between 0.01 and {os.cpu_count() or 1}")
        global BROKER_CGROUP
        BROKER_CGROUP = broker_cgroup(a.broker_cpus)
    a.workloads = [w.strip() for w in a.workloads.split(",") if w.strip()]
    a.vq_parts = {x.strip() for x in a.vq_parts.split(",") if x.strip()}
    if not a.vq_parts or not a.vq_parts <= {"slow", "fast", "e2e"}:
        p.error("--vq-parts: a comma-separated choice of slow, fast, e2e")
    for w in a.workloads:
        if w not in WORKLOADS:
            p.error(f"unknown workload {w}")
    a.targets = [t.strip() for t in a.targets.split(",") if t.strip()]
    for t in a.targets:
        if t not in TARGETS:
            p.error(f"unknown target {t}")
    if a.rounds < 1:
        p.error("--rounds must be at least 1")
    if ("baseline" in a.targets) != bool(a.baseline_home):
        p.error("target 'baseline' and --baseline-home go together")
    if a.baseline_home:
        a.baseline_home = os.path.abspath(a.baseline_home)
        if not glob.glob(os.path.join(a.baseline_home, "cli", "target", "rmqgw-cli-*.jar")):
            p.error(f"--baseline-home {a.baseline_home} is not built: (cd {a.baseline_home} && mvn -q -B install -DskipTests)")
    a.build = describe_build(a.rmqgw_home)
    a.baseline_build = describe_build(a.baseline_home) if a.baseline_home else None
    a.out = os.path.abspath(a.out or tempfile.mkdtemp(prefix="rmqgw-compare-"))
    os.makedirs(a.out, exist_ok=True)

    def on_signal(signum, frame):
        raise SystemExit(f"signal {signum}")

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    atexit.register(stop_all)

    info = machine()
    info["args"] = {k: v for k, v in vars(a).items()}
    info["rmqgwBuild"] = a.build
    info["baselineBuild"] = a.baseline_build
    info["networkNamespace"] = bool(os.environ.get("RMQGW_BENCH_IN_NETNS"))
    log(f"output: {a.out}")
    log(f"machine: {info.get('nproc')} x {info.get('cpu')}, {info.get('java')}, load {info.get('loadavgStart')}")
    b = Bench(a)
    started = time.time()
    try:
        b.start_cluster()
        three = a.only in (None, "three-way")
        effect = a.only in (None, "broker-effect")
        if three and "gateway" in a.targets or effect:
            b.start_gateway("rocketmq")
        if three and "baseline" in a.targets:
            b.start_gateway("baseline")
        if three and "proxy" in a.targets:
            b.start_proxy()
        if three and "relay" in a.targets:
            b.start_relay()
        if three or effect:
            b.create_topics()
        if a.only == "soak":
            b.soak()
        if a.only == "virtual-queues":
            b.start_gateway("rocketmq")
            b.virtual_queues()
        if a.only == "logical-topics":
            b.start_second_cluster()
            b.start_gateway("rocketmq")
            b.logical_topics()
        if three:
            b.three_way()
            if a.coalesce_topics and "gateway" in b.services:
                with open(os.path.join(a.out, "coalesce-metrics.txt"), "w") as f:
                    f.write("".join(line + "\n" for line in metrics_text(b.services["gateway"]).splitlines()
                                    if line.startswith("rmqgw_coalesce_")))
            if not a.no_profile and "gateway" in a.targets:
                b.profile()
        if effect:
            b.broker_effect()
    finally:
        info["seconds"] = time.time() - started
        info["loadavgEnd"] = open("/proc/loadavg").read().strip()
        md, agg = summarize(b.results, a)
        if b.soak_record:
            md = (md + "\n" if md.strip() else "") + soak_summary(b.soak_record)
        vq = vq_summary(b.results, b.vq_metrics, a)
        if vq:
            md = (md + "\n" if md.strip() else "") + vq
        lt = logical_summary(b.results) if a.only == "logical-topics" else ""
        if lt:
            md = (md + "\n" if md.strip() else "") + lt
        with open(os.path.join(a.out, "summary.md"), "w") as f:
            f.write(md)
        with open(os.path.join(a.out, "summary.json"), "w") as f:
            json.dump({"machine": info, "restarts": b.restarts, "medians": agg,
                       **({"soak": b.soak_record} if b.soak_record else {})}, f, indent=1, default=str)
        stop_all()
        if BROKER_CGROUP:
            try:
                os.rmdir(BROKER_CGROUP)
            except OSError as e:
                log(f"the broker's cgroup {BROKER_CGROUP} stays: {e}")
        if not a.keep:
            shutil.rmtree(os.path.join(b.work, "broker", "store"), ignore_errors=True)
            shutil.rmtree(os.path.join(b.work, "client-logs"), ignore_errors=True)
        print()
        print(md)
        log(f"done in {info['seconds'] / 60:.1f} min; results in {a.out}")


if __name__ == "__main__":
    main()
