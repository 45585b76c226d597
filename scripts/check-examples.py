#!/usr/bin/env python3
"""Runs the shell examples that talk to a local server, as written, against
freedom-local: README's quick start (the dry run, the append, the verifier
key and freedom-verify), docs/api.md's examples, docs/log.md's verifier
(verify-ledger.py, freedom-verify online and a proof offline) and
docs/scanner.md's provider stand-in recipe (its own servers, on free ports). Each example block runs
with `bash -euo pipefail` (a file's blocks in one shell, in order) and every `curl` fails on an HTTP error (`-f`),
so an example that no longer works fails here. Only what a local server
needs is changed: its address (a free port), the token (the server's), and
`cargo run ... -p freedom-verify --` (the binary already built).

Usage: check-examples.py <target dir> (holds debug/freedom-local and
debug/freedom-verify). Exits non-zero naming the first example that failed.
"""

import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TOKEN = "examples-check-token-0123456789"
# Longest a file's examples may take (they start servers of their own).
EXAMPLE_TIMEOUT_SECS = 300
# (file, the text that marks each block to run)
SOURCES = [
    ("README.md", ["dryRun=1", "freedom-verify"]),
    ("docs/api.md", ["TOKEN=choose-a-long-random-token"]),
    ("docs/log.md", ["verify-ledger.py", "view=proof&seq=1", "--policy-file fund.policy"]),
    ("docs/scanner.md", ["provider-standin"]),
]


def blocks(path, markers):
    """The ```sh blocks of `path` that hold one of `markers`."""
    text = open(os.path.join(ROOT, path), encoding="utf-8").read()
    found = re.findall(r"```sh\n(.*?)```", text, re.S)
    chosen = [b for b in found if any(m in b for m in markers)]
    if len(chosen) < len(markers) and path == "README.md":
        raise SystemExit(f"{path}: expected a block for each of {markers}")
    return chosen


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def adapted(block, base, target):
    block = block.replace("http://127.0.0.1:3000", base)
    # A recipe that starts servers of its own gets free ports and the
    # binaries scripts/test built (debug), not a release build.
    for fixed in ("127.0.0.1:3001", "127.0.0.1:3002", "127.0.0.1:4000", "127.0.0.1:7380"):
        block = block.replace(fixed, f"127.0.0.1:{free_port()}")
    block = re.sub(r"^cargo build --release [^\n]*$", ":", block, flags=re.M)
    block = block.replace("./target/release/", os.path.join(target, "debug", ""))
    block = block.replace("python3 scripts/", f"python3 {os.path.join(ROOT, 'scripts', '')}")
    block = re.sub(r"^TOKEN=.*$", f"TOKEN={TOKEN}", block, flags=re.M)
    block = re.sub(r"cargo run [^\n]*-p freedom-verify --",
                   os.path.join(target, "debug", "freedom-verify"), block)
    block = re.sub(r"\bcurl -s\b", "curl -sS --fail-with-body", block)
    return block


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    target = sys.argv[1]
    spec = importlib.util.spec_from_file_location("check_openapi", os.path.join(HERE, "check-openapi.py"))
    check_openapi = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_openapi)
    with tempfile.TemporaryDirectory() as home:
        env = {k: v for k, v in os.environ.items() if "KV_REST" not in k and "REDIS_REST" not in k}
        env.pop("FF_EVENT_BUS_NAME", None)
        env["FF_AGENT_WRITE_TOKEN"] = TOKEN
        env["RUST_LOG"] = "info"
        local, match, _ = check_openapi.start(
            [os.path.join(target, "debug", "freedom-local"), "--addr", "127.0.0.1:0",
             "--data-dir", os.path.join(home, "try"), "--no-schedule"],
            env, r"freedom-local listening addr=(\S+)", "stderr",
        )
        subprocess.Popen(["cat"], stdin=local.stderr, stdout=subprocess.DEVNULL)
        base = f"http://{match.group(1)}"
        try:
            count = 0
            for path, markers in SOURCES:
                # A file's blocks run in one shell, in order, as a reader
                # types them in one terminal.
                chosen = blocks(path, markers)
                # Servers a recipe starts in the background stop with it.
                script = "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT\n" + "\n".join(
                    adapted(block, base, target) for block in chosen)
                shell = subprocess.Popen(["bash", "-euo", "pipefail", "-c", script], cwd=home,
                                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                         text=True, start_new_session=True)
                try:
                    stdout, stderr = shell.communicate(timeout=EXAMPLE_TIMEOUT_SECS)
                except subprocess.TimeoutExpired:
                    # An example that never ends (a wait loop whose server
                    # never answers) fails, and takes its servers with it.
                    os.killpg(shell.pid, signal.SIGKILL)
                    stdout, stderr = shell.communicate()
                    shell.returncode = "timeout"
                if shell.returncode != 0:
                    raise SystemExit(
                        f"{path}: an example failed (exit {shell.returncode}):\n{script}\n"
                        f"stdout: {stdout[-2000:]}\nstderr: {stderr[-2000:]}")
                count += len(chosen)
            print(f"OK {count} example blocks ran as written against freedom-local")
        finally:
            local.terminate()
            local.wait()


if __name__ == "__main__":
    main()
