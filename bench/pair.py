"""Builds side by side at the same time (bench/RESULTS.md, 2026-12-05): each build gets its
own private tmux server with N busy-looking fake claude panes (as bench/churn.py makes them,
BUSY=1) and its dashboard at 160x45 (UI=1); once every pane is known and SETTLE s more have
passed, the CPU of each dashboard and of each server is read over the same SLICES slices of
SECS s. One machine's noise then falls on every build alike, which sequential runs (minutes
apart) do not give: compare the builds slice by slice.

    python3 bench/pair.py SLICES SECS name=/path/to/agentwatch [name2=/path ...]
    e.g. python3 bench/pair.py 6 30 before=/tmp/before/agentwatch after=target/release/agentwatch

Env: N=1000 panes per server; CHURN_EVERY=3 makes every third pane churn as in churn.py (0,
the default: none); UI=0 the daemon instead of the dashboard; SETTLE=15 (s); FAKE= as for
churn.py. A build named `none=-` is a server with no agentwatch at all: what the agents and
tmux cost by themselves, in the same slices. Kills only what it started: its own servers (by
their sockets) and the fake agents they ran (by pid).
"""
import os, shutil, sys, tempfile, time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("UI", "1")
os.environ["BUSY"] = "1"
import scale, churn  # noqa: E402
from scale import cpu_secs  # noqa: E402


def main():
    if len(sys.argv) < 4 or any("=" not in a for a in sys.argv[3:]):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    slices, secs = int(sys.argv[1]), float(sys.argv[2])
    builds = [a.split("=", 1) for a in sys.argv[3:]]
    n = int(os.environ.get("N", "1000"))
    settle = float(os.environ.get("SETTLE", "15"))
    every = int(os.environ.get("CHURN_EVERY", "0"))
    shape = f"one in {every} churning {churn.CHURN_MIN:g}-{churn.CHURN_MAX:g} s, the rest " if every else ""
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {n} panes per server, {shape}busy-looking; "
          f"{'the dashboard 160x45' if scale.UI else 'the daemon'}; {slices} slices of {secs:g} s after {settle:g} s; builds: "
          + ", ".join(f"{k}={v}" for k, v in builds), flush=True)
    runs = []
    try:
        for name, aw in builds:
            d = tempfile.mkdtemp(prefix=f"aw-pair-{name}-")
            srv = churn.Server(d, n, every)
            runs.append([name, d, srv, None])
            if aw == "-":
                continue
            run, cfg, _, env = scale.run_dirs(d, name, srv, churn.CONFIG)
            err = open(f"{run}/err", "w")
            runs[-1][3] = scale.start(aw, srv, run, cfg, env, err)
        for name, _, srv, proc in runs:
            if proc is not None:
                scale.settle(proc, srv.known, n, time.time(), name, os.devnull)
        time.sleep(settle)
        total = {name: [0.0, 0.0] for name, *_ in runs}
        for k in range(slices):
            aw_secs = lambda p: cpu_secs(p.pid) if p is not None else 0.0  # noqa: E731
            before = {name: (aw_secs(p), cpu_secs(s.pid)) for name, _, s, p in runs}
            t0 = time.time()
            time.sleep(secs)
            dt = time.time() - t0
            row = []
            for name, _, s, p in runs:
                da, ds = aw_secs(p) - before[name][0], cpu_secs(s.pid) - before[name][1]
                total[name][0] += da
                total[name][1] += ds
                row.append(f"{name}: aw={100 * da / dt:.2f}% tmux={100 * ds / dt:.2f}% sum={100 * (da + ds) / dt:.2f}%")
            print(f"slice {k}: " + "   ".join(row), flush=True)
        span = slices * secs
        print("total: " + "   ".join(f"{name}: aw={100 * a / span:.2f}% tmux={100 * b / span:.2f}% "
                                     f"sum={100 * (a + b) / span:.2f}%" for name, (a, b) in total.items()))
    finally:
        for name, d, srv, proc in runs:
            if proc is not None and proc.poll() is None:
                proc.send_signal(15)
                try:
                    proc.wait(15)
                except Exception:  # noqa: BLE001 (leave nothing running whatever happened)
                    proc.kill()
            srv.close()
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
