"""Driver for bench/churn.sh (issue 29: know within a second who needs you).

    python3 bench/churn.py SECS N1,N2,... name=/path/to/agentwatch [name2=/path/to/agentwatch ...]

For each N and each build: a fresh private tmux server (socket in a temp dir, -f /dev/null)
with N fake claude panes (`claude --session-id <fresh uuid>`): a third of them churn (plan
`churn 3 7`: a working spinner redrawn every 100 ms, then claude's permission prompt and
silence, each phase 3-7 s, every phase start written to churn.jsonl as the truth), the rest
are busy-looking and silent (claude's working line once, then nothing). agentwatch watches
them with fresh HOME/XDG/TMUX_TMPDIR dirs (auto-resume off, tick 500 ms). Once it knows every
pane (remain-on-exit and @agentwatch_agent set on each), SECS s are measured:

- edges: the journal is tailed every 15 ms and each new line stamped with the time it
  appeared (its own `ts` may be backdated). For each truth `waiting` phase start t in the
  window, the lag is the arrival of the first `waiting` line for that pane at or after t and
  before the phase ended + 0.1 s; none is a miss ("late" when one came after that, before
  the pane's next phase ended). Likewise `working` lines for working phases (dropped).
- the header (UI=1): the dashboard's first line every 500 ms, `(K waiting)`, against the
  number of churn panes truly at a prompt at that moment.
- cost: CPU of agentwatch, of its child processes and of the watched tmux server over the
  window, RSS, tmux processes it started (a logging `tmux` first on its PATH); and, before
  agentwatch starts, the tmux server's own CPU for this load over BASE_SECS s (nobody
  attached: what the agents' output costs it).
Then, outside the cost window (its tmux questions would be counted as the server's cost):
- `agentwatch status --json` every 2 s for STATUS_SECS s (same env as agentwatch): each churn
  pane's state against the truth at the call's start or end; `running` (unknown) counted.
- deaths: DEATHS busy panes SIGKILLed at random moments over 5 s, latency to the `died` line.

Env: UI=1 the dashboard (160x45, in a private tmux server of its own) instead of the daemon;
SESSIONS=1 one session per agent instead of N windows in one session; BUSY=1 no churn panes
(every pane busy-looking and silent: the cost case); CHURN="3 7" the phase bounds (s);
SPIN_MS=100 how often a working churn pane redraws its spinner line;
STATUS_SECS=20; DEATHS=5; BASE_SECS=10; AFTER_SETTLE=3 (s from every pane known to the window:
longer leaves agentwatch's start, which reads every pane whole, out of the window); FAKE=/path/to/fake_agent (default target/release/examples/fake_agent);
KEEP=1 keeps the temp dirs (journals, truth, logs) and prints where they are.
Kills only processes it started, only its own servers; never the default tmux server.
"""
import bisect, json, os, random, re, shutil, signal, subprocess, sys, tempfile, threading, time, uuid

sys.dont_write_bytecode = True  # no __pycache__ in bench/
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale  # noqa: E402  (the /proc readers and the dashboard-in-a-pane of bench/scale.py)
from scale import (REAL_TMUX, TCK, Dashboard, children_cpu, children_snapshot, cpu_secs,  # noqa: E402
                   count_lines, raise_nofile, status_kib)

FAKE = scale.FAKE
KEEP = os.environ.get("KEEP") == "1"
UI = os.environ.get("UI") == "1"
SESSIONS = os.environ.get("SESSIONS") == "1"
BUSY = os.environ.get("BUSY") == "1"
CHURN = os.environ.get("CHURN", "3 7")
CHURN_MIN, CHURN_MAX = (float(x) for x in CHURN.split())
SPIN_MS = float(os.environ.get("SPIN_MS", "100"))
STATUS_SECS = float(os.environ.get("STATUS_SECS", "20"))
STATUS_EVERY = 2.0
DEATHS = int(os.environ.get("DEATHS", "5"))
BASE_SECS = float(os.environ.get("BASE_SECS", "10"))
DEATH_SPAN = 5.0
DEATH_WAIT = 3.0
HEADER_EVERY = 0.5
TAIL_EVERY = 0.015
SETTLE_CAP = 120.0
AFTER_SETTLE = float(os.environ.get("AFTER_SETTLE", "3"))
BATCH = 50
BUSY_LINE = "✻ Working… (3s · esc to interrupt)"
CONFIG = "tick_ms = 500\n[auto_resume]\nenabled = false\n[notify]\nbell = false\n"


def usage(msg=None):
    if msg:
        print(f"churn.py: {msg}", file=sys.stderr)
    print("usage: python3 bench/churn.py SECS N1,N2,... name=/path/to/agentwatch [name2=/path ...]\n"
          "       env UI=1 SESSIONS=1 BUSY=1 CHURN='3 7' SPIN_MS=100 STATUS_SECS=20 DEATHS=5 BASE_SECS=10 FAKE=... KEEP=1",
          file=sys.stderr)
    sys.exit(2)


def now_ms():
    return time.time() * 1000


def pct(xs, p):
    xs = sorted(xs)
    return round(xs[min(len(xs) - 1, int(p * len(xs)))]) if xs else None


def fmt(v, spec="", none="-"):
    return none if v is None else format(v, spec)


# ---------------------------------------------------------------------------------- tmux

class Server(scale.Server):
    """One private tmux server with N fake claude panes: every third churns, the rest look
    busy and stay silent. Each group has its own FAKE_AGENT_DIR (its plan, its log; the churn
    group's truth), passed with `-e` on the command that makes the pane."""

    def __init__(self, d, n, churn_every):
        self.d, self.sock = d, f"{d}/agents.sock"
        self.env = dict(os.environ, PATH=f"{d}/bin:{os.environ['PATH']}", HOME=f"{d}/home")
        self.env.pop("TMUX", None)
        self.env.pop("TMUX_PANE", None)
        self.env.pop("FAKE_AGENT_DIR", None)
        for sub in ("bin", "churn", "busy", "home"):
            os.makedirs(f"{d}/{sub}", exist_ok=True)
        os.symlink(FAKE, f"{d}/bin/claude")
        with open(f"{d}/churn/claude.plan", "w") as f:
            f.write(f"churn {CHURN_MIN:g} {CHURN_MAX:g} {SPIN_MS:g}\n")
        with open(f"{d}/busy/claude.plan", "w") as f:
            f.write(f"say {BUSY_LINE}\nhang\n")
        self.truth_path = f"{d}/churn/churn.jsonl"
        self.pid = None
        self.panes = []  # (pane id, pane pid, churns?)
        self.t("-f", "/dev/null", "new-session", "-d", "-s", "s0", "-x", "120", "-y", "30", "--", "sleep", "1000000",
               preexec=raise_nofile)
        self.pid = int(self.t("display-message", "-p", "#{pid}").strip())
        self.t("set-option", "-s", "exit-empty", "off")
        self.t("set-option", "-g", "history-limit", "2000")
        for start in range(0, n, BATCH):
            args, kinds = [], []
            for i in range(start, min(start + BATCH, n)):
                churns = churn_every > 0 and i % churn_every == 0
                kinds.append(churns)
                env = f"FAKE_AGENT_DIR={d}/{'churn' if churns else 'busy'}"
                cmd = ["claude", "--session-id", str(uuid.uuid4())]
                if SESSIONS:
                    args += ["new-session", "-d", "-s", f"a{i}", "-x", "120", "-y", "30", "-e", env, "-P", "-F",
                             "#{pane_id} #{pane_pid}", "--", *cmd, ";"]
                else:
                    args += ["new-window", "-d", "-t", "s0:", "-e", env, "-P", "-F", "#{pane_id} #{pane_pid}", "--",
                             *cmd, ";"]
            for line, churns in zip(self.t(*args[:-1]).splitlines(), kinds):
                pane, pid = line.split()
                self.panes.append((pane, int(pid), churns))
        if len(self.panes) != n:
            raise RuntimeError(f"asked for {n} panes, tmux made {len(self.panes)}")

    def known(self):
        """Our panes with remain-on-exit on and @agentwatch_agent set (one list-panes -a)."""
        ours = {p for p, _, _ in self.panes}
        out = self.t("list-panes", "-a", "-F", "#{pane_id} #{remain-on-exit} #{@agentwatch_agent}.")
        got = set()
        for line in out.splitlines():
            w = line.split()
            if len(w) == 3 and w[0] in ours and w[1] == "on" and w[2] != ".":
                got.add(w[0])
        return got


# ---------------------------------------------------------------------------------- watchers

class Tail(threading.Thread):
    """Tails the journal (following a rotation to journal.jsonl.1): every complete new line,
    parsed, with the wall time (ms) it was first seen."""

    def __init__(self, path):
        super().__init__(daemon=True)
        self.path, self.lines, self.bad = path, [], 0
        self.stop = threading.Event()

    def run(self):
        fd, ino, buf = None, None, b""

        def drain(buf):
            chunk = os.read(fd, 1 << 20)
            while chunk:
                buf += chunk
                chunk = os.read(fd, 1 << 20)
            if b"\n" not in buf:
                return buf
            at = now_ms()
            *done, buf = buf.split(b"\n")
            for raw in done:
                if not raw.strip():
                    continue
                try:
                    self.lines.append((at, json.loads(raw)))
                except ValueError:
                    self.bad += 1
            return buf

        while not self.stop.is_set():
            if fd is None:
                try:
                    fd = os.open(self.path, os.O_RDONLY)
                    ino = os.fstat(fd).st_ino
                except OSError:
                    fd = None
            if fd is not None:
                buf = drain(buf)
                try:
                    rotated = os.stat(self.path).st_ino != ino
                except OSError:
                    rotated = False
                if rotated:
                    # Moved aside to journal.jsonl.1 (the writer renames it, then writes the
                    # next line to a new file): read the old one to its end, go on with the new.
                    buf = drain(buf)
                    os.close(fd)
                    fd, buf = None, b""
                    continue
            self.stop.wait(TAIL_EVERY)
        if fd is not None:
            drain(buf)
            os.close(fd)


class Every(threading.Thread):
    """Calls fn every `period` s until stopped, collecting what it returns."""

    def __init__(self, period, fn):
        super().__init__(daemon=True)
        self.period, self.fn, self.out = period, fn, []
        self.stop = threading.Event()

    def run(self):
        nxt = time.time()
        while not self.stop.is_set():
            try:
                self.out.append(self.fn())
            except Exception as e:  # noqa: BLE001 (a failed reading is reported, not fatal)
                self.out.append(("error", repr(e)[:200]))
            nxt += self.period
            self.stop.wait(max(0.0, nxt - time.time()))


class Truth:
    """Each churn pane's phases, from churn.jsonl: [(at_ms, phase)] sorted."""

    def __init__(self, path):
        self.by_pane = {}
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    try:
                        e = json.loads(line)
                    except ValueError:
                        continue
                    self.by_pane.setdefault(e["pane"], []).append((e["at_ms"], e["phase"]))
        for v in self.by_pane.values():
            v.sort()
        self.times = {p: [t for t, _ in v] for p, v in self.by_pane.items()}

    def phase_at(self, pane, t):
        i = bisect.bisect_right(self.times.get(pane, []), t) - 1
        return self.by_pane[pane][i][1] if i >= 0 else None

    def waiting_at(self, t):
        return sum(1 for p in self.by_pane if self.phase_at(p, t) == "waiting")

    def phases(self, t0, t1):
        """(pane, phase, start, end) of every phase that started in [t0, t1) and has ended."""
        out = []
        for p, v in self.by_pane.items():
            for i, (t, ph) in enumerate(v):
                if t0 <= t < t1 and i + 1 < len(v):
                    out.append((p, ph, t, v[i + 1][0]))
        return out


def edges(truth, journal, t0, t1, phase):
    """Lags (ms) of `phase` journal lines after each truth phase start in the window; the
    number of phases with none before they ended (+ 0.1 s): missed; and how many of those
    got one late, after the phase ended but before the pane's next phase ended."""
    seen = {}
    for at, e in journal:
        if e.get("event") == phase:
            seen.setdefault(e.get("pane"), []).append(at)
    lags, missed, late = [], 0, 0
    for pane, ph, start, end in truth.phases(t0, t1):
        if ph != phase:
            continue
        arr = seen.get(pane, [])
        i = bisect.bisect_left(arr, start)
        if i < len(arr) and arr[i] < end + 100:
            lags.append(arr[i] - start)
        else:
            missed += 1
            times = truth.times[pane]
            j = bisect.bisect_right(times, end)
            after = times[j] if j < len(times) else float("inf")
            if i < len(arr) and arr[i] < after:
                late += 1
    return lags, missed, late


# ---------------------------------------------------------------------------------- one run

def run_build(d, srv, name, aw, secs):
    n = len(srv.panes)
    churn = [p for p, _, c in srv.panes if c]
    churn_set = set(churn)
    run, cfg, calls, env = scale.run_dirs(d, name, srv, CONFIG)
    # `status` sees the same dirs, but its tmux calls are not counted as agentwatch's.
    status_env = dict(env, PATH=srv.env["PATH"])
    journal_path = f"{run}/state/agentwatch/journal.jsonl"
    # The tmux server's own cost for this load (the agents' output), nobody attached.
    b0, tb = cpu_secs(srv.pid), time.time()
    time.sleep(BASE_SECS)
    r_base = 100 * (cpu_secs(srv.pid) - b0) / (time.time() - tb)
    tail = Tail(journal_path)
    tail.start()
    errlog = f"{run}/daemon.stderr"
    r = {"name": name, "n": n, "churn": len(churn), "tmux_base": r_base}
    err = open(errlog, "w")
    t_start = time.time()
    proc = scale.start(aw, srv, run, cfg, env, err)
    threads = []
    try:
        # Warm-up: every pane known (remain-on-exit on, @agentwatch_agent set).
        elapsed, known = scale.settle(proc, srv.known, n, t_start, f"{name}: warm-up", errlog)
        r["settle"] = elapsed if len(known) == n else None
        r["known"] = len(known)
        time.sleep(AFTER_SETTLE)

        # The window: edges, header, cost.
        header = None
        if UI:
            def look_header():
                a = now_ms()
                out = subprocess.run([REAL_TMUX, "-S", proc.ui, "capture-pane", "-p"], env=env,
                                     capture_output=True, text=True, timeout=5).stdout
                b = now_ms()
                first = out.split("\n", 1)[0]
                m = re.search(r"(\d+) running(?: \((\d+) waiting\))?", first)
                return ("ok", (a + b) / 2, int(m.group(2) or 0) if m else None, first)
            header = Every(HEADER_EVERY, look_header)
        calls0 = count_lines(calls)
        aw0, ch0, tm0, t0 = cpu_secs(proc.pid), children_snapshot(proc.pid), cpu_secs(srv.pid), time.time()
        if header:
            header.start()
            threads.append(header)
        time.sleep(secs)
        aw1, ch1, tm1, t1 = cpu_secs(proc.pid), children_snapshot(proc.pid), cpu_secs(srv.pid), time.time()
        calls1 = count_lines(calls)
        if header:
            header.stop.set()
            header.join()
        dt = t1 - t0
        r["aw_cpu"] = 100 * (aw1 - aw0) / dt
        r["ch_cpu"] = 100 * children_cpu(ch0, ch1) / dt
        r["tmux_cpu"] = 100 * (tm1 - tm0) / dt
        r["total"] = r["aw_cpu"] + r["ch_cpu"] + r["tmux_cpu"]
        r["spawns_min"] = (calls1 - calls0) / (dt / 60)
        r["rss"] = status_kib(proc.pid, "VmRSS") / 1024

        # status --json, after the window.
        def look_status():
            a = now_ms()
            p = subprocess.run([aw, "status", "--json", "-S", srv.sock, "-c", cfg], env=status_env,
                               capture_output=True, text=True, timeout=60, cwd=f"{run}/home")
            b = now_ms()
            try:
                rows = json.loads(p.stdout)
            except ValueError:
                return ("error", f"exit {p.returncode}: {p.stderr.strip()[:200]}")
            return ("ok", a, b, {row["pane_id"]: row["state"] for row in rows})
        status = None
        if churn and STATUS_SECS > 0:
            status = Every(STATUS_EVERY, look_status)
            status.start()
            threads.append(status)
            time.sleep(STATUS_SECS)
            status.stop.set()
            status.join()
        else:
            time.sleep(CHURN_MAX + 1)  # every phase of the window ends

        # Deaths: busy panes (known ones: protected), one at a time at random moments.
        pool = [(p, pid) for p, pid, c in srv.panes if not c and p in known]
        victims = random.sample(pool, min(DEATHS, len(pool)))
        at = sorted(random.uniform(0, DEATH_SPAN) for _ in victims)
        killed = {}
        td = time.time()
        for (pane, pid), when in zip(victims, at):
            time.sleep(max(0, td + when - time.time()))
            t = now_ms()
            if srv.kill_pane_process(pid):
                killed[pane] = t
        time.sleep(max(0, td + DEATH_SPAN - time.time()) + DEATH_WAIT)
        r["alive"] = proc.poll() is None
    finally:
        for th in threads:
            th.stop.set()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        err.close()
        time.sleep(0.1)
        tail.stop.set()
        tail.join()
    r["exit"] = proc.returncode

    # What happened, against the truth.
    truth = Truth(srv.truth_path)
    journal = tail.lines
    w0, w1 = t0 * 1000, t1 * 1000
    lags, missed, late = edges(truth, journal, w0, w1, "waiting")
    r["wait_n"], r["wait_missed"], r["wait_late"] = len(lags) + missed, missed, late
    r["wait_p50"], r["wait_p95"] = pct(lags, 0.5), pct(lags, 0.95)
    r["wait_max"] = round(max(lags)) if lags else None
    wlags, dropped, wlate = edges(truth, journal, w0, w1, "working")
    r["work_n"], r["work_dropped"], r["work_late"] = len(wlags) + dropped, dropped, wlate
    r["work_p50"], r["work_p95"] = pct(wlags, 0.5), pct(wlags, 0.95)
    # Journal lines in the window, by event: churn panes, busy ones.
    kinds = {}
    for at, e in journal:
        if w0 <= at < w1:
            who = "churn" if e.get("pane") in churn_set else "busy"
            kinds[(who, e.get("event"))] = kinds.get((who, e.get("event")), 0) + 1
    r["kinds"] = kinds
    # How far the lines' own `ts` is behind their arrival (backdated to when output stopped).
    back = [at - e["ts"] for at, e in journal
            if w0 <= at < w1 and e.get("event") in ("waiting", "working") and isinstance(e.get("ts"), (int, float))]
    r["back_p50"], r["back_p95"] = pct(back, 0.5), pct(back, 0.95)
    r["journal_bad"] = tail.bad
    # Header.
    r["hdr_n"] = 0
    if header:
        ok = [(x[1], x[2]) for x in header.out if x[0] == "ok" and x[2] is not None]
        r["hdr_n"] = len(ok)
        r["hdr_unparsed"] = sum(1 for x in header.out if x[0] != "ok" or x[2] is None)
        if ok:
            r["hdr_shown"] = sum(k for _, k in ok) / len(ok)
            r["hdr_true"] = sum(truth.waiting_at(t) for t, _ in ok) / len(ok)
            r["hdr_abs"] = sum(abs(k - truth.waiting_at(t)) for t, k in ok) / len(ok)
        r["hdr_sample"] = next((x[3] for x in header.out if x[0] == "ok"), "")
    # status --json.
    r["st_calls"] = 0
    if status:
        ok = [x for x in status.out if x[0] == "ok"]
        r["st_calls"], r["st_errors"] = len(ok), len(status.out) - len(ok)
        r["st_first_error"] = next((x[1] for x in status.out if x[0] != "ok"), None)
        agree = readings = running = missing = 0
        for _, a, b, states in ok:
            for p in churn:
                s = states.get(p)
                readings += 1
                if s is None:
                    missing += 1
                elif s == "running":
                    running += 1
                elif s in (truth.phase_at(p, a), truth.phase_at(p, b)):
                    agree += 1
        r["st_readings"], r["st_agree"], r["st_running"], r["st_missing"] = readings, agree, running, missing
        r["st_running_all"] = (sum(1 for x in ok for s in x[3].values() if s == "running") / len(ok)) if ok else 0
        durs = [b - a for _, a, b, _ in ok]
        r["st_p50"], r["st_max"] = pct(durs, 0.5), (round(max(durs)) if durs else None)
    # Deaths.
    died = {}
    for at, e in journal:
        if e.get("event") == "died" and e.get("pane") not in died:
            died[e["pane"]] = (at, e.get("ts"))
    dl = sorted(died[p][0] - killed[p] for p in killed if p in died)
    r["deaths"], r["deaths_seen"] = len(killed), len(dl)
    r["died_p50"], r["died_p95"] = pct(dl, 0.5), pct(dl, 0.95)
    # When agentwatch saw each death (the event's own time): its line is written once the
    # pane's last lines were read, 200 ms later, to say why it stopped (issue 30).
    sl = sorted(died[p][1] - killed[p] for p in killed if p in died and died[p][1] is not None)
    r["seen_p50"], r["seen_p95"] = pct(sl, 0.5), pct(sl, 0.95)
    r["spurious_died"] = sorted(p for p in died if p not in killed)
    with open(errlog) as f:
        r["warn"] = [l for l in f.read().splitlines() if " WARN " in l or " ERROR " in l]
    return r


def line(r):
    settle = fmt(r["settle"], ".1f", f">{SETTLE_CAP:.0f}")
    s = (f"N={r['n']:<5} {r['name']:<10} warm-up={settle}s ({r['known']}/{r['n']} known)  churn panes={r['churn']}  ")
    if r["churn"]:
        s += (f"waiting edges {r['wait_n']}: p50={fmt(r['wait_p50'])} p95={fmt(r['wait_p95'])} "
              f"max={fmt(r['wait_max'])} ms missed={r['wait_missed']} ({r['wait_late']} of them late)  "
              f"working edges {r['work_n']}: p50={fmt(r['work_p50'])} p95={fmt(r['work_p95'])} ms "
              f"dropped={r['work_dropped']} ({r['work_late']} of them late)  "
              f"journal ts behind arrival p50={fmt(r['back_p50'])} p95={fmt(r['back_p95'])} ms  ")
    if r["hdr_n"]:
        s += (f"header ({r['hdr_n']} looks) shown {r['hdr_shown']:.1f} true {r['hdr_true']:.1f} "
              f"|diff| {r['hdr_abs']:.1f}  ")
    if r["st_calls"]:
        s += (f"status --json {r['st_calls']} calls: agree {r['st_agree']}/{r['st_readings']} "
              f"running {r['st_running']} (all panes: {r['st_running_all']:.0f}/call) "
              f"call p50={fmt(r['st_p50'])} max={fmt(r['st_max'])} ms  ")
    s += (f"cpu: agentwatch={r['aw_cpu']:.2f}% children={r['ch_cpu']:.2f}% tmux={r['tmux_cpu']:.2f}% "
          f"(without agentwatch {r['tmux_base']:.2f}%) "
          f"total={r['total']:.2f}%  rss={r['rss']:.1f}MiB  tmux spawns/min={r['spawns_min']:.0f}  "
          f"deaths seen {r['deaths_seen']}/{r['deaths']} p50={fmt(r['died_p50'])} p95={fmt(r['died_p95'])} ms "
          f"(seen at p50={fmt(r['seen_p50'])} p95={fmt(r['seen_p95'])} ms)  "
          f"exit={r['exit']}")
    return s


def main():
    secs, ns, builds = scale.parse_args(sys.argv, usage)
    if not os.access(FAKE, os.X_OK):
        usage(f"fake agent {FAKE} is not an executable (set FAKE=, or cargo build --release --example fake_agent)")
    if subprocess.run([FAKE, "--version"], capture_output=True).returncode != 0:
        usage(f"{FAKE} --version failed")
    if not REAL_TMUX:
        usage("tmux not found")
    for name, path in builds:
        h = subprocess.run([path, "status", "--help"], capture_output=True, text=True)
        if h.returncode != 0 or "--json" not in h.stdout:
            usage(f"{name}: `{path} status --help` failed or has no --json")

    churn_every = 0 if BUSY else 3
    print(f"# machine: {os.cpu_count()} cores, {os.uname().release}; "
          f"{subprocess.run([REAL_TMUX, '-V'], capture_output=True, text=True).stdout.strip()}; "
          f"load {os.getloadavg()[0]:.2f}")
    layout = ("one session per agent" if SESSIONS else "one session") + ("; the dashboard 160x45" if UI else "; the daemon")
    load = ("busy-looking silent panes only" if BUSY else
            f"a third churn {CHURN_MIN:g}-{CHURN_MAX:g} s (spinner every {SPIN_MS:g} ms), the rest busy-looking silent")
    status = "no status calls" if BUSY else f"status --json every {STATUS_EVERY:g} s for {STATUS_SECS:g} s after it"
    print(f"# date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {layout}; {load}; window {secs:g} s; "
          f"{status}; builds: "
          f"{', '.join(f'{n}={p}' for n, p in builds)}; fake agent {FAKE}")
    print(f"# CPU from /proc utime+stime in ticks of 1/{TCK} s: resolution {100 / (secs * TCK):.2f}% of a core "
          f"over {secs:g} s; children = agentwatch's child processes (its tmux clients, live and reaped)")
    rows = []
    for n in ns:
        for name, aw in builds:
            d = tempfile.mkdtemp(prefix=f"aw-churn-{n}-{name}-")
            srv = None
            tr = time.time()
            try:
                srv = Server(d, n, churn_every)
                r = run_build(d, srv, name, aw, secs)
            finally:
                if srv:
                    srv.close()
                if KEEP:
                    print(f"#   kept {d}")
                else:
                    shutil.rmtree(d, ignore_errors=True)
            r["run_secs"] = time.time() - tr
            rows.append(r)
            print(line(r) + f"  (run took {r['run_secs']:.0f} s)", flush=True)
            odd = []
            k = r["kinds"]
            busy_other = {ev: c for (who, ev), c in k.items() if who == "busy" and ev != "working"}
            if busy_other:
                odd.append(f"journal lines for busy silent panes in the window: {busy_other}")
            churn_kinds = {ev: c for (who, ev), c in k.items() if who == "churn"}
            if churn_kinds:
                odd.append(f"journal lines for churn panes in the window: {churn_kinds}")
            if r["journal_bad"]:
                odd.append(f"{r['journal_bad']} journal lines that are not JSON")
            if r.get("hdr_unparsed"):
                odd.append(f"{r['hdr_unparsed']} header looks without a count, e.g. {r.get('hdr_sample', '')!r}")
            if r.get("st_errors"):
                odd.append(f"{r['st_errors']} status calls failed: {r['st_first_error']}")
            if r.get("st_missing"):
                odd.append(f"{r['st_missing']} churn-pane readings absent from status --json")
            if r["spurious_died"]:
                odd.append(f"died lines for panes not killed: {' '.join(r['spurious_died'][:10])}")
            if r["exit"] not in (0, None):
                odd.append(f"agentwatch exit status {r['exit']} after SIGTERM / q")
            if not r.get("alive", True):
                odd.append("agentwatch was no longer running at the end")
            if r["warn"]:
                odd.append(f"{len(r['warn'])} WARN/ERROR log lines, first: {r['warn'][0][:200]}")
            for o in odd:
                print(f"N={n:<5} {name:<10} note: {o}", flush=True)

    print()
    if not BUSY:
        print("| panes (churn) | build | waiting edges | lag p50 / p95 / max ms | missed (of them late) | working edges "
              "| lag p50 / p95 ms | dropped (late) | header waiting shown / true | status agrees | status `running` "
              "| status call p50 / max ms |")
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            hdr = f"{r['hdr_shown']:.1f} / {r['hdr_true']:.1f}" if r.get("hdr_shown") is not None else "-"
            st = (f"{100 * r['st_agree'] / r['st_readings']:.0f} % ({r['st_agree']}/{r['st_readings']})"
                  if r.get("st_readings") else "-")
            run_ = (f"{r['st_running'] / r['st_calls']:.0f} of {r['churn']} churn, {r['st_running_all']:.0f} of "
                    f"{r['n']} all" if r["st_calls"] else "-")
            miss = (f"{r['wait_missed']} ({100 * r['wait_missed'] / r['wait_n']:.0f} %), {r['wait_late']} late"
                    if r["wait_n"] else "-")
            drop = (f"{r['work_dropped']} ({100 * r['work_dropped'] / r['work_n']:.0f} %), {r['work_late']} late"
                    if r["work_n"] else "-")
            print(f"| {r['n']} ({r['churn']}) | {r['name']} | {r['wait_n']} "
                  f"| {fmt(r['wait_p50'])} / {fmt(r['wait_p95'])} / {fmt(r['wait_max'])} | {miss} "
                  f"| {r['work_n']} | {fmt(r['work_p50'])} / {fmt(r['work_p95'])} | {drop} | {hdr} | {st} | {run_} "
                  f"| {fmt(r.get('st_p50'))} / {fmt(r.get('st_max'))} |")
        print()
    print("| panes (churn) | build | warm-up s | agentwatch CPU % | children CPU % | tmux CPU % | total % "
          "| tmux without agentwatch % | RSS MiB | spawns/min | deaths seen | died p50 / p95 ms "
          "| seen p50 / p95 ms |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        settle = fmt(r["settle"], ".1f", f">{SETTLE_CAP:.0f} ({r['known']}/{r['n']})")
        print(f"| {r['n']} ({r['churn']}) | {r['name']} | {settle} | {r['aw_cpu']:.2f} | {r['ch_cpu']:.2f} "
              f"| {r['tmux_cpu']:.2f} | {r['total']:.2f} | {r['tmux_base']:.2f} | {r['rss']:.1f} | {r['spawns_min']:.0f} "
              f"| {r['deaths_seen']}/{r['deaths']} | {fmt(r['died_p50'])} / {fmt(r['died_p95'])} "
              f"| {fmt(r['seen_p50'])} / {fmt(r['seen_p95'])} |")


if __name__ == "__main__":
    main()
