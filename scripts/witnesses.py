"""Local C2SP tlog-witnesses for development and tests (aics-witness).

Run through scripts/witnesses.sh, with .venv-witness's Python. Everything a
witness keeps (config, key, SQLite state, ports, log) lives in
<persist-to>/witnesses/, inside the wrangler state directory it serves:
created with it and wiped with it (a fresh D1 under the same origin and key
would look like a fork to a witness that remembered the old log).

  init     --persist-to DIR [--count 3] [--quorum 2] [--shards-sandbox N]
           [--shards-production N]
           creates the witnesses that are missing (aics-witness init), trusts
           every log (aics-witness add-log: each log's verifier key computed
           from .dev.vars' seeds and wrangler.toml's origins, shard 0 = the
           origin, shard n = origin/n), picks free ports, and writes
           DIR/witnesses/policy.txt: the C2SP tlog-policy the service is
           configured with (witness lines with their URLs, the quorum).
  serve    --persist-to DIR [--only I]
           runs the witnesses (or witness I, 1-based) in the foreground until
           SIGINT/SIGTERM, which stops them; SIGHUP is passed on (reload).
           Prints `witnesses ready` once each answers /healthz.
  add-logs --persist-to DIR [--shards-sandbox N] [--shards-production N]
           trusts the logs of added shards and reloads running witnesses
           (SIGHUP).
  wait     --persist-to DIR
           returns once every witness answers /healthz (at most 30 s).
  policy   --persist-to DIR
           prints policy.txt.

Nothing in the service knows this implementation: it reads the policy
(C2SP tlog-policy) and speaks C2SP tlog-witness to the URLs in it.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import tomllib
import urllib.request
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

ROOT = Path(__file__).resolve().parent.parent
ENVS = ("SANDBOX", "PRODUCTION")
WITNESS_NAME = "localhost/bvs/witness-{i}"
READY_TIMEOUT_S = 30


def log_vkey(origin: str, seed_hex: str) -> str:
    """The signed-note verifier key of a log signing with this seed, as the
    service computes it (core::note::public_key_string)."""
    seed = bytes.fromhex(seed_hex.strip())
    if len(seed) != 32:
        raise SystemExit(f"a log seed in .dev.vars is not 32 bytes of hex")
    public = Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
    material = b"\x01" + public
    key_id = hashlib.sha256(origin.encode() + b"\n" + material).digest()[:4]
    return f"{origin}+{key_id.hex()}+{base64.b64encode(material).decode()}"


def dev_vars() -> dict[str, str]:
    path = ROOT / ".dev.vars"
    if not path.exists():
        raise SystemExit(".dev.vars is missing: run scripts/setup.sh first")
    out = {}
    for line in path.read_text().splitlines():
        if "=" in line and not line.lstrip().startswith("#"):
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def wrangler_vars() -> dict[str, str]:
    with open(ROOT / "wrangler.toml", "rb") as f:
        return {k: str(v) for k, v in tomllib.load(f).get("vars", {}).items()}


def logs(shards: dict[str, int]) -> list[tuple[str, str]]:
    """(origin, vkey) of every shard's log of both environments."""
    secrets, toml = dev_vars(), wrangler_vars()
    out = []
    for env in ENVS:
        base = toml[f"LOG_ORIGIN_{env}"]
        seed = secrets[f"LOG_SEED_{env}"]
        for n in range(shards[env]):
            origin = base if n == 0 else f"{base}/{n}"
            out.append((origin, log_vkey(origin, seed)))
    return out


def shard_counts(args: argparse.Namespace) -> dict[str, int]:
    toml = wrangler_vars()
    return {
        "SANDBOX": args.shards_sandbox or int(toml.get("LEDGER_SHARDS_SANDBOX", "1")),
        "PRODUCTION": args.shards_production or int(toml.get("LEDGER_SHARDS_PRODUCTION", "1")),
    }


def state(args: argparse.Namespace) -> Path:
    return Path(args.persist_to).resolve() / "witnesses"


def witness_dirs(base: Path) -> list[Path]:
    return sorted(
        (d for d in base.glob("w*") if (d / "witness.json").exists()),
        key=lambda d: int(d.name[1:]),
    )


def aics_witness(*args: str) -> str:
    exe = Path(sys.executable).parent / "aics-witness"
    done = subprocess.run([str(exe), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"aics-witness {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def trust_logs(wdir: Path, all_logs: list[tuple[str, str]]) -> None:
    for origin, vkey in all_logs:
        aics_witness("add-log", "--config", str(wdir / "witness.json"), "--origin", origin, "--vkey", vkey)


def write_policy(base: Path, quorum: int) -> None:
    dirs = witness_dirs(base)
    ports = [int(p) for p in (base / "ports").read_text().split()]
    lines = [
        "# The local witnesses of this wrangler state (scripts/witnesses.sh):",
        "# three witnesses of one implementation on one machine, for",
        "# development, not independence (docs/deploy.md, Witnesses).",
    ]
    names = []
    for i, (d, port) in enumerate(zip(dirs, ports), start=1):
        vkey = (d / "vkey").read_text().strip()
        lines.append(f"witness w{i} {vkey} http://127.0.0.1:{port}")
        names.append(f"w{i}")
    lines.append(f"group local {quorum} {' '.join(names)}")
    lines.append("quorum local")
    tmp = base / "policy.txt.tmp"
    tmp.write_text("\n".join(lines) + "\n")
    tmp.replace(base / "policy.txt")


def init(args: argparse.Namespace) -> None:
    base = state(args)
    base.mkdir(parents=True, exist_ok=True)
    all_logs = logs(shard_counts(args))
    if not 1 <= args.quorum <= args.count:
        raise SystemExit(f"--quorum must be from 1 to --count ({args.count})")

    def one(i: int) -> None:
        wdir = base / f"w{i}"
        wdir.mkdir(exist_ok=True)
        config = wdir / "witness.json"
        fresh = [] if config.exists() else ["--name", WITNESS_NAME.format(i=i), "--listen", "127.0.0.1:0"]
        out = aics_witness("init", "--config", str(config), *fresh)
        # init prints the witness vkey (also when everything existed).
        vkey = next(l for l in out.splitlines() if l.startswith(WITNESS_NAME.format(i=i) + "+"))
        (wdir / "vkey").write_text(vkey + "\n")
        trust_logs(wdir, all_logs)

    errors = []

    def run(i: int) -> None:
        try:
            one(i)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(1, args.count + 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise SystemExit(str(errors[0]))
    ports = [free_port() for _ in range(args.count)]
    while len(set(ports)) < len(ports):
        ports = [free_port() for _ in range(args.count)]
    (base / "ports").write_text("".join(f"{p}\n" for p in ports))
    (base / "quorum").write_text(f"{args.quorum}\n")
    write_policy(base, args.quorum)
    print(f"{args.count} local witnesses (quorum {args.quorum}) trust {len(all_logs)} logs: {base}/policy.txt")


def healthy(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


def serve(args: argparse.Namespace) -> None:
    base = state(args)
    dirs = witness_dirs(base)
    if not dirs:
        raise SystemExit(f"no witnesses in {base}: run `scripts/witnesses.sh init` first")
    ports = [int(p) for p in (base / "ports").read_text().split()]
    chosen = [args.only] if args.only else list(range(1, len(dirs) + 1))
    exe = Path(sys.executable).parent / "aics-witness"
    procs: dict[int, subprocess.Popen] = {}
    stopping = False

    def stop(signum=None, frame=None) -> None:
        nonlocal stopping
        stopping = True
        for p in procs.values():
            if p.poll() is None:
                p.terminate()
        for i, p in procs.items():
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
            (base / f"w{i}" / "serve.pid").unlink(missing_ok=True)
        sys.exit(0)

    def reload(signum, frame) -> None:
        for p in procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGHUP)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGHUP, reload)
    for i in chosen:
        wdir = base / f"w{i}"
        log = open(wdir / "serve.log", "ab")
        procs[i] = subprocess.Popen(
            [str(exe), "serve", "--config", str(wdir / "witness.json"),
             "--listen", f"127.0.0.1:{ports[i - 1]}", "--log-level", "INFO"],
            stdout=log, stderr=log, stdin=subprocess.DEVNULL,
        )
        (wdir / "serve.pid").write_text(f"{procs[i].pid}\n")
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not all(healthy(ports[i - 1]) for i in chosen):
        if time.monotonic() > deadline or any(p.poll() is not None for p in procs.values()):
            print("witnesses did not start; see " + ", ".join(str(base / f"w{i}" / "serve.log") for i in chosen),
                  file=sys.stderr)
            stop()
        time.sleep(0.1)
    print("witnesses ready: " + ", ".join(f"w{i} http://127.0.0.1:{ports[i - 1]}" for i in chosen), flush=True)
    while not stopping:
        for i, p in procs.items():
            if p.poll() is not None:
                print(f"witness w{i} exited ({p.returncode}); see {base / f'w{i}' / 'serve.log'}", file=sys.stderr)
                stop()
        time.sleep(0.5)


def wait(args: argparse.Namespace) -> None:
    base = state(args)
    ports = [int(p) for p in (base / "ports").read_text().split()]
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not all(healthy(p) for p in ports):
        if time.monotonic() > deadline:
            raise SystemExit(f"the witnesses did not answer within {READY_TIMEOUT_S} s; see {base}/w*/serve.log")
        time.sleep(0.1)


def add_logs(args: argparse.Namespace) -> None:
    base = state(args)
    all_logs = logs(shard_counts(args))
    for wdir in witness_dirs(base):
        trust_logs(wdir, all_logs)
        pid_file = wdir / "serve.pid"
        if pid_file.exists():
            try:
                os.kill(int(pid_file.read_text()), signal.SIGHUP)
            except ProcessLookupError:
                pid_file.unlink(missing_ok=True)
    print(f"witnesses trust {len(all_logs)} logs")


def main() -> None:
    parser = argparse.ArgumentParser(prog="scripts/witnesses.sh", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("init", "serve", "add-logs", "wait", "policy"):
        p = sub.add_parser(name)
        p.add_argument("--persist-to", required=True, help="the wrangler state directory")
        if name in ("init", "add-logs"):
            p.add_argument("--shards-sandbox", type=int, default=None)
            p.add_argument("--shards-production", type=int, default=None)
        if name == "init":
            p.add_argument("--count", type=int, default=3)
            p.add_argument("--quorum", type=int, default=2)
        if name == "serve":
            p.add_argument("--only", type=int, default=None, help="serve witness I alone (1-based)")
    args = parser.parse_args()
    if args.command == "init":
        init(args)
    elif args.command == "serve":
        serve(args)
    elif args.command == "add-logs":
        add_logs(args)
    elif args.command == "wait":
        wait(args)
    else:
        sys.stdout.write((state(args) / "policy.txt").read_text())


if __name__ == "__main__":
    main()
