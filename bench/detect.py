"""Driver for bench/detect.sh. Private sockets in a temp dir; kills only what it started."""
import json, os, random, shutil, subprocess, sys, tempfile, time

SECS = int(sys.argv[1]) if len(sys.argv) > 1 else 30
NS = [int(a) for a in sys.argv[2:]] or [10, 100, 300]
ROOT = os.getcwd()
AW = f"{ROOT}/target/release/agentwatch"
FAKE = f"{ROOT}/target/release/examples/fake_agent"
TCK = os.sysconf("SC_CLK_TCK")
REAL_TMUX = shutil.which("tmux")


def cpu_secs(pid):
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / TCK  # utime + stime


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Server:
    def __init__(self, d, n):
        self.d, self.sock = d, f"{d}/agents.sock"
        self.env = dict(os.environ, PATH=f"{d}/bin:{os.environ['PATH']}", FAKE_AGENT_DIR=f"{d}/agents")
        self.env.pop("TMUX", None)
        self.env.pop("TMUX_PANE", None)
        os.makedirs(f"{d}/bin", exist_ok=True)
        os.makedirs(f"{d}/agents", exist_ok=True)
        if not os.path.exists(f"{d}/bin/claude"):
            os.symlink(FAKE, f"{d}/bin/claude")
        with open(f"{d}/agents/claude.plan", "w") as f:
            f.write("hang\n")
        self.t("-f", "/dev/null", "new-session", "-d", "-s", "s0", "-x", "120", "-y", "30", "--", "sleep", "1000000")
        self.t("set-option", "-s", "exit-empty", "off")
        self.t("set-option", "-g", "remain-on-exit", "on")
        self.t("set-option", "-g", "history-limit", "2000")
        self.pid = int(self.t("display-message", "-p", "#{pid}").strip())
        self.panes = []
        for i in range(n):
            out = self.t("new-window", "-d", "-t", f"s0:", "-P", "-F", "#{pane_id} #{pane_pid}", "--", "claude")
            pane, pid = out.split()
            self.panes.append((pane, int(pid)))

    def t(self, *args):
        return subprocess.run([REAL_TMUX, "-S", self.sock, *args], env=self.env, capture_output=True, text=True, check=True).stdout

    def close(self):
        subprocess.run([REAL_TMUX, "-S", self.sock, "kill-server"], env=self.env, capture_output=True)


def run_agentwatch(d, srv, control, secs, kills):
    """Start agentwatch in a UI server, kill `kills` panes at random times, measure."""
    log = f"{d}/tmux-calls-{control}.log"
    wrap = f"{d}/wrap-{control}"
    os.makedirs(wrap, exist_ok=True)
    with open(f"{wrap}/tmux", "w") as f:
        f.write(f"#!/bin/sh\necho x >> '{log}'\nexec '{REAL_TMUX}' \"$@\"\n")
    os.chmod(f"{wrap}/tmux", 0o755)
    state = f"{d}/state-{control}"
    cfg = f"{d}/cfg-{control}.toml"
    with open(cfg, "w") as f:
        f.write(f"control_mode = {'true' if control else 'false'}\n[auto_resume]\nenabled = false\n[notify]\nbell = false\n")
    ui = f"{d}/ui-{control}.sock"
    env = dict(srv.env, PATH=f"{wrap}:{srv.env['PATH']}")
    subprocess.run([REAL_TMUX, "-S", ui, "-f", "/dev/null", "new-session", "-d", "-x", "200", "-y", "50",
                    f"env XDG_STATE_HOME={state} XDG_DATA_HOME={d}/data PATH={wrap}:{env['PATH']} {AW} -S {srv.sock} -c {cfg}"],
                   env=env, check=True)
    aw_pid = int(subprocess.run([REAL_TMUX, "-S", ui, "display-message", "-p", "#{pane_pid}"], env=env,
                                capture_output=True, text=True).stdout.strip())
    # Wait until it shows every pane, then let it settle.
    for _ in range(300):
        screen = subprocess.run([REAL_TMUX, "-S", ui, "capture-pane", "-p"], env=env, capture_output=True, text=True).stdout
        if f"{len(srv.panes)} running" in screen:
            break
        time.sleep(0.1)
    time.sleep(3)
    calls0 = sum(1 for _ in open(log)) if os.path.exists(log) else 0
    aw0, tm0, t0 = cpu_secs(aw_pid), cpu_secs(srv.pid), time.time()
    victims = random.sample([p for p in srv.panes if p[0] not in KILLED], kills)
    at = sorted(random.uniform(1, secs - 3) for _ in victims)
    killed = {}
    for (pane, pid), when in zip(victims, at):
        time.sleep(max(0, t0 + when - time.time()))
        killed[pane] = time.time() * 1000
        os.kill(pid, 9)
        KILLED.add(pane)
    time.sleep(max(0, t0 + secs - time.time()))
    aw1, tm1, t1 = cpu_secs(aw_pid), cpu_secs(srv.pid), time.time()
    calls1 = sum(1 for _ in open(log)) if os.path.exists(log) else 0
    rss = rss_mib(aw_pid)
    subprocess.run([REAL_TMUX, "-S", ui, "kill-server"], env=env, capture_output=True)
    died = {}
    path = f"{state}/agentwatch/journal.jsonl"
    if os.path.exists(path):
        for line in open(path):
            e = json.loads(line)
            if e["event"] == "died" and e["pane"] in killed:
                died[e["pane"]] = e["ts"]
    lat = sorted(died[p] - killed[p] for p in killed if p in died)
    mins = (t1 - t0) / 60
    return {
        "transport": "control" if control else "exec",
        "kills": len(killed), "seen": len(lat),
        "p50": pct(lat, 0.5), "p95": pct(lat, 0.95), "max": lat[-1] if lat else None,
        "aw_cpu_pct": 100 * (aw1 - aw0) / (t1 - t0),
        "tmux_cpu_pct": 100 * (tm1 - tm0) / (t1 - t0),
        "rss_mib": rss,
        "spawns_per_min": (calls1 - calls0) / mins,
    }


def pct(xs, p):
    return round(xs[min(len(xs) - 1, int(p * len(xs)))]) if xs else None


def peer_loop(srv, secs, kind):
    """A peer's polling, reproduced as a plain loop; returns tmux server CPU % and spawns/min."""
    tm0, t0, spawns = cpu_secs(srv.pid), time.time(), 0
    while time.time() - t0 < secs:
        tick = time.time()
        if kind == "capture-per-pane":
            for pane, _ in srv.panes:
                subprocess.run([REAL_TMUX, "-S", srv.sock, "capture-pane", "-p", "-t", pane], env=srv.env, capture_output=True)
                spawns += 1
            period = 0.5
        elif kind == "list-panes-2s":
            subprocess.run([REAL_TMUX, "-S", srv.sock, "list-panes", "-a", "-F", "#{pane_id} #{pane_dead}"], env=srv.env, capture_output=True)
            spawns += 1
            period = 2.0
        else:
            period = 1.0
        time.sleep(max(0, period - (time.time() - tick)))
    t1 = time.time()
    return {"tmux_cpu_pct": 100 * (cpu_secs(srv.pid) - tm0) / (t1 - t0), "spawns_per_min": spawns / ((t1 - t0) / 60)}


KILLED = set()
print(f"# machine: {os.cpu_count()} cores, {os.uname().release}; {subprocess.run([REAL_TMUX, '-V'], capture_output=True, text=True).stdout.strip()}")
print(f"# date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {SECS} s per run; tick 500 ms")
rows = []
for n in NS:
    d = tempfile.mkdtemp(prefix="aw-bench-")
    srv = Server(d, n)
    KILLED.clear()
    try:
        idle = peer_loop(srv, min(SECS, 10), "idle")["tmux_cpu_pct"]
        kills = max(3, min(20, n // 10))
        res = {t: run_agentwatch(d, srv, t == "control", SECS, kills) for t in ("control", "exec")}
        cap = peer_loop(srv, SECS, "capture-per-pane")
        lp = peer_loop(srv, SECS, "list-panes-2s")
    finally:
        srv.close()
        shutil.rmtree(d, ignore_errors=True)
    for t, r in res.items():
        extra = max(r["tmux_cpu_pct"] - idle, 0.01)
        rows.append((n, t, r, extra, cap, lp, idle))
        print(f"N={n:<4} {t:<8} seen {r['seen']}/{r['kills']}  latency ms p50={r['p50']} p95={r['p95']} max={r['max']}  "
              f"agentwatch cpu={r['aw_cpu_pct']:.2f}% rss={r['rss_mib']:.1f}MiB  tmux cpu={r['tmux_cpu_pct']:.2f}% "
              f"(idle {idle:.2f}%, extra {extra:.2f}%)  tmux spawns/min={r['spawns_per_min']:.0f}")
    print(f"N={n:<4} peers    capture-per-pane: tmux cpu={cap['tmux_cpu_pct']:.2f}% spawns/min={cap['spawns_per_min']:.0f}; "
          f"list-panes/2s: tmux cpu={lp['tmux_cpu_pct']:.2f}% spawns/min={lp['spawns_per_min']:.0f}")
    ctl = [r for (nn, t, r, e, *_ ) in rows if nn == n and t == "control"][0]
    extra = max(ctl["tmux_cpu_pct"] - idle, 0.01)
    print(f"N={n:<4} ratio    tmux server cpu, per-pane capture vs agentwatch (control): "
          f"{(cap['tmux_cpu_pct'] - idle) / extra:.1f}x")
