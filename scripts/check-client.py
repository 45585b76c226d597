#!/usr/bin/env python3
"""An integrator's first steps, checked: generate a Python client from the
OpenAPI document the service serves (openapi-python-client, from PyPI), then
use it, and nothing else, to append a snapshot and a decision and read the
decision back from the dashboard, with the client's own typed models parsing every answer.

    scripts/check-client.py <base-url> <write-token>

Exits 0 with one line, or 1 naming what failed. scripts/check-openapi.py
runs it against the same freedom-local it tests.
"""
import datetime
import secrets
import importlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.request


def main():
    base, token = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as work:
        document = os.path.join(work, "openapi.json")
        with urllib.request.urlopen(f"{base}/api/freedom-fund?view=openapi") as answer:
            with open(document, "wb") as out:
                out.write(answer.read())
        subprocess.run(
            ["openapi-python-client", "generate", "--path", document, "--meta", "none",
             "--output-path", os.path.join(work, "freedom_fund_client")],
            check=True, stdout=subprocess.DEVNULL,
        )
        sys.path.insert(0, work)
        client_module = importlib.import_module("freedom_fund_client")
        append_record = importlib.import_module("freedom_fund_client.api.default.append_record")
        read_fund = importlib.import_module("freedom_fund_client.api.default.read_fund")
        models = importlib.import_module("freedom_fund_client.models")

        client = client_module.AuthenticatedClient(base_url=base, token=token)
        now = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
        # Not the time's digits: 14 of them in a row pass the Luhn check one
        # time in ten, and the guard rightly refuses a card number.
        record_id = f"client-check-{secrets.token_hex(6)}"
        as_of = now.isoformat().replace("+00:00", "Z")
        source = {"name": "scripts/check-client.py", "url": "https://example.com/client-check"}
        # A valuation first: the dashboard's window is drawn from snapshots.
        snapshot = models.Snapshot.from_dict({
            "id": f"{record_id}-value", "type": "snapshot", "visibility": "public", "mode": "paper",
            "strategyId": "client-check", "strategyName": "Generated-client check", "asOf": as_of,
            "source": source, "currency": "USD", "equity": 1000, "flowSincePrevious": 0,
        })
        valued = append_record.sync_detailed(client=client, body=snapshot)
        if valued.status_code != 201:
            sys.exit(f"check-client: the snapshot's append answered {valued.status_code}: {valued.content[:300]!r}")
        decision = models.Decision.from_dict({
            "id": record_id, "type": "decision", "visibility": "public", "mode": "paper",
            "strategyId": "client-check", "strategyName": "Generated-client check",
            "asOf": as_of, "source": source, "action": "research", "summary": "Appended through a client generated from the OpenAPI document.",
        })
        appended = append_record.sync_detailed(client=client, body=decision)
        if appended.status_code != 201 or not isinstance(appended.parsed, models.AppendReceipt):
            sys.exit(f"check-client: append answered {appended.status_code}: {appended.content[:300]!r}")
        receipt = appended.parsed
        dashboard = read_fund.sync(client=client)
        if not isinstance(dashboard, models.Dashboard):
            sys.exit(f"check-client: the dashboard did not parse as the document's Dashboard: {dashboard!r}")
        found = [d for d in dashboard.decisions if d.seq == receipt.seq]
        if not found or found[0].record.id != record_id:
            sys.exit(f"check-client: decision {record_id} (seq {receipt.seq}) is not on the dashboard")
        if dashboard.head.size < receipt.seq:
            sys.exit("check-client: the dashboard's head is older than the append")
        print(f"check-client: a generated client appended {record_id} (seq {receipt.seq}, "
              f"leaf {receipt.leaf_hash[:12]}…) and read it back from the dashboard; "
              f"{len(json.load(open(document))['components']['schemas'])} schemas became models")


if __name__ == "__main__":
    main()
