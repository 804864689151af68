"""Several hosts over ssh (issue 19): 3 hosts x 100 panes, beside the same 300 panes on the
local server, side by side in one run.

    python3 bench/hosts.py SECS /path/to/agentwatch

FAKE=/path/to/fake_agent as for scale.py. A real sshd on loopback (its own host key, a client
key and config in a temp dir: nothing of ~/.ssh is read) carries three "remote" tmux servers of
100 fake agents each; the local server is empty. Then the same agentwatch on one local server
of 300 agents, for comparison. Measured over SECS s: CPU of agentwatch, of its children (the
ssh clients), of the sshd sessions and of each tmux server; then deaths (SIGKILL at random
moments, 5 per host) and the latency from the kill to the journal's `died` event with that
host, per host. Kills only processes it started, only its own servers and its own sshd.

HOSTED=1: each remote pane runs an `sh` with the agent below it (`sh -c 'claude; exec sleep
…'`), the agent writing a line every 2 s, and the local comparison is skipped: the cost of
asking the hosts about their shells' panes, whose output makes them asked again at each
10 s sweep (one ssh exec per host per sweep).
"""
import json, os, random, shutil, signal, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import scale  # noqa: E402  (the /proc helpers and the tmux server of fake agents)

HOSTS = 3
PER_HOST = 100
DEATHS = 5
DEATH_SPAN = 8.0
SSHD = "/usr/sbin/sshd"
HOSTED = os.environ.get("HOSTED") == "1"
# An agent that writes a line every 2 s for an hour.
TICKING = "say tick\nsleep 2000\n" * 1800


def sshd_start(d):
    for k in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", f"{d}/{k}"], check=True)
    shutil.copy(f"{d}/client_key.pub", f"{d}/authorized_keys")
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with open(f"{d}/sshd_config", "w") as f:
        f.write(f"Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\n"
                "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
                "StrictModes no\nUsePAM no\nPidFile none\nLogLevel ERROR\nMaxSessions 100\nMaxStartups 100\n")
    user = os.environ.get("USER") or subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
    with open(f"{d}/ssh_config", "w") as f:
        f.write(f"Host bench\n  HostName 127.0.0.1\n  Port {port}\n  User {user}\n  IdentityFile {d}/client_key\n"
                f"  IdentitiesOnly yes\n  UserKnownHostsFile {d}/known_hosts\n  StrictHostKeyChecking accept-new\n"
                "  LogLevel ERROR\n")
    if os.geteuid() == 0:
        os.makedirs("/run/sshd", exist_ok=True)
    p = subprocess.Popen([SSHD, "-D", "-e", "-f", f"{d}/sshd_config"], stdin=subprocess.DEVNULL,
                         stderr=open(f"{d}/sshd.log", "w"))
    deadline = time.time() + 10
    while subprocess.run(["ssh", "-F", f"{d}/ssh_config", "-o", "BatchMode=yes", "bench", "true"],
                         capture_output=True).returncode != 0:
        if time.time() > deadline:
            raise RuntimeError("sshd did not start: " + open(f"{d}/sshd.log").read())
        time.sleep(0.1)
    return p


def descendants(pid):
    """Pids below `pid` (its sessions' sshd processes and what they run)."""
    out, todo = [], [pid]
    while todo:
        parent = todo.pop()
        for name in os.listdir("/proc"):
            if name.isdigit() and scale.ppid_of(int(name)) == parent:
                out.append(int(name))
                todo.append(int(name))
    return out


def sshd_sessions_cpu(pid):
    """CPU of the sshd session processes below the listener (not the tmux clients they run,
    which are counted with... nothing else: they are listed apart)."""
    total = {}
    for p in descendants(pid):
        try:
            comm = open(f"/proc/{p}/comm").read().strip()
            total[p] = (comm, scale.cpu_secs(p))
        except OSError:
            pass
    return total


def run(d, aw, secs, servers, config, label, sshd_pid=None):
    run_dir = f"{d}/run-{label}"
    for sub in ("state", "data", "config", "runtime", "home", "tmuxtmp"):
        os.makedirs(f"{run_dir}/{sub}", mode=0o700, exist_ok=True)
    local = servers[0]
    env = dict(local.env, XDG_STATE_HOME=f"{run_dir}/state", XDG_DATA_HOME=f"{run_dir}/data",
               XDG_CONFIG_HOME=f"{run_dir}/config", XDG_RUNTIME_DIR=f"{run_dir}/runtime", HOME=f"{run_dir}/home",
               TMUX_TMPDIR=f"{run_dir}/tmuxtmp")
    cfg = f"{run_dir}/config.toml"
    with open(cfg, "w") as f:
        f.write(config)
    journal = f"{run_dir}/state/agentwatch/journal.jsonl"
    err = open(f"{run_dir}/daemon.stderr", "w")
    proc = subprocess.Popen([aw, "daemon", "-S", local.sock, "-c", cfg], env=env, stdin=subprocess.DEVNULL,
                            stdout=err, stderr=err, cwd=f"{run_dir}/home")
    try:
        # Settle: every agent pane protected.
        t0 = time.time()
        while time.time() - t0 < 120:
            if all(len(s.remain_on()) == len(s.panes) for s in servers):
                break
            time.sleep(1)
        settle = time.time() - t0
        time.sleep(3)
        a0, c0 = scale.cpu_secs(proc.pid), scale.children_snapshot(proc.pid)
        s0 = [scale.cpu_secs(s.pid) for s in servers]
        h0 = sshd_sessions_cpu(sshd_pid) if sshd_pid else {}
        w0 = time.time()
        time.sleep(secs)
        a1, c1 = scale.cpu_secs(proc.pid), scale.children_snapshot(proc.pid)
        s1 = [scale.cpu_secs(s.pid) for s in servers]
        h1 = sshd_sessions_cpu(sshd_pid) if sshd_pid else {}
        dt = time.time() - w0
        r = {"label": label, "settle": settle,
             "aw": 100 * (a1 - a0) / dt, "children": 100 * scale.children_cpu(c0, c1) / dt,
             "tmux": [100 * (b - a) / dt for a, b in zip(s0, s1)],
             "rss": scale.status_kib(proc.pid, "VmRSS") / 1024,
             # The sshd sessions and the remote tmux control clients they run.
             "sshd": 100 * sum(c - h0.get(p, ("", 0.0))[1] for p, (n, c) in h1.items() if n == "sshd") / dt,
             "remote_clients": 100 * sum(c - h0.get(p, ("", 0.0))[1] for p, (n, c) in h1.items()
                                         if n.startswith("tmux")) / dt}
        # Deaths: at random moments, on each server with agents.
        kills = []  # (server index, pane, t)
        plan = []
        for i, s in enumerate(servers):
            if s.panes:
                for pane, pid in random.sample(s.panes, DEATHS):
                    plan.append((random.uniform(0, DEATH_SPAN), i, pane, pid))
        plan.sort()
        start = time.time()
        for at, i, pane, pid in plan:
            time.sleep(max(0, start + at - time.time()))
            if servers[i].kill_pane_process(pid):
                kills.append((i, pane, time.time() * 1000))
        time.sleep(4)
        died = {}
        if os.path.exists(journal):
            for line in open(journal):
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if e.get("event") == "died":
                    died.setdefault((e.get("host"), e.get("pane")), e["ts"])
        per = {}
        for i, pane, t in kills:
            host = None if i == 0 else f"h{i}"
            ts = died.get((host, pane))
            per.setdefault(host or "local", []).append(None if ts is None else ts - t)
        r["latency"] = per
        return r
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    secs, aw = float(sys.argv[1]), os.path.abspath(sys.argv[2])
    if not os.path.exists(SSHD):
        print("hosts.py: needs openssh-server (apt-get install openssh-server)", file=sys.stderr)
        sys.exit(2)
    scale.raise_nofile()
    d = tempfile.mkdtemp(prefix="aw-bench-hosts")
    sshd = None
    servers = []
    try:
        sshd = sshd_start(d)
        # Three hosts of 100 each, the local server empty.
        os.makedirs(f"{d}/local")
        servers.append(scale.Server(f"{d}/local", 0))
        hosts = ""
        for h in range(1, HOSTS + 1):
            os.makedirs(f"{d}/h{h}")
            s = (scale.Server(f"{d}/h{h}", PER_HOST, ("sh", "-c", "claude; exec sleep 1000000"), TICKING)
                 if HOSTED else scale.Server(f"{d}/h{h}", PER_HOST))
            servers.append(s)
            hosts += (f"\n[[hosts]]\nname = \"h{h}\"\nssh = \"bench\"\nssh_args = [\"-F\", \"{d}/ssh_config\"]\n"
                      f"socket_path = \"{s.sock}\"\ntmux = \"{scale.REAL_TMUX}\"\n")
        label = "3x100-hosted-over-ssh" if HOSTED else "3x100-over-ssh"
        r_hosts = run(d, aw, secs, servers, scale.CONFIG + hosts, label, sshd.pid)
        for s in servers:
            s.close()
        servers = []
        r_local = None
        if not HOSTED:
            os.makedirs(f"{d}/one")
            one = scale.Server(f"{d}/one", HOSTS * PER_HOST)
            servers = [one]
            r_local = run(d, aw, secs, servers, scale.CONFIG, "300-local")
    finally:
        for s in servers:
            s.close()
        if sshd:
            sshd.kill()
            sshd.wait()
        if os.environ.get("KEEP") != "1":
            shutil.rmtree(d, ignore_errors=True)
        else:
            print(f"kept {d}")

    def lat(xs):
        seen = sorted(x for x in xs if x is not None)
        return f"{len(seen)}/{len(xs)} seen, p50 {scale.pct(seen, 0.5)} ms, max {round(seen[-1]) if seen else None} ms"

    print("| run | settle s | agentwatch % | its ssh clients % | sshd sessions % | remote control clients % "
          "| tmux servers (local + each host) % | RSS MiB |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    runs = [r for r in (r_hosts, r_local) if r]
    for r in runs:
        print(f"| {r['label']} | {r['settle']:.1f} | {r['aw']:.2f} | {r['children']:.2f} | "
              f"{r.get('sshd', 0):.2f} | {r.get('remote_clients', 0):.2f} | "
              f"{' + '.join(f'{x:.2f}' for x in r['tmux'])} | {r['rss']:.1f} |")
    for r in runs:
        for host, xs in sorted(r["latency"].items()):
            print(f"{r['label']} {host}: deaths {lat(xs)}")


if __name__ == "__main__":
    main()
