#!/usr/bin/env python3
"""Checks a `freedom-verify monitor` evidence file with nothing but the file
(and Python's `cryptography`): none of the project's code.

    scripts/check-monitor-evidence.py <alarm.json> [...]

For each file it re-derives what the alarm claims from the signed notes,
proofs and entry bytes the file holds:

- every signed note is checked against the log's verifier key (Ed25519,
  c2sp.org/signed-note);
- fork: two notes of one size with different roots, or a consistency
  proof (RFC 9162) between the kept and the served tree that does not
  verify;
- rollback: a served tree smaller than the kept one, both signed;
- bad_signature: the served note does not verify under the key;
- data_mismatch: the kept tree's right edge hashes to the kept root, and
  with the entries appended does not hash to the served root;
- rule_broken: the entry is in the log (its .tlog-proof verifies), and the
  rule named is broken by its bytes (and the earlier entry's, also proven);
- lost_quorum: counting the policy's witnesses whose cosignatures verify
  (Ed25519 cosignature/v1, ML-DSA-44), the quorum is not met;
- stale: the served and head notes are signed and the head is larger (the
  hour it lasted is the monitor's observation);
- unavailable: the monitor's observation alone (nothing to verify).

Prints one line per file, "CONFIRMED <kind> <file>"; exits 1 if any claim
does not hold.
"""
import base64
import hashlib
import json
import struct
import sys
from datetime import datetime

from cryptography.hazmat.primitives.asymmetric import ed25519, mldsa

DASH = "\u2014"


class NotConfirmed(Exception):
    pass


def need(condition, message):
    if not condition:
        raise NotConfirmed(message)


# --- signed notes -----------------------------------------------------------

def split_note(note):
    text, sep, sigs = note.partition("\n\n")
    need(sep, "a note without its blank line")
    return text + "\n", [line for line in sigs.split("\n") if line]


def parse_key(vkey):
    name, key_id, data = vkey.strip().split("+", 2)
    return name, bytes.fromhex(key_id), base64.b64decode(data, validate=True)


def note_verifies(note, vkey):
    name, key_id, data = parse_key(vkey)
    need(data[0] == 0x01 and len(data) == 33, "the log key is not an Ed25519 signed-note key")
    need(hashlib.sha256(name.encode() + b"\n" + data).digest()[:4] == key_id, "the log key's ID")
    public = ed25519.Ed25519PublicKey.from_public_bytes(data[1:])
    text, lines = split_note(note)
    for line in lines:
        if not line.startswith(f"{DASH} {name} "):
            continue
        raw = base64.b64decode(line.split(" ")[2], validate=True)
        if raw[:4] != key_id:
            continue
        try:
            public.verify(raw[4:], text.encode())
            return True
        except Exception:
            return False
    return False


def checkpoint_of(note):
    text, _ = split_note(note)
    origin, size, root = text.split("\n")[:3]
    return origin, int(size), base64.b64decode(root, validate=True)


def signed(note, vkey, what):
    need(note_verifies(note, vkey), f"the {what} checkpoint is not signed by the log's key")
    return checkpoint_of(note)


# --- RFC 9162 ---------------------------------------------------------------

def leaf(entry):
    return hashlib.sha256(b"\x00" + entry).digest()


def node(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def root_of_edge(edge):
    """The root of a tree given its right edge (subtree roots, largest first)."""
    if not edge:
        return hashlib.sha256(b"").digest()
    value = edge[-1]
    for left in reversed(edge[:-1]):
        value = node(left, value)
    return value


def extend(size, edge, entries):
    edge = list(edge)
    for entry in entries:
        value, n = leaf(entry), size
        while n & 1:
            value = node(edge.pop(), value)
            n >>= 1
        edge.append(value)
        size += 1
    return edge


def consistency_verifies(m, n, old_root, new_root, proof):
    """RFC 9162, section 2.1.4.2."""
    if m == n:
        return old_root == new_root and not proof
    if m == 0 or m > n or not proof:
        return False
    proof = list(proof)
    if m & (m - 1) == 0:
        proof.insert(0, old_root)
    fn, sn = m - 1, n - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = proof[0]
    for c in proof[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node(c, fr)
            sr = node(c, sr)
            while fn & 1 == 0 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            sr = node(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == old_root and sr == new_root and sn == 0


def inclusion_verifies(index, size, entry_hash, proof, root):
    """RFC 9162, section 2.1.3.2."""
    if index >= size:
        return False
    fn, sn, r = index, size - 1, entry_hash
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node(p, r)
            while fn & 1 == 0 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            r = node(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def tlog_proof_verifies(proof_text, vkey, entry):
    """c2sp.org/tlog-proof: 'c2sp.org/tlog-proof@v1', 'index N', proof
    hashes (base64), a blank line, the signed checkpoint."""
    head, sep, note = proof_text.partition("\n\n")
    need(sep, "a .tlog-proof without its checkpoint")
    lines = head.split("\n")
    need(lines[0] == "c2sp.org/tlog-proof@v1", "not a c2sp.org/tlog-proof@v1")
    extra = [line for line in lines[1:] if line.startswith("extra ")]
    index_line = [line for line in lines[1:] if line.startswith("index ")]
    need(len(index_line) == 1, "a .tlog-proof without its index")
    index = int(index_line[0].split(" ")[1])
    hashes = [base64.b64decode(line, validate=True) for line in lines[1 + len(extra) + 1:] if line]
    origin, size, root = signed(note, vkey, "proof's")
    need(inclusion_verifies(index, size, leaf(entry), hashes, root), "the inclusion proof does not verify")
    return index


# --- cosignatures and policies ---------------------------------------------

def cosignature_verifies(text, line, vkey):
    name, key_id, data = parse_key(vkey)
    parts = line.split(" ")
    if len(parts) != 3 or parts[0] != DASH or parts[1] != name:
        return None
    raw = base64.b64decode(parts[2], validate=True)
    if raw[:4] != key_id:
        return None
    (time,) = struct.unpack(">Q", raw[4:12])
    signature = raw[12:]
    try:
        if data[0] in (0x01, 0x04):
            message = f"cosignature/v1\ntime {time}\n".encode() + text.encode()
            ed25519.Ed25519PublicKey.from_public_bytes(data[1:]).verify(signature, message)
        elif data[0] == 0x06:
            origin, size, root = text.split("\n")[:3]
            message = (b"subtree/v1\n\x00" + bytes([len(name)]) + name.encode() + struct.pack(">Q", time)
                       + bytes([len(origin)]) + origin.encode() + struct.pack(">QQ", 0, int(size))
                       + base64.b64decode(root))
            mldsa.MLDSA44PublicKey.from_public_bytes(data[1:]).verify(signature, message)
        else:
            return None
        return True
    except Exception:
        return False


def quorum_met(note, policy_text):
    """c2sp.org/tlog-policy: witness and group lines, and the quorum."""
    text, lines = split_note(note)
    members = {}
    for line in policy_text.split("\n"):
        words = line.split("#")[0].split()
        if not words:
            continue
        if words[0] == "witness":
            members[words[1]] = any(cosignature_verifies(text, l, words[2]) for l in lines)
        elif words[0] == "group":
            name, threshold, names = words[1], words[2], words[3:]
            count = sum(1 for n in names if members.get(n))
            wanted = len(names) if threshold == "all" else (1 if threshold == "any" else int(threshold))
            members[name] = count >= wanted
        elif words[0] == "quorum":
            return words[1] == "none" or bool(members.get(words[1]))
    return True


# --- rules ------------------------------------------------------------------

def instant(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def rule_holds_broken(rule, entry, earlier):
    record = json.loads(entry)
    if "not JSON" in rule:
        return False
    if "canonical JSON" in rule:
        canonical = json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        # Integers and strings only in the records this claim concerns: a
        # different byte form of the same value is enough.
        return canonical.encode() != entry
    if earlier is None:
        return "lacks" in rule or "not one the ledger knows" in rule or "not an RFC 3339" in rule
    before = json.loads(earlier)
    if "was used before" in rule:
        return record["id"] == before["id"]
    if "snapshot of" in rule:
        return (record["type"] == before["type"] == "snapshot"
                and (record["strategyId"], record["mode"]) == (before["strategyId"], before["mode"])
                and instant(record["asOf"]) <= instant(before["asOf"]))
    if "registered after its first paper snapshot" in rule:
        return (before["type"] == "snapshot" and before["mode"] == "paper"
                and before["strategyId"] == record["strategyId"])
    if "registered rule was changed" in rule:
        last = lambda r: r["thesis"].split("\n")[-1]
        return before["strategyId"] == record["strategyId"] and last(before) != last(record)
    return False


# --- the alarms -------------------------------------------------------------

def confirm(document):
    kind, vkey = document["alarm"], document["verifierKey"]
    if kind == "rollback":
        _, kept, _ = signed(document["kept"], vkey, "kept")
        _, served, _ = signed(document["served"], vkey, "served")
        need(served < kept, "the served tree is not smaller")
    elif kind == "fork":
        _, m, old = signed(document["kept"], vkey, "kept")
        _, n, new = signed(document["served"], vkey, "served")
        if m == n:
            need(old != new, "the two roots are the same")
        else:
            proof = [bytes.fromhex(h) for h in document.get("consistency", [])]
            need(not consistency_verifies(m, n, old, new, proof), "the consistency proof verifies")
    elif kind == "bad_signature":
        served = document["served"]
        if "policy" in document:
            text, lines = split_note(served)
            need(any(cosignature_verifies(text, line, words.split()[2]) is False
                     for words in document["policy"].split("\n") if words.startswith("witness ")
                     for line in lines), "every listed witness's cosignature verifies")
        else:
            need(not note_verifies(served, vkey), "the note verifies")
    elif kind == "data_mismatch":
        _, n, new = signed(document["served"], vkey, "served")
        size = document["keptSize"]
        edge = [bytes.fromhex(h) for h in document["keptEdge"]]
        need(len(edge) == bin(size).count("1"), "the kept edge does not fit the kept size")
        if document.get("kept"):
            _, m, old = signed(document["kept"], vkey, "kept")
            need(m == size and root_of_edge(edge) == old, "the kept edge does not hash to the kept root")
        entries = [base64.b64decode(e) for e in document["entries"]]
        need(size + len(entries) == n, "the entries do not fill the served tree")
        need(root_of_edge(extend(size, edge, entries)) != new, "the entries hash to the served root")
    elif kind == "rule_broken":
        signed(document["served"], vkey, "served")
        entry = base64.b64decode(document["entry"])
        need(document.get("proof"), "no inclusion proof")
        need(tlog_proof_verifies(document["proof"], vkey, entry) == document["index"], "the proof is for another index")
        earlier = document.get("earlier")
        before = None
        if earlier:
            before = base64.b64decode(earlier["entry"])
            need(tlog_proof_verifies(earlier["proof"], vkey, before) == earlier["index"], "the earlier proof is for another index")
        need(rule_holds_broken(document["rule"], entry, before), f"the rule is not broken: {document['rule']}")
    elif kind == "lost_quorum":
        signed(document["served"], vkey, "served")
        need(not quorum_met(document["served"], document["policy"]), "the quorum is met")
    elif kind == "stale":
        _, served, _ = signed(document["served"], vkey, "served")
        _, head, _ = signed(document["head"], vkey, "head")
        need(head > served, "the head is not ahead of the served checkpoint")
    elif kind == "unavailable":
        need(isinstance(document.get("unansweredSince"), int), "no time the log stopped answering")
    else:
        raise NotConfirmed(f"an unknown alarm {kind}")


def main(paths):
    failed = False
    for path in paths:
        with open(path, encoding="utf-8") as file:
            document = json.load(file)
        try:
            confirm(document)
            print(f"CONFIRMED {document['alarm']} {path}")
        except (NotConfirmed, KeyError, ValueError) as error:
            print(f"NOT CONFIRMED {document.get('alarm')} {path}: {error}")
            failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main(sys.argv[1:])
