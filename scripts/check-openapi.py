#!/usr/bin/env python3
"""The interface checked from outside: schemathesis (the property-based
OpenAPI tester) against freedom-local, with every check, every phase that
applies, a fixed seed and `--max-examples` cases per operation.

freedom-local serves the fund, the page and the scanner on a fresh data dir,
with the providers' stand-in answering the scanner's calls and a write
token, so the POSTs run for real (appends, scanner runs). The OpenAPI
document under test is the one the running service serves. The exceptions
are in scripts/schemathesis.toml (each a rule JSON Schema cannot express;
docs/api.md lists them). Then scripts/check-client.py generates a client from
the same document and appends and reads a record with it. Exits non-zero
on the first failure.

    scripts/check-openapi.py <target-dir> [--seed N] [--max-examples N]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = "schemathesis-write-token-0123456789"


def start(command, env, pattern, stream):
    """Starts `command` and reads its `stream` until a line matches `pattern`."""
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    lines = []
    source = process.stdout if stream == "stdout" else process.stderr
    for line in source:
        lines.append(line)
        match = re.search(pattern, line)
        if match:
            return process, match, lines
    raise SystemExit(f"{command[0]} did not start:\n{''.join(lines)}")


def seed_full_tiles(base, document):
    """Appends 256 decisions (the document's own example, numbered), so the
    log's first hash tile and entry bundle are full: the tile examples
    (`0/000`, `entries/000`) then exist for the whole run, however many
    records the run appends after them (a partial tile's width moves)."""
    with open(document) as source:
        operation = json.load(source)["paths"]["/api/freedom-fund"]["post"]
    examples = operation["requestBody"]["content"]["application/json"]["examples"]
    for number in range(256):
        record = dict(examples["decision"]["value"], id=f"tile-seed-{number}")
        request = urllib.request.Request(
            f"{base}/api/freedom-fund", method="POST", data=json.dumps(record).encode(),
            headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request) as answer:
            if answer.status != 201:
                raise SystemExit(f"seeding the log answered {answer.status}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("target_dir")
    parser.add_argument("--seed", default="20261123")
    parser.add_argument("--max-examples", default="300")
    args = parser.parse_args()
    binaries = os.path.join(args.target_dir, "debug")
    processes = []
    try:
        stand_in, _, exports = start(
            [os.path.join(binaries, "provider-standin"), "127.0.0.1:0"],
            os.environ.copy(), r"^export FF_SCANNER_WALLETS=", "stdout",
        )
        processes.append(stand_in)
        env = os.environ.copy()
        for line in exports:
            name, value = line.removeprefix("export ").strip().split("=", 1)
            env[name] = value.strip("'")
        for name in ["FF_KV_REST_API_URL", "FF_KV_REST_API_TOKEN", "KV_REST_API_URL",
                     "KV_REST_API_TOKEN", "UPSTASH_REDIS_REST_URL", "UPSTASH_REDIS_REST_TOKEN",
                     "FF_EVENT_BUS_NAME"]:
            env.pop(name, None)
        env["FF_AGENT_WRITE_TOKEN"] = TOKEN
        env["RUST_LOG"] = "info"
        with tempfile.TemporaryDirectory() as data_dir:
            local, match, _ = start(
                [os.path.join(binaries, "freedom-local"), "--addr", "127.0.0.1:0",
                 "--data-dir", os.path.join(data_dir, "data"), "--no-schedule"],
                env, r"freedom-local listening addr=(\S+)", "stderr",
            )
            processes.append(local)
            # Keep reading its log so it never blocks on a full pipe.
            subprocess.Popen(["cat"], stdin=local.stderr, stdout=subprocess.DEVNULL)
            base = f"http://{match.group(1)}"
            document = os.path.join(data_dir, "openapi.json")
            with urllib.request.urlopen(f"{base}/api/freedom-fund?view=openapi") as answer:
                with open(document, "wb") as out:
                    out.write(answer.read())
            seed_full_tiles(base, document)
            run = subprocess.run(
                ["schemathesis", "--config-file", os.path.join(HERE, "schemathesis.toml"),
                 "run", document, "--url", base, "--checks", "all",
                 "--phases", "examples,coverage,fuzzing,stateful",
                 "--seed", args.seed, "--max-examples", args.max_examples,
                 "--header", f"Authorization: Bearer {TOKEN}"],
                cwd=HERE, env={**os.environ, "PYTHONPATH": HERE},
            )
            if run.returncode != 0:
                return run.returncode
            # Then as an integrator would: a client generated from the same
            # document appends and reads a record.
            return subprocess.run(
                [sys.executable, os.path.join(HERE, "check-client.py"), base, TOKEN]
            ).returncode
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=20)


if __name__ == "__main__":
    sys.exit(main())
