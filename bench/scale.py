"""Driver for bench/scale.sh (issue 16: cost flat in the number of panes).

    python3 bench/scale.py SECS N1,N2,... name=/path/to/agentwatch [name2=/path/to/agentwatch ...]

FAKE=/path/to/fake_agent (default target/release/examples/fake_agent); KEEP=1 keeps the temp
dirs (journals, daemon logs) and prints where they are; SESSIONS=1 puts each agent in a session
of its own instead of N windows of one session; UI=1 measures the dashboard (160x45) instead of
the daemon.

For each N and each build: a fresh private tmux server (socket in a temp dir, -f /dev/null)
with N windows running the fake agent as `claude` (plan `hang`), no remain-on-exit set by us,
and `agentwatch daemon` on it with fresh XDG/HOME/TMUX_TMPDIR dirs. Measured: settle (until
agentwatch has set remain-on-exit on every pane), steady CPU of agentwatch, of its child
processes and of the tmux server over SECS s, tmux processes it starts, deaths (SIGKILL at
random moments, latency from the journal's `died` events), a burst of deaths at once, RSS.
Kills only processes it started, only its own servers; never the default tmux server.
"""
import json, os, random, resource, shutil, signal, subprocess, sys, tempfile, time

TCK = os.sysconf("SC_CLK_TCK")
REAL_TMUX = shutil.which("tmux")
ROOT = os.getcwd()
FAKE = os.path.abspath(os.environ.get("FAKE", f"{ROOT}/target/release/examples/fake_agent"))
KEEP = os.environ.get("KEEP") == "1"
SETTLE_CAP = 120.0
DEATHS = 10          # panes killed one at a time (fewer when N is small: at most N // 2)
DEATH_SPAN = 10.0    # ... at random moments over this many seconds
BURST_MAX = 100      # then 10% of the remaining panes at once, at most this many
BURST_WAIT = 5.0
IDLE_SECS = 5.0
BATCH = 50           # new-window commands per tmux invocation
# SESSIONS=1: each agent in a session of its own (as tools that start one session per agent
# do), instead of N windows in one session.
SESSIONS = os.environ.get("SESSIONS") == "1"
# UI=1: the dashboard (in a 160x45 pane of a private server of its own) instead of the daemon.
UI = os.environ.get("UI") == "1"


class Dashboard:
    """agentwatch's dashboard in a pane of a private tmux server, looked at like a process."""

    def __init__(self, d, aw, sock, cfg, env):
        self.ui = f"{d}/ui.sock"
        self.env = env
        subprocess.run([REAL_TMUX, "-S", self.ui, "-f", "/dev/null", "new-session", "-d", "-x", "160", "-y", "45",
                        f"exec '{aw}' -S '{sock}' -c '{cfg}'"], env=env, check=True)
        self.pid = int(subprocess.run([REAL_TMUX, "-S", self.ui, "display-message", "-p", "#{pane_pid}"], env=env,
                                      capture_output=True, text=True, check=True).stdout.strip())
        self.returncode = None

    def poll(self):
        if self.returncode is None and not os.path.exists(f"/proc/{self.pid}"):
            self.returncode = 0
        return self.returncode

    def send_signal(self, _sig):
        subprocess.run([REAL_TMUX, "-S", self.ui, "send-keys", "q"], env=self.env, capture_output=True)

    def wait(self, timeout=None):
        end = time.time() + (timeout or 15)
        while self.poll() is None:
            if time.time() > end:
                raise subprocess.TimeoutExpired("agentwatch", timeout)
            time.sleep(0.1)
        subprocess.run([REAL_TMUX, "-S", self.ui, "kill-server"], env=self.env, capture_output=True)
        return self.returncode

    def kill(self):
        subprocess.run([REAL_TMUX, "-S", self.ui, "kill-server"], env=self.env, capture_output=True)
        self.returncode = -9
CONFIG = "[auto_resume]\nenabled = false\n[notify]\nbell = false\n"


def usage(msg=None):
    if msg:
        print(f"scale.py: {msg}", file=sys.stderr)
    print("usage: python3 bench/scale.py SECS N1,N2,... name=/path/to/agentwatch [name2=/path ...]\n"
          "       env FAKE=/path/to/fake_agent (default target/release/examples/fake_agent), KEEP=1 keeps temp dirs",
          file=sys.stderr)
    sys.exit(2)


# ---------------------------------------------------------------------------------- /proc

def stat_fields(pid):
    """Fields after the `(comm)` of /proc/PID/stat: [0] is state, [1] ppid, [11] utime..."""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def cpu_secs(pid):
    """utime + stime of the whole process (all its threads)."""
    r = stat_fields(pid)
    return (int(r[11]) + int(r[12])) / TCK


def reaped_children_secs(pid):
    """cutime + cstime: CPU of the children the process has waited for."""
    r = stat_fields(pid)
    return (int(r[13]) + int(r[14])) / TCK


def live_children(pid):
    """{(child pid, start time): cpu secs} of the process's live direct children."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            r = stat_fields(name)
        except OSError:
            continue
        if r[1] == str(pid):
            out[(int(name), r[19])] = (int(r[11]) + int(r[12])) / TCK
    return out


def children_snapshot(pid):
    return reaped_children_secs(pid), live_children(pid)


def children_cpu(s0, s1):
    """CPU the children spent between two snapshots: the reaped ones' (minus what those that
    were alive at s0 had already spent by then) plus the live ones' growth."""
    (r0, live0), (r1, live1) = s0, s1
    total = r1 - r0
    for k, v in live1.items():
        total += v - live0.get(k, 0.0)
    for k, v in live0.items():
        if k not in live1:
            total -= v
    return max(total, 0.0)


def status_kib(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def ppid_of(pid):
    try:
        return int(stat_fields(pid)[1])
    except (OSError, IndexError, ValueError):
        return None


def reap(agents, server):
    """After kill-server: the fake agents still alive 5 s later (only if each is still the
    fake agent started), then the server process if it is still tmux, with SIGKILL."""
    deadline = time.time() + 5
    left = list(agents)
    while left and time.time() < deadline:
        left = [pid for pid in left if is_fake_agent(pid)]
        if left:
            time.sleep(0.1)
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if server and os.path.exists(f"/proc/{server}"):
        try:
            if "tmux" in open(f"/proc/{server}/comm").read():
                os.kill(server, signal.SIGKILL)
        except OSError:
            pass


def is_fake_agent(pid):
    try:
        return os.path.realpath(f"/proc/{pid}/exe") == os.path.realpath(FAKE)
    except OSError:
        return False


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def pct(xs, p):
    return round(xs[min(len(xs) - 1, int(p * len(xs)))]) if xs else None


# ---------------------------------------------------------------------------------- tmux

class Server:
    """One private tmux server with N fake agents (`claude`, plan `hang`), one per window."""

    def __init__(self, d, n, cmd=("claude",), plan="hang\n"):
        self.d, self.sock = d, f"{d}/agents.sock"
        self.env = dict(os.environ, PATH=f"{d}/bin:{os.environ['PATH']}", FAKE_AGENT_DIR=f"{d}/agents",
                        HOME=f"{d}/home")
        self.env.pop("TMUX", None)
        self.env.pop("TMUX_PANE", None)
        for sub in ("bin", "agents", "home"):
            os.makedirs(f"{d}/{sub}", exist_ok=True)
        if not os.path.exists(f"{d}/bin/claude"):
            os.symlink(FAKE, f"{d}/bin/claude")
        with open(f"{d}/agents/claude.plan", "w") as f:
            f.write(plan)
        self.pid = None
        self.panes = []  # (pane id, pane pid)
        # The server holds one pty per pane: give it the hard limit of open files.
        self.t("-f", "/dev/null", "new-session", "-d", "-s", "s0", "-x", "120", "-y", "30", "--", "sleep", "1000000",
               preexec=raise_nofile)
        self.pid = int(self.t("display-message", "-p", "#{pid}").strip())
        self.t("set-option", "-s", "exit-empty", "off")
        self.t("set-option", "-g", "history-limit", "2000")
        # No remain-on-exit here: agentwatch has to protect the panes itself.
        for start in range(0, n, BATCH):
            args = []
            for i in range(start, min(start + BATCH, n)):
                if SESSIONS:
                    args += ["new-session", "-d", "-s", f"a{i}", "-x", "120", "-y", "30", "-P", "-F",
                             "#{pane_id} #{pane_pid}", "--", *cmd, ";"]
                else:
                    args += ["new-window", "-d", "-t", "s0:", "-P", "-F", "#{pane_id} #{pane_pid}", "--", *cmd,
                             ";"]
            for line in self.t(*args[:-1]).splitlines():
                pane, pid = line.split()
                self.panes.append((pane, int(pid)))
        if len(self.panes) != n:
            raise RuntimeError(f"asked for {n} panes, tmux made {len(self.panes)}")

    def t(self, *args, timeout=60, preexec=None):
        return subprocess.run([REAL_TMUX, "-S", self.sock, *args], env=self.env, capture_output=True, text=True,
                              check=True, timeout=timeout, preexec_fn=preexec).stdout

    def remain_on(self):
        """The set of our panes whose remain-on-exit is on (one list-panes -a)."""
        ours = {p for p, _ in self.panes}
        out = self.t("list-panes", "-a", "-F", "#{pane_id} #{remain-on-exit}")
        return {p for p, v in (line.split() for line in out.splitlines()) if v == "on" and p in ours}

    def kill_pane_process(self, pid):
        """SIGKILL one of our panes' processes, only if it is still the tmux server's child."""
        if ppid_of(pid) != self.pid:
            return False
        os.kill(pid, signal.SIGKILL)
        return True

    def close(self):
        subprocess.run([REAL_TMUX, "-S", self.sock, "kill-server"], env=self.env, capture_output=True, timeout=60)
        # The fake agents exit on the SIGHUP tmux sends; sweep any that did not (by pid, and
        # only if it is still the fake agent we started).
        reap([p[1] for p in self.panes], self.pid)


# ---------------------------------------------------------------------------------- one run

def read_died(path):
    """{pane: first `died` ts} from the journal."""
    died = {}
    if not os.path.exists(path):
        return died
    with open(path) as f:
        for line in f:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("event") == "died" and e.get("pane") not in died:
                died[e["pane"]] = e["ts"]
    return died


def count_lines(path):
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        return sum(1 for _ in f)


def start(aw, srv, run, cfg, env, err):
    """The dashboard (UI=1) or the daemon of build `aw` on `srv`."""
    if UI:
        return Dashboard(run, aw, srv.sock, cfg, env)
    return subprocess.Popen([aw, "daemon", "-S", srv.sock, "-c", cfg], env=env, stdin=subprocess.DEVNULL,
                            stdout=err, stderr=err, cwd=f"{run}/home")


def settle(proc, check, n, t_start, what, errlog):
    """Until `check()` holds all n panes, or SETTLE_CAP: the time it took and the last set."""
    while True:
        elapsed = time.time() - t_start
        if proc.poll() is not None:
            raise RuntimeError(f"{what}: agentwatch exited {proc.returncode}:\n" + open(errlog).read()[-2000:])
        got = check()
        if len(got) == n or elapsed >= SETTLE_CAP:
            return elapsed, got
        time.sleep(0.25 if elapsed < 2 else 1.0)


def run_dirs(d, name, srv, config):
    """A build's own dirs under `d` (XDG, HOME, TMUX_TMPDIR), its config, and a logging `tmux`
    first on its PATH: returns the run dir, the config's path, the tmux call log, the env."""
    run = f"{d}/run-{name}"
    for sub in ("state", "data", "config", "runtime", "home", "tmuxtmp", "wrap"):
        os.makedirs(f"{run}/{sub}", mode=0o700, exist_ok=True)
    calls = f"{run}/tmux-calls.log"
    with open(f"{run}/wrap/tmux", "w") as f:
        f.write(f"#!/bin/sh\necho \"$$ $*\" >> '{calls}'\nexec '{REAL_TMUX}' \"$@\"\n")
    os.chmod(f"{run}/wrap/tmux", 0o755)
    cfg = f"{run}/config.toml"
    with open(cfg, "w") as f:
        f.write(config)
    env = dict(srv.env, PATH=f"{run}/wrap:{srv.env['PATH']}", XDG_STATE_HOME=f"{run}/state",
               XDG_DATA_HOME=f"{run}/data", XDG_CONFIG_HOME=f"{run}/config", XDG_RUNTIME_DIR=f"{run}/runtime",
               HOME=f"{run}/home", TMUX_TMPDIR=f"{run}/tmuxtmp")
    env.pop("AGENTWATCH_CONFIG", None)
    return run, cfg, calls, env


def run_build(d, srv, name, aw, secs):
    n = len(srv.panes)
    run, cfg, calls, env = run_dirs(d, name, srv, CONFIG)
    journal = f"{run}/state/agentwatch/journal.jsonl"
    errlog = f"{run}/daemon.stderr"
    r = {"name": name, "n": n}
    err = open(errlog, "w")
    t_start = time.time()
    proc = start(aw, srv, run, cfg, env, err)
    try:
        # Settle: every pane protected (remain-on-exit on), polled with one list-panes -a.
        elapsed, protected = settle(proc, srv.remain_on, n, t_start, f"{name}: settle", errlog)
        r["settle"] = elapsed if len(protected) == n else None
        r["protected"] = len(protected)
        time.sleep(3)

        # Steady window.
        calls0 = count_lines(calls)
        aw0, ch0, tm0, t0 = cpu_secs(proc.pid), children_snapshot(proc.pid), cpu_secs(srv.pid), time.time()
        time.sleep(secs)
        aw1, ch1, tm1, t1 = cpu_secs(proc.pid), children_snapshot(proc.pid), cpu_secs(srv.pid), time.time()
        calls1 = count_lines(calls)
        dt = t1 - t0
        r["aw_cpu"] = 100 * (aw1 - aw0) / dt
        r["ch_cpu"] = 100 * children_cpu(ch0, ch1) / dt
        r["tmux_cpu"] = 100 * (tm1 - tm0) / dt
        r["total"] = r["aw_cpu"] + r["ch_cpu"] + r["tmux_cpu"]
        r["spawns_min"] = (calls1 - calls0) / (dt / 60)
        r["live_children"] = len(ch1[1])

        # Deaths, one at a time at random moments. Only protected panes: an unprotected one
        # would just close.
        pool = [p for p in srv.panes if p[0] in protected]
        k = min(DEATHS, n // 2, len(pool))
        victims = random.sample(pool, k)
        at = sorted(random.uniform(0, DEATH_SPAN) for _ in victims)
        killed = {}
        td = time.time()
        for (pane, pid), when in zip(victims, at):
            time.sleep(max(0, td + when - time.time()))
            now = time.time() * 1000
            if srv.kill_pane_process(pid):
                killed[pane] = now
        time.sleep(max(0, td + DEATH_SPAN - time.time()) + 3)
        died = read_died(journal)
        lat = sorted(died[p] - killed[p] for p in killed if p in died)
        r["deaths"], r["seen"] = len(killed), len(lat)
        r["p50"], r["p95"], r["max"] = pct(lat, 0.5), pct(lat, 0.95), (round(lat[-1]) if lat else None)

        # A burst: 10% of the remaining (protected, alive) panes at once.
        rest = [p for p in pool if p[0] not in killed]
        kb = min(BURST_MAX, max(1, round(len(rest) / 10))) if rest else 0
        burst = {}
        for pane, pid in random.sample(rest, kb):
            now = time.time() * 1000
            if srv.kill_pane_process(pid):
                burst[pane] = now
        time.sleep(BURST_WAIT)
        died = read_died(journal)
        blat = sorted(died[p] - burst[p] for p in burst if p in died)
        r["burst"] = len(burst)
        r["burst_seen"] = sum(1 for x in blat if x <= BURST_WAIT * 1000)
        r["burst_p95"] = pct(blat, 0.95)
        r["burst_max"] = round(blat[-1]) if blat else None
        r["spurious"] = sorted(p for p in died if p not in killed and p not in burst)

        r["rss"] = status_kib(proc.pid, "VmRSS") / 1024
        r["hwm"] = status_kib(proc.pid, "VmHWM") / 1024
        r["alive"] = proc.poll() is None
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        err.close()
    r["exit"] = proc.returncode
    with open(errlog) as f:
        lines = f.read().splitlines()
    r["warn"] = [l for l in lines if " WARN " in l or " ERROR " in l]
    return r


def idle_cpu(srv):
    t0, c0 = time.time(), cpu_secs(srv.pid)
    time.sleep(IDLE_SECS)
    return 100 * (cpu_secs(srv.pid) - c0) / (time.time() - t0)


def fmt(v, spec="", none="-"):
    return none if v is None else format(v, spec)


def line(r, idle):
    settle = fmt(r["settle"], ".1f", f">{SETTLE_CAP:.0f}")
    return (f"N={r['n']:<5} {r['name']:<10} settle={settle}s ({r['protected']}/{r['n']} protected)  "
            f"cpu: agentwatch={r['aw_cpu']:.2f}% children={r['ch_cpu']:.2f}% tmux={r['tmux_cpu']:.2f}% "
            f"(idle {idle:.2f}%) total={r['total']:.2f}%  "
            f"deaths seen {r['seen']}/{r['deaths']} p50={fmt(r['p50'])} p95={fmt(r['p95'])} max={fmt(r['max'])} ms  "
            f"burst seen {r['burst_seen']}/{r['burst']} in {BURST_WAIT:.0f}s p95={fmt(r['burst_p95'])} "
            f"max={fmt(r['burst_max'])} ms  rss={r['rss']:.1f}MiB hwm={r['hwm']:.1f}MiB  "
            f"tmux spawns/min={r['spawns_min']:.0f} live children={r['live_children']}  exit={r['exit']}")


def parse_args(argv, usage):
    """`SECS N1,N2,... name=/path [name2=/path ...]`: the window, the pane counts and the
    builds; `usage(why)` says what is wrong and exits."""
    if len(argv) < 4:
        usage()
    try:
        secs = float(argv[1])
        ns = [int(x) for x in argv[2].split(",") if x]
    except ValueError:
        usage("SECS must be a number and N1,N2,... integers")
    builds = []
    for a in argv[3:]:
        name, sep, path = a.partition("=")
        if not sep or not name or not path:
            usage(f"not name=/path: {a!r}")
        if not all(c.isalnum() or c in "._-" for c in name) or name in [b[0] for b in builds]:
            usage(f"build names must be distinct and made of letters, digits, . _ -: {name!r}")
        path = os.path.abspath(path)
        if not os.access(path, os.X_OK):
            usage(f"{name}: {path} is not an executable")
        builds.append((name, path))
    return secs, ns, builds


def main():
    secs, ns, builds = parse_args(sys.argv, usage)
    if not os.access(FAKE, os.X_OK):
        usage(f"fake agent {FAKE} is not an executable (set FAKE=, or cargo build --release --example fake_agent)")
    if not REAL_TMUX:
        usage("tmux not found")
    for name, path in builds:
        h = subprocess.run([path, "daemon", "--help"], capture_output=True, text=True)
        if h.returncode != 0:
            usage(f"{name}: `{path} daemon --help` failed: {h.stderr.strip()[:300]}")

    print(f"# machine: {os.cpu_count()} cores, {os.uname().release}; "
          f"{subprocess.run([REAL_TMUX, '-V'], capture_output=True, text=True).stdout.strip()}; "
          f"load {os.getloadavg()[0]:.2f}; open files limit {resource.getrlimit(resource.RLIMIT_NOFILE)}")
    layout = ("one session per agent" if SESSIONS else "one session") + ("; the dashboard" if UI else "; the daemon")
    print(f"# date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {layout}; steady window {secs:g} s; "
          f"builds: {', '.join(f'{n}={p}' for n, p in builds)}; fake agent {FAKE}")
    print(f"# CPU from /proc utime+stime in ticks of 1/{TCK} s: resolution {100 / (secs * TCK):.2f}% of a core "
          f"over {secs:g} s; children = agentwatch's child processes (its tmux clients, live and reaped)")
    rows, idles = [], {}
    for n in ns:
        for bi, (name, aw) in enumerate(builds):
            d = tempfile.mkdtemp(prefix=f"aw-scale-{n}-{name}-")
            srv = None
            try:
                tc = time.time()
                srv = Server(d, n)
                made = time.time() - tc
                if bi == 0:
                    idles[n] = idle_cpu(srv)
                    print(f"N={n:<5} idle       tmux server with nothing attached: {idles[n]:.2f}% "
                          f"(over {IDLE_SECS:.0f} s; {n} panes made in {made:.1f} s)", flush=True)
                r = run_build(d, srv, name, aw, secs)
            finally:
                if srv:
                    srv.close()
                if KEEP:
                    print(f"#   kept {d}")
                else:
                    shutil.rmtree(d, ignore_errors=True)
            rows.append(r)
            print(line(r, idles[n]), flush=True)
            odd = []
            if r["spurious"]:
                odd.append(f"died events for panes not killed: {' '.join(r['spurious'][:10])}")
            if r["exit"] != 0:
                odd.append(f"daemon exit status {r['exit']} after SIGTERM")
            if not r["alive"]:
                odd.append("daemon was no longer running at the end")
            if r["warn"]:
                odd.append(f"{len(r['warn'])} WARN/ERROR log lines, first: {r['warn'][0][:200]}")
            for o in odd:
                print(f"N={n:<5} {name:<10} note: {o}", flush=True)

    print()
    print("| panes | build | settle s | agentwatch CPU % | children CPU % | tmux CPU % | total % | deaths seen "
          "| p50 ms | p95 ms | burst seen | burst p95 | RSS MiB | spawns/min |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        settle = fmt(r["settle"], ".1f", f">{SETTLE_CAP:.0f} ({r['protected']}/{r['n']})")
        print(f"| {r['n']} | {r['name']} | {settle} "
              f"| {r['aw_cpu']:.2f} | {r['ch_cpu']:.2f} | {r['tmux_cpu']:.2f} | {r['total']:.2f} "
              f"| {r['seen']}/{r['deaths']} | {fmt(r['p50'])} | {fmt(r['p95'])} "
              f"| {r['burst_seen']}/{r['burst']} | {fmt(r['burst_p95'])} | {r['rss']:.1f} | {r['spawns_min']:.0f} |")
    print()
    print("tmux server idle CPU (nothing attached, " + f"{IDLE_SECS:.0f} s): "
          + ", ".join(f"N={n}: {v:.2f}%" for n, v in idles.items()))
    if len(builds) >= 2:
        a, b = builds[0][0], builds[1][0]
        for n in ns:
            ra = next(r for r in rows if r["n"] == n and r["name"] == a)
            rb = next(r for r in rows if r["n"] == n and r["name"] == b)
            ratio = f"{ra['total'] / rb['total']:.2f}x" if rb["total"] > 0 else "n/a (0 below resolution)"
            aw_ratio = f"{ra['aw_cpu'] / rb['aw_cpu']:.2f}x" if rb["aw_cpu"] > 0 else "n/a"
            print(f"N={n}: total CPU {a}/{b} = {ra['total']:.2f}/{rb['total']:.2f} = {ratio} "
                  f"(agentwatch alone {ra['aw_cpu']:.2f}/{rb['aw_cpu']:.2f} = {aw_ratio})")


if __name__ == "__main__":
    main()
