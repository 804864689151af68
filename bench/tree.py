"""Driver for bench/tree.sh: the cost of finding agents in panes' process trees.

N panes on a private tmux server, a third each of: the agent as the pane's process, the agent
under a wrapper script that runs it as a child (`cc`), and the agent under `bash -c '...;
sleep'`. `agentwatch daemon` watches them (auto-resume off) for SECS seconds of steady state;
its CPU (user+sys from /proc) and RSS are measured, the tmux processes it starts are counted
by a logging `tmux` on its PATH, and `agentwatch status --json` says how many agents it sees
running. Each binary given runs in turn on the same server (side by side in one run).
Private sockets in a temp dir; kills only what it started.

    python3 bench/tree.py SECS N NAME=BINARY [NAME=BINARY ...]
"""
import json, os, shutil, signal, subprocess, sys, tempfile, time

SECS = int(sys.argv[1])
N = int(sys.argv[2])
BINARIES = [a.split("=", 1) for a in sys.argv[3:]]
ROOT = os.getcwd()
FAKE = f"{ROOT}/target/release/examples/fake_agent"
TCK = os.sysconf("SC_CLK_TCK")
REAL_TMUX = shutil.which("tmux")


def cpu_secs(pid):
    with open(f"/proc/{pid}/stat") as f:
        rest = f.read().rsplit(")", 1)[1].split()
    return (int(rest[11]) + int(rest[12])) / TCK


def rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


d = tempfile.mkdtemp(prefix="aw-tree-")
sock = f"{d}/agents.sock"
env = dict(os.environ, PATH=f"{d}/bin:{os.environ['PATH']}", FAKE_AGENT_DIR=f"{d}/agents", TMUX_TMPDIR=d)
env.pop("TMUX", None)
env.pop("TMUX_PANE", None)
os.makedirs(f"{d}/bin")
os.makedirs(f"{d}/agents")
os.symlink(FAKE, f"{d}/bin/claude")
with open(f"{d}/bin/cc", "w") as f:
    f.write('#!/bin/bash\nclaude --dangerously-skip-permissions "$@"\nexit $?\n')
os.chmod(f"{d}/bin/cc", 0o755)
with open(f"{d}/agents/claude.plan", "w") as f:
    f.write("hang\n")


def t(*args):
    return subprocess.run([REAL_TMUX, "-S", sock, *args], env=env, capture_output=True, text=True, check=True).stdout


try:
    t("-f", "/dev/null", "new-session", "-d", "-s", "s0", "-x", "120", "-y", "30", "--", "sleep", "1000000")
    t("set-option", "-s", "exit-empty", "off")
    t("set-option", "-g", "history-limit", "2000")
    shapes = [["claude"], ["cc"], ["bash", "-c", "claude; sleep 1000000"]]
    if os.environ.get("TREE_SHAPES") == "agent":
        shapes = [["claude"]]
    for i in range(N):
        t("new-window", "-d", "-t", "s0:", "--", *shapes[i % len(shapes)])
    time.sleep(2)
    nproc = len([p for p in os.listdir("/proc") if p.isdigit()])
    print(f"# machine: {os.cpu_count()} cores, {os.uname().release}; {subprocess.run([REAL_TMUX, '-V'], capture_output=True, text=True).stdout.strip()}")
    kinds = "the agent as the pane's process" if len(shapes) == 1 else "a third each: agent, wrapper cc, bash -c"
    print(f"# date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {N} panes ({kinds}); {SECS} s steady state; {nproc} processes on the machine")
    results = {}
    for run, (name, binary) in enumerate(BINARIES):
        log = f"{d}/tmux-calls-{run}.log"
        wrap = f"{d}/wrap-{run}"
        os.makedirs(wrap)
        with open(f"{wrap}/tmux", "w") as f:
            f.write(f"#!/bin/sh\necho x >> '{log}'\nexec '{REAL_TMUX}' \"$@\"\n")
        os.chmod(f"{wrap}/tmux", 0o755)
        cfg = f"{d}/cfg.toml"
        with open(cfg, "w") as f:
            f.write("[auto_resume]\nenabled = false\n[notify]\nbell = false\n")
        aenv = dict(env, PATH=f"{wrap}:{env['PATH']}", XDG_STATE_HOME=f"{d}/state-{run}", XDG_DATA_HOME=f"{d}/data")
        daemon = subprocess.Popen([binary, "-S", sock, "-c", cfg, "daemon"], env=aenv,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(8)  # start-up: every pane recognised, options written
        calls0 = sum(1 for _ in open(log)) if os.path.exists(log) else 0
        c0, t0 = cpu_secs(daemon.pid), time.time()
        time.sleep(SECS)
        c1, t1 = cpu_secs(daemon.pid), time.time()
        calls1 = sum(1 for _ in open(log)) if os.path.exists(log) else 0
        rss = rss_mib(daemon.pid)
        out = subprocess.run([binary, "-S", sock, "-c", cfg, "status", "--json"], env=aenv,
                             capture_output=True, text=True).stdout
        running = sum(1 for r in json.loads(out or "[]") if r["state"] == "running")
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=10)
        r = {
            "cpu": 100 * (c1 - c0) / (t1 - t0),
            "rss": rss,
            "spawns": (calls1 - calls0) / ((t1 - t0) / 60),
            "running": running,
        }
        results.setdefault(name, []).append(r)
        print(f"{name:<10} agents seen running {r['running']}/{N}  cpu {r['cpu']:.2f}% of a core  "
              f"rss {r['rss']:.1f} MiB  tmux processes/min {r['spawns']:.0f}")
    names = list(results)
    if len(names) == 2:
        a, b = names
        mean = lambda n: sum(r["cpu"] for r in results[n]) / len(results[n])
        print(f"ratio      mean cpu {b}/{a} over {len(results[a])} runs each: "
              f"{mean(b):.2f}% / {mean(a):.2f}% = {mean(b) / max(mean(a), 0.001):.2f}")
finally:
    subprocess.run([REAL_TMUX, "-S", sock, "kill-server"], env=env, capture_output=True)
    shutil.rmtree(d, ignore_errors=True)
