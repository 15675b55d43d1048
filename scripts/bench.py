"""Benchmarks of running a graph (driven by scripts/bench, which builds what they need).

Not tests: the machine may be shared and noisy, so every figure is a median of several runs and
every comparison is a ratio of runs made in turn (A B A B ...) within this one call. Every run's
exit code and what it ran (the call log of the `pulumi` it used) are checked; anything unexpected
stops the script with exit 1 and says why.
"""

import os
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

RUNNER = os.environ["BENCH_RUNNER"]
BASE = os.environ.get("RUNNER_BASE") or None  # another build, measured beside RUNNER
STANDIN = os.environ["BENCH_STANDIN"]
NINJA = os.environ["BENCH_NINJA"]
REPO = os.environ["BENCH_REPO"]
RUNS = int(os.environ.get("BENCH_RUNS", "3"))
SCALE = int(os.environ.get("BENCH_SCALE", "4"))
STACK = "bench"

# The `pulumi` of the generated workspaces: scripts/bench-pulumi.c, built by scripts/bench (a C
# program, so that its own start costs what the real CLI's cannot be below and the runner's cost
# is not hidden behind a shell's). It logs each call, sleeps the project's time on `up`, writes an
# event log like the real CLI's when asked, prints `{}` for `stack output`, and gives a stack file
# its passphrase salt as the real CLI does.
FAKE_PULUMI = os.environ["BENCH_FAKE_PULUMI"]


def fail(message):
    print(f"bench: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def median(xs):
    return statistics.median(xs)


def median_ratio(xs, ys):
    """The median of xs[i] / ys[i]: runs made in turn, compared pairwise."""
    return median([x / y for x, y in zip(xs, ys, strict=True)])


# --- generated workspaces -------------------------------------------------------------------

class Project:
    def __init__(self, name, needs, ms):
        self.name, self.needs, self.ms = name, needs, ms


def random_dag(n, seed, lo_ms, hi_ms):
    """Each project needs up to 3 of the 50 declared before it; durations uniform in [lo, hi]."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        needs = sorted({rnd.randrange(max(0, i - 50), i) for _ in range(rnd.randint(0, 3))}) if i else []
        out.append(Project(f"p{i}", [f"p{j}" for j in needs], rnd.randint(lo_ms, hi_ms) if hi_ms else 0))
    return out


def heavy_chain_last():
    """24 light chains of 8 short projects, declared first, then one chain of 6 heavy projects:
    by count the light chains are the longest, by weight the heavy one is."""
    rnd = random.Random(11)
    out = []
    for c in range(24):
        for k in range(8):
            needs = [f"l{c}-{k - 1}"] if k else []
            out.append(Project(f"l{c}-{k}", needs, rnd.randint(30, 50)))
    for k in range(6):
        out.append(Project(f"heavy{k}", [f"heavy{k - 1}"] if k else [], 500))
    out += [Project("tail-a", ["heavy5", "l0-7"], 20), Project("tail-b", ["l23-7"], 20)]
    return out


def make_workspace(projects, sleeps):
    ws = tempfile.mkdtemp(prefix="runner-bench-")
    os.makedirs(f"{ws}/providers")
    os.makedirs(f"{ws}/config/pulumi")
    os.makedirs(f"{ws}/bin")
    shutil.copy(FAKE_PULUMI, f"{ws}/bin/pulumi")
    with open(f"{ws}/providers/synth.toml", "w") as f:
        f.write('description = "Synthetic graph for benchmarks"\n')
        for p in projects:
            path = f"projects/{p.name}"
            os.makedirs(f"{ws}/{path}")
            lines = [f"name: {p.name}", "runtime: yaml"]
            if p.needs:
                lines.append("resources:")
                for j in p.needs:
                    lines += [f"  {j.replace('-', '_')}:", "    type: pulumi:pulumi:StackReference",
                              "    properties:", f"      name: ${{pulumi.organization}}/{j}/${{pulumi.stack}}"]
            lines += ["outputs:", f"  out: {p.name}"]
            lines += [f'  from_{j.replace("-", "_")}: ${{{j.replace("-", "_")}.outputs["out"]}}' for j in p.needs]
            with open(f"{ws}/{path}/Pulumi.yaml", "w") as y:
                y.write("\n".join(lines) + "\n")
            if sleeps:
                with open(f"{ws}/{path}/.bench-seconds", "w") as s:
                    s.write(f"{p.ms / 1000:.3f}\n")
            f.write(f'\n[[project]]\nname = "{p.name}"\npath = "{path}"\nlayer = "services"\n')
            if p.needs:
                f.write("needs = [" + ", ".join(f'"{j}"' for j in p.needs) + "]\n")
            if sleeps:
                f.write(f"estimate = {max(1, p.ms)}\n")
    return ws


def passphrase_salt():
    """The `encryptionsalt` of a stack whose passphrase is `bench`, made once by the stand-in (the
    runner checks the passphrase against it as against the real CLI's)."""
    d = tempfile.mkdtemp(prefix="runner-bench-salt-")
    with open(f"{d}/Pulumi.yaml", "w") as f:
        f.write("name: salt\nruntime: yaml\n")
    env = dict(os.environ, PULUMI_CONFIG_PASSPHRASE="bench", PULUMI_HOME=f"{d}/home",
               PULUMI_BACKEND_URL=f"file://{d}/state")
    os.makedirs(f"{d}/state")
    made = subprocess.run([STANDIN, "stack", "init", STACK], cwd=d, env=env, capture_output=True, text=True,
                          check=False)
    if made.returncode != 0:
        fail(f"the stand-in could not make a stack to take its passphrase salt from:\n{made.stderr}")
    with open(f"{d}/Pulumi.{STACK}.yaml") as f:
        salt = next((line.split(":", 1)[1].strip() for line in f if line.startswith("encryptionsalt:")), None)
    shutil.rmtree(d, ignore_errors=True)
    if not salt:
        fail("the stand-in's new stack file holds no encryptionsalt")
    return salt


SALT = None


def env_for(ws, calls):
    global SALT
    SALT = SALT or passphrase_salt()
    env = dict(os.environ)
    env.update({
        "PATH": f"{ws}/bin:{os.environ['PATH']}",
        "PULUMI_CONFIG_PASSPHRASE": "bench",
        "BENCH_SALT": SALT,
        "PULUMI_HOME": f"{ws}/.pulumi-home",
        "BENCH_CALLS": calls,
        "CI": "true",
    })
    env.pop("PULUMI_BACKEND_URL", None)
    env.pop("PULUMI_STACK", None)
    return env


def timed(argv, env, cwd, what):
    """Wall milliseconds of a whole command; its exit code must be 0."""
    with open(f"{cwd}/.bench-out", "wb") as out:
        t = time.perf_counter()
        # No terminal for the runner: a run at a terminal asks before it starts.
        code = subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                              stderr=subprocess.STDOUT, check=False).returncode
        ms = (time.perf_counter() - t) * 1000
    if code != 0:
        with open(f"{cwd}/.bench-out", errors="replace") as f:
            tail = f.read()[-3000:]
        fail(f"{what} exited {code}:\n{tail}")
    return ms


def read_calls(path):
    """[(directory, [args…])] in the order they were logged."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [(parts[0], parts[1:]) for parts in (line.rstrip("\n").split("\t") for line in f) if parts[0]]


def by_project(ws, calls):
    grouped = {}
    for d, args in calls:
        grouped.setdefault(os.path.basename(d), []).append(args)
    return grouped


def check_ran(ws, projects, calls, what, op="up"):
    grouped = by_project(ws, calls)
    for p in projects:
        ups = [a for a in grouped.get(p.name, []) if a and a[0] == op]
        if len(ups) != 1:
            fail(f"{what}: project {p.name} ran `{op}` {len(ups)} times: {grouped.get(p.name)}")
    if len(grouped) != len(projects):
        fail(f"{what}: calls in {len(grouped)} directories for {len(projects)} projects")


def run_runner(binary, ws, projects, jobs, what, fresh_state=True, extra=()):
    """One `up` of the whole graph; returns (ms, calls)."""
    if fresh_state:
        shutil.rmtree(f"{ws}/.runner", ignore_errors=True)
        shutil.rmtree(f"{ws}/.pulumi-state", ignore_errors=True)
    calls = f"{ws}/calls-runner.log"
    if os.path.exists(calls):
        os.remove(calls)
    argv = [binary, "--workspace", ws, "up", "-p", "synth", "-s", STACK, "--parallel", str(jobs), "--output", "plain",
            *extra]
    ms = timed(argv, env_for(ws, calls), ws, what)
    got = read_calls(calls)
    check_ran(ws, projects, got, what)
    return ms, got


def replay_files(ws, projects, calls):
    """A Makefile and a build.ninja that make the same `pulumi` calls, one shell line per project
    in its directory, with the same dependencies and the projects in declaration order."""
    grouped = by_project(ws, calls)
    line = {}
    for p in projects:
        d = f"{ws}/projects/{p.name}"
        line[p.name] = f"cd {shlex.quote(d)} && " + " && ".join(
            "pulumi " + " ".join(shlex.quote(a) for a in args) for args in grouped[p.name])
    with open(f"{ws}/Makefile", "w") as f:
        names = [p.name for p in projects]
        f.write(".PHONY: all " + " ".join(names) + "\n")
        f.write("all: " + " ".join(names) + "\n")
        for p in projects:
            f.write(f"{p.name}: {' '.join(p.needs)}\n\t@{line[p.name].replace('$', '$$')}\n")
    with open(f"{ws}/build.ninja", "w") as f:
        f.write("rule run\n  command = $cmd\n")
        for p in projects:
            deps = (" " + " ".join(p.needs)) if p.needs else ""
            cmd = line[p.name].replace("$", "$$")
            f.write(f"build {p.name}: run{deps}\n  cmd = {cmd}\n")
        f.write("default " + " ".join(p.name for p in projects) + "\n")


def run_peer(tool, ws, projects, jobs, expected_calls, what):
    calls = f"{ws}/calls-{tool}.log"
    if os.path.exists(calls):
        os.remove(calls)
    if tool == "make":
        argv = ["make", "-s", "-j", str(jobs), "-f", f"{ws}/Makefile", "all"]
    else:
        shutil.rmtree(f"{ws}/.ninja_log", ignore_errors=True)
        for f in (".ninja_log", ".ninja_deps"):
            if os.path.exists(f"{ws}/{f}"):
                os.remove(f"{ws}/{f}")
        argv = [NINJA, "-C", ws, "-j", str(jobs)]
    ms = timed(argv, env_for(ws, calls), ws, what)
    got = read_calls(calls)
    if sorted(map(repr, got)) != sorted(map(repr, expected_calls)):
        fail(f"{what}: made {len(got)} pulumi calls, the runner {len(expected_calls)}, or not the same ones")
    return ms


def bounds(projects, jobs, calls_ms=0):
    """max(critical path, work / jobs); `calls_ms` added to every project's time (the cost of its
    pulumi calls, which no executor can skip)."""
    ms = {p.name: p.ms + calls_ms for p in projects}
    longest = {}
    for p in projects:  # declared after what they need
        longest[p.name] = ms[p.name] + max((longest[n] for n in p.needs), default=0)
    critical, work = max(longest.values()), sum(ms.values())
    return critical, work, max(critical, work / jobs)


def calls_cost(ws, projects, calls):
    """Milliseconds per project of its pulumi calls alone: the replayed calls of every project one
    after another (make -j1), each `sleep` made for 0 s (its process start is part of the cost),
    the median of RUNS runs."""
    log = f"{ws}/calls-cost.log"
    if os.path.exists(log):
        os.remove(log)
    env = env_for(ws, log)
    env["BENCH_NO_SLEEP"] = "1"
    times = []
    for _ in range(RUNS):
        t = time.perf_counter()
        code = subprocess.run(["make", "-s", "-j1", "-f", f"{ws}/Makefile", "all"], env=env, cwd=ws,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=False).returncode
        times.append((time.perf_counter() - t) * 1000)
        if code != 0:
            fail(f"make -j1 replaying the calls with sleeps of 0 s exited {code}")
    if len(read_calls(log)) != RUNS * len(calls):
        fail("make -j1 with sleeps of 0 s did not make the runner's pulumi calls")
    return median(times) / len(projects)


# --- 1. The AWS graph through the Pulumi stand-in -------------------------------------------

AWS_STACK = """config:
  kubernetes:infra_type: AWS
  aws:region: us-east-1
  vpc:azs: [us-east-1a, us-east-1b]
  eks:k8s_version: '1.31'
  eks:instance_type: t3.large
  eks:min_size: 3
  eks:max_size: 12
  eks:desired_capacity: 3
"""
AWS_SECRETS = {f"MARA_SECRET_{k}": f"bench-{k.lower()}-S3cret" for k in (
    "PROMETHEUS_ADMINPASS", "SIRIUS_ACCOUNTS_PWD", "SIRIUS_LEDGER_PWD", "SIRIUS_DEMO_LOGIN_USER",
    "SIRIUS_DEMO_LOGIN_PWD")}


def aws_graph():
    print(f"1. The AWS graph (16 projects) through the Pulumi stand-in, median of {RUNS} runs, each in a "
          "workspace of its own:")
    import json
    with tempfile.TemporaryDirectory(prefix="runner-bench-aws-") as tmp:
        src = f"{tmp}/src"
        os.makedirs(src)
        for d in ("providers", "projects", "scripts"):
            shutil.copytree(f"{REPO}/{d}", f"{src}/{d}")
        plan = json.loads(subprocess.run([RUNNER, "--workspace", src, "show-plan", "-p", "aws", "--format", "json"],
                                         check=True, capture_output=True, text=True).stdout)
        names = [p["name"] for p in plan["projects"]]
        for mode in ("uniform", "estimates"):
            delay = {p["name"]: (500 if mode == "uniform" else p["estimate_seconds"] * SCALE) for p in plan["projects"]}
            longest = {}
            for p in plan["projects"]:
                longest[p["name"]] = delay[p["name"]] + max((longest[w] for w in p["waits_for"]), default=0)
            critical, sequential = max(longest.values()), sum(delay.values())
            spans = {}
            for jobs in (8, 1):
                times = []
                for r in range(RUNS if jobs == 8 else 1):
                    ws = f"{tmp}/{mode}-{jobs}-{r}"
                    shutil.copytree(src, ws)
                    os.makedirs(f"{ws}/bin")
                    os.makedirs(f"{ws}/config/pulumi")
                    os.symlink(STANDIN, f"{ws}/bin/pulumi")
                    # What a configured AWS stack holds, and the CLIs its checks call.
                    with open(f"{ws}/config/pulumi/Pulumi.dev.yaml", "w") as f:
                        f.write(AWS_STACK)
                    for tool, body in (("aws", "#!/bin/sh\necho '{\"Account\": \"123456789012\"}'\n"),
                                       ("kubectl", "#!/bin/sh\nexit 0\n"),
                                       # `docker buildx version`, the check of kic-image-build
                                       ("docker", "#!/bin/sh\necho 'github.com/docker/buildx v0.19.3'\n")):
                        with open(f"{ws}/bin/{tool}", "w") as f:
                            f.write(body)
                        os.chmod(f"{ws}/bin/{tool}", 0o755)
                    env = dict(os.environ, **AWS_SECRETS)
                    env.update(PATH=f"{ws}/bin:{os.environ['PATH']}", PULUMI_CONFIG_PASSPHRASE="bench",
                               PULUMI_HOME=f"{ws}/.pulumi-home", PULUMI_STANDIN_KDF_ITERATIONS="1000",
                               PULUMI_STANDIN_DELAY_MS=",".join(f"{k}={v}" for k, v in delay.items()),
                               PULUMI_STANDIN_LOG=f"{ws}/calls.jsonl", CI="true", HOME=f"{ws}/home")
                    for k in ("PULUMI_BACKEND_URL", "PULUMI_STACK", "KUBECONFIG"):
                        env.pop(k, None)
                    what = f"runner up -p aws ({mode}, --parallel {jobs})"
                    times.append(timed([RUNNER, "--workspace", ws, "up", "-p", "aws", "-s", "dev", "--parallel",
                                        str(jobs), "--output", "plain"], env, ws, what))
                    with open(f"{ws}/calls.jsonl") as f:
                        ups = [json.loads(line) for line in f]
                    ups = [u for u in ups if u["argv"][0] == "up"]
                    if len(ups) != len(names):
                        fail(f"{what}: {len(ups)} `pulumi up` calls for {len(names)} projects")
                spans[jobs] = median(times)
            m = spans[8]
            label = "500 ms" if mode == "uniform" else f"its estimate x {SCALE} ms"
            print(f"   each project {label}: makespan {m:.0f} ms, critical path {critical} ms, sum {sequential} ms "
                  f"(--parallel 1: {spans[1]:.0f} ms)")
            print(f"     makespan / critical path = {m / critical:.3f}; makespan / sum = {m / sequential:.3f} "
                  f"(no schedule beats {critical / sequential:.3f})")


# --- 2. The same DAG through the runner, GNU make and ninja ---------------------------------

def peers():
    print(f"\n2. One DAG of sleeps through the runner, GNU make and ninja (the same pulumi calls, the same "
          f"dependencies), median of {RUNNS_TEXT}; lower bound = max(critical path, work / jobs):")
    # Short steps make the processes each step starts weigh (the stress case); steps ten times
    # longer (still far below a real `pulumi up`) show the order with that weight diluted.
    cases = [("200 projects, random DAG (20-200 ms each)", random_dag(200, 7, 20, 200), (4, 16)),
             ("200 projects, heaviest chain declared last", heavy_chain_last(), (4, 16)),
             ("200 projects, random DAG (200-2000 ms each)", random_dag(200, 7, 200, 2000), (16,))]
    for title, projects, job_counts in cases:
        ws = make_workspace(projects, sleeps=True)
        try:
            for jobs in job_counts:
                critical, work, lower = bounds(projects, jobs)
                t = {"runner": [], "make": [], "ninja": []}
                for _ in range(RUNS):
                    ms, calls = run_runner(RUNNER, ws, projects, jobs, f"runner ({title}, -j{jobs})")
                    t["runner"].append(ms)
                    replay_files(ws, projects, calls)
                    t["make"].append(run_peer("make", ws, projects, jobs, calls, f"make ({title}, -j{jobs})"))
                    t["ninja"].append(run_peer("ninja", ws, projects, jobs, calls, f"ninja ({title}, -j{jobs})"))
                cost = calls_cost(ws, projects, calls)
                _, _, lower_calls = bounds(projects, jobs, cost)
                print(f"   {title}, -j{jobs}: lower bound {lower:.0f} ms (critical path {critical} ms, "
                      f"work {work} ms); counting each project's pulumi calls ({cost:.1f} ms, make -j1 "
                      f"with sleeps of 0 s) {lower_calls:.0f} ms")
                print("     " + ", ".join(f"{k} {median(v):.0f} ms ({median(v) / lower:.3f} x bound, "
                                         f"{median(v) / lower_calls:.3f} x bound with calls)"
                                         for k, v in t.items()))
                print(f"     runner / make = {median_ratio(t['runner'], t['make']):.3f}, "
                      f"runner / ninja = {median_ratio(t['runner'], t['ninja']):.3f}")
        finally:
            shutil.rmtree(ws, ignore_errors=True)


# --- 3. Per-project cost and pulumi starts --------------------------------------------------

def overhead(binary, label, n=1000, jobs=8):
    projects = random_dag(n, 7, 0, 0)
    ws = make_workspace(projects, sleeps=False)
    try:
        rows = {}
        for phase in ("first", "repeat"):
            t = {"runner": [], "make": []}
            starts = None
            # First runs each in a copy of their own made beforehand: deleting the last run's
            # files just before would make the file system slower to create new ones.
            copies = [shutil.copytree(ws, f"{ws}-first{r}", symlinks=True) for r in range(RUNS)] \
                if phase == "first" else []
            for r in range(RUNS):
                if phase == "first":
                    ms, calls = run_runner(binary, copies[r], projects, jobs,
                                           f"{label} up ({n} no-op projects, first)", fresh_state=False)
                    replay_files(copies[r], projects, calls)
                    # make's replay starts where the runner's did: no project has its stack
                    # file yet (its `stack select --create` writes it).
                    for p in projects:
                        os.remove(f"{copies[r]}/projects/{p.name}/Pulumi.{STACK}.yaml")
                    t["runner"].append(ms)
                    t["make"].append(run_peer("make", copies[r], projects, jobs, calls,
                                              f"make -j{jobs} replaying {label}"))
                    starts = len(calls) / n
                    continue
                if r == 0:
                    run_runner(binary, ws, projects, jobs, f"{label} up ({n} no-op projects, setting up the repeat)")
                ms, calls = run_runner(binary, ws, projects, jobs, f"{label} up --fresh ({n} projects, repeat)",
                                           fresh_state=False, extra=("--fresh",))
                starts = len(calls) / n
                replay_files(ws, projects, calls)
                t["runner"].append(ms)
                t["make"].append(run_peer("make", ws, projects, jobs, calls, f"make -j{jobs} replaying {label}"))
            for c in copies:
                shutil.rmtree(c, ignore_errors=True)
            rows[phase] = (median(t["runner"]), median(t["make"]), median_ratio(t["runner"], t["make"]), starts)
        return rows
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def overheads():
    small, n = 200, 1000
    print(f"\n3. Per-project cost of a whole `up` (no-op projects, a fake pulumi that exits at once, "
          f"--parallel 8) against make -j8 replaying the same pulumi calls, median of {RUNNS_TEXT}; "
          f"per project = whole run / {n}, and the slope (run of {n} - run of {small}) / {n - small}, "
          f"which leaves out what a run costs once (the passphrase's key derivation, reading the "
          f"workspace):")
    for binary, label in [(RUNNER, "runner")] + ([(BASE, "base")] if BASE else []):
        rows, few = overhead(binary, label, n), overhead(binary, label, small)
        for phase, (r, m, ratio, starts) in rows.items():
            fr, fm = few[phase][0], few[phase][1]
            slope_r, slope_m = (r - fr) / (n - small), (m - fm) / (n - small)
            print(f"   {label:<6} {phase:<6} run: {r / n:.2f} ms per project, make {m / n:.2f} ms: runner / make = "
                  f"{ratio:.2f}; slope {slope_r:.2f} ms, make {slope_m:.2f} ms: {slope_r / slope_m:.2f}; "
                  f"pulumi starts per project: {starts:.2f}")


# --- 4. Bytes written under .runner/ --------------------------------------------------------

WRITE = re.compile(r"^(?:write|pwrite64|writev|pwritev2?)\(\d+<([^>]*)>.*\)\s+=\s+(\d+)\s*$")


def bytes_written(binary, n):
    """Bytes the runner wrote under .runner/ during one first `up` of n no-op projects (from
    strace, every thread; the scratch files pulumi itself writes, event logs, left out)."""
    projects = random_dag(n, 7, 0, 0)
    ws = make_workspace(projects, sleeps=False)
    try:
        trace = f"{ws}/trace"
        os.makedirs(trace)
        calls = f"{ws}/calls.log"
        argv = ["strace", "-f", "-ff", "-qq", "-e", "trace=write,pwrite64,writev,pwritev", "-e", "signal=none",
                "-y", "-o", f"{trace}/t", binary, "--workspace", ws, "up", "-p", "synth", "-s", STACK,
                "--parallel", "8", "--output", "plain"]
        timed(argv, env_for(ws, calls), ws, f"strace {binary} up ({n} projects)")
        check_ran(ws, projects, read_calls(calls), f"{binary} up under strace ({n} projects)")
        total = 0
        runner_dir = f"{ws}/.runner/"
        scratch = f"{ws}/.runner/{STACK}/tmp/"
        for name in os.listdir(trace):
            with open(f"{trace}/{name}", errors="replace") as f:
                for line in f:
                    m = WRITE.match(line)
                    if m and m.group(1).startswith(runner_dir) and not m.group(1).startswith(scratch):
                        total += int(m.group(2))
        if total == 0:
            fail(f"strace saw no write under .runner/ ({n} projects): the measurement is broken")
        return total
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def writes():
    if not shutil.which("strace"):
        fail("strace is needed to count the bytes written (apt-get install strace)")
    print("\n4. Bytes written under .runner/ by one first `up` (no-op projects; strace, scratch files of pulumi "
          "left out):")
    for binary, label in [(RUNNER, "runner")] + ([(BASE, "base")] if BASE else []):
        b500, b1000 = bytes_written(binary, 500), bytes_written(binary, 1000)
        print(f"   {label:<6} 500 projects: {b500 / 1e6:.2f} MB; 1,000 projects: {b1000 / 1e6:.2f} MB "
              f"({b1000 / 1000:.0f} bytes per project); 1,000 / 500 = {b1000 / b500:.2f} (linear: 2, N^2: 4)")


RUNNS_TEXT = f"{RUNS} runs made in turn"

if __name__ == "__main__":
    wanted = sys.argv[1:] or ["aws", "peers", "overhead", "writes"]
    print(f"{time.strftime('%Y-%m-%d %H:%M')} UTC, {os.cpu_count()} cores (shared with other work: compare "
          "ratios within this run)")
    for part in wanted:
        {"aws": aws_graph, "peers": peers, "overhead": overheads, "writes": writes}[part]()
