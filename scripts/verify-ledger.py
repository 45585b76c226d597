#!/usr/bin/env python3
"""Re-derive a Freedom Fund ledger's leaf hashes and root, independently.

Usage: scripts/verify-ledger.py http://127.0.0.1:3000
       scripts/verify-ledger.py --self-test   (RFC 8785 and RFC 9162 vectors)

Fetches every page of GET /api/freedom-fund?view=ledger, recomputes each
record's RFC 8785 canonical bytes and leaf hash SHA-256(0x00 || bytes), and
the RFC 9162 Merkle Tree Hash of all leaves, and compares them with what the
service published. Standard library only. Exit status 0 when everything
matches, 1 otherwise.
"""

import hashlib
import json
import sys
import urllib.request
from decimal import Decimal


def js_number(value):
    """ECMAScript Number.prototype.toString, as RFC 8785 requires."""
    if isinstance(value, bool):
        raise TypeError("booleans are not numbers")
    if isinstance(value, int):
        value = float(value)
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    _, digits, exponent = Decimal(repr(abs(value))).normalize().as_tuple()
    s = "".join(map(str, digits))
    k = len(s)
    n = exponent + k
    if k <= n <= 21:
        text = s + "0" * (n - k)
    elif 0 < n <= 21:
        text = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + s
    else:
        e = n - 1
        mantissa = s if k == 1 else s[0] + "." + s[1:]
        text = mantissa + "e" + ("+" if e > 0 else "-") + str(abs(e))
    return sign + text


def canonical(value):
    """RFC 8785 canonical JSON text."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return js_number(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    items = sorted(value.items(), key=lambda kv: kv[0].encode("utf-16-be"))
    return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + canonical(v) for k, v in items) + "}"


def leaf_hash(data):
    return hashlib.sha256(b"\x00" + data).digest()


def mth(leaves):
    """RFC 9162 section 2.1.1 Merkle Tree Hash over leaf hashes."""
    if not leaves:
        return hashlib.sha256(b"").digest()
    if len(leaves) == 1:
        return leaves[0]
    k = 1
    while k * 2 < len(leaves):
        k *= 2
    return hashlib.sha256(b"\x01" + mth(leaves[:k]) + mth(leaves[k:])).digest()


def fetch(base, before):
    url = f"{base}/api/freedom-fund?view=ledger&limit=1000"
    if before is not None:
        url += f"&before={before}"
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def self_test():
    import struct

    numbers = {
        0x44B52D02C7E14AF6: "1e+23",
        0x3EB0C6F7A0B5ED8C: "9.999999999999997e-7",
        0x3EB0C6F7A0B5ED8D: "0.000001",
        0x41B3DE4355555553: "333333333.3333332",
        0xBECBF647612F3696: "-0.0000033333333333333333",
        0x43143FF3C1CB0959: "1424953923781206.2",
        0x4430000000000000: "295147905179352830000",
        0x444B1AE4D6E2EF50: "1e+21",
        0x8000000000000000: "0",
    }
    for bits, want in numbers.items():
        got = js_number(struct.unpack(">d", struct.pack(">Q", bits))[0])
        assert got == want, (hex(bits), got, want)
    data = ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"]
    root = mth([leaf_hash(bytes.fromhex(h)) for h in data]).hex()
    assert root == "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328", root
    assert canonical({"b": [1.5, True, None], "a": "\u20ac\n"}) == '{"a":"\u20ac\\n","b":[1.5,true,null]}'
    print("OK self-test")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    base = sys.argv[1].rstrip("/") if len(sys.argv) > 1 else "http://127.0.0.1:3000"
    first = fetch(base, None)
    head = first["head"]
    entries, page = list(first["entries"]), first
    while page["next"] is not None:
        page = fetch(base, page["next"])
        entries.extend(e for e in page["entries"] if e["seq"] <= head["size"])
    entries.sort(key=lambda e: e["seq"])
    problems = []
    if [e["seq"] for e in entries] != list(range(1, head["size"] + 1)):
        problems.append("sequence numbers are not 1..size")
    leaves = []
    for entry in entries:
        leaf = leaf_hash(canonical(entry["record"]).encode("utf-8"))
        if leaf.hex() != entry["leafHash"]:
            problems.append(f"seq {entry['seq']}: leaf hash does not match its record")
        leaves.append(leaf)
    root = mth(leaves).hex()
    if root != head["rootHash"]:
        problems.append(f"root {root} does not match the published head {head['rootHash']}")
    for problem in problems:
        print("FAIL", problem)
    if not problems:
        print(f"OK {head['size']} records, root {root}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
