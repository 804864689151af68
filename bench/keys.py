"""Key latency while deaths are absorbed (issue 16): N fake agent panes on a private tmux server,
the dashboard at 160x45 in a second private server; the time from send-keys `?` to the help on
screen, five times at rest, then right after 100 panes are SIGKILLed at once, then 0.5 s later.

    python3 bench/keys.py /path/to/agentwatch N   (the fake agent: FAKE, default as below)

Private sockets in a temp dir; kills only its own panes and servers."""
import os, subprocess, time, random, tempfile, shutil, sys
AW = os.path.abspath(sys.argv[1]); N = int(sys.argv[2]); FAKE = os.path.abspath(os.environ.get("FAKE", "target/release/examples/fake_agent"))
T = shutil.which("tmux")
d = tempfile.mkdtemp(prefix="keylat-")
os.makedirs(f"{d}/bin"); os.makedirs(f"{d}/agents"); os.makedirs(f"{d}/home")
os.symlink(FAKE, f"{d}/bin/claude"); open(f"{d}/agents/claude.plan","w").write("hang\n")
env = dict(os.environ, PATH=f"{d}/bin:"+os.environ["PATH"], FAKE_AGENT_DIR=f"{d}/agents", HOME=f"{d}/home",
           XDG_STATE_HOME=f"{d}/state", XDG_DATA_HOME=f"{d}/data", XDG_CONFIG_HOME=f"{d}/cfg", TMUX_TMPDIR=f"{d}")
env.pop("TMUX", None); env.pop("TMUX_PANE", None)
S=f"{d}/a.sock"; U=f"{d}/ui.sock"
def t(*a, sock=S): return subprocess.run([T,"-S",sock,*a],env=env,capture_output=True,text=True).stdout
import resource
def nofile():
    s,h=resource.getrlimit(resource.RLIMIT_NOFILE); resource.setrlimit(resource.RLIMIT_NOFILE,(h,h))
subprocess.run([T,"-S",S,"-f","/dev/null","new-session","-d","-s","s0","--","sleep","100000"],env=env,preexec_fn=nofile)
t("set","-s","exit-empty","off")
pids=[]
for b in range(0,N,50):
    a=[]
    for i in range(b,min(b+50,N)): a+=["new-window","-d","-t","s0:","-P","-F","#{pane_pid}","--","claude",";"]
    pids+= [int(x) for x in t(*a[:-1]).split()]
open(f"{d}/cfg.toml","w").write("[auto_resume]\nenabled = false\n[notify]\nbell = false\n")
subprocess.run([T,"-S",U,"-f","/dev/null","new-session","-d","-x","160","-y","45",f"exec {AW} -S {S} -c {d}/cfg.toml"],env=env)
def screen(): return t("capture-pane","-p",sock=U)
end=time.time()+30
while f"{N} running" not in screen() and time.time()<end: time.sleep(0.1)
time.sleep(3)
def key_latency(k, want):
    t0=time.time(); t("send-keys",k,sock=U)
    while want not in screen():
        if time.time()-t0>5: return None
        time.sleep(0.005)
    return (time.time()-t0)*1000
def help_roundtrip():
    a=key_latency("?", "Esc or ? closes"); b=key_latency("Escape", "running for")
    return a
quiet=[help_roundtrip() for _ in range(5)]
victims=random.sample(pids, 100)
for p in victims: os.kill(p,9)
burst=help_roundtrip()
time.sleep(0.5)
after=help_roundtrip()
print(f"N={N} key to screen (help opens), ms: quiet {[round(x) for x in quiet if x]}, right after 100 SIGKILLs {burst and round(burst)}, 0.5 s later {after and round(after)}")
print(screen().splitlines()[0])
t("kill-server",sock=U); t("kill-server")
shutil.rmtree(d, ignore_errors=True)
