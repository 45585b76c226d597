#!/usr/bin/env python3
"""ML-DSA-44 cosignatures (c2sp.org/tlog-cosignature v1.1, key type 0x06)
made and checked by another implementation than the project's: OpenSSL's
ML-DSA (FIPS 204) through Python's `cryptography` package, with the signed
message and the line encoding written here from the specification.

    scripts/mldsa-cosignature.py sign <name> <seed-hex> <time> < checkpoint
        prints the witness's verifier key, then the cosignature line
    scripts/mldsa-cosignature.py verify <vkey> < note
        exits 0 when the note carries a valid cosignature by <vkey> of its
        checkpoint (the text before the blank line), 1 otherwise

The specification publishes no test vectors; tlog/tests/vectors/ keeps one
made by `sign`, and the tests make and check fresh ones both ways.
"""
import base64
import hashlib
import struct
import sys

from cryptography.hazmat.primitives.asymmetric import mldsa

ML_DSA_44 = 0x06
DASH = "\u2014"


def key_id(name, public):
    return hashlib.sha256(name.encode() + b"\n" + bytes([ML_DSA_44]) + public).digest()[:4]


def cosigned_message(name, time, checkpoint):
    origin, size, root = checkpoint.split("\n")[:3]
    root = base64.b64decode(root, validate=True)
    assert len(root) == 32 and 0 < len(name) < 256 and 0 < len(origin) < 256
    return (b"subtree/v1\n\x00" + bytes([len(name)]) + name.encode() + struct.pack(">Q", time)
            + bytes([len(origin)]) + origin.encode() + struct.pack(">QQ", 0, int(size)) + root)


def sign(name, seed_hex, time, checkpoint):
    key = mldsa.MLDSA44PrivateKey.from_seed_bytes(bytes.fromhex(seed_hex))
    public = key.public_key().public_bytes_raw()
    identifier = key_id(name, public)
    vkey = f"{name}+{identifier.hex()}+{base64.b64encode(bytes([ML_DSA_44]) + public).decode()}"
    signature = key.sign(cosigned_message(name, time, checkpoint))
    line = f"{DASH} {name} {base64.b64encode(identifier + struct.pack('>Q', time) + signature).decode()}"
    print(vkey)
    print(line)


def verify(vkey, note):
    name, identifier, data = vkey.strip().split("+", 2)
    data = base64.b64decode(data, validate=True)
    if data[0] != ML_DSA_44 or len(data) != 1313 or key_id(name, data[1:]).hex() != identifier:
        return False
    public = mldsa.MLDSA44PublicKey.from_public_bytes(data[1:])
    checkpoint, _, lines = note.partition("\n\n")
    for line in lines.splitlines():
        if not line.startswith(f"{DASH} {name} "):
            continue
        raw = base64.b64decode(line.split(" ")[2], validate=True)
        if raw[:4].hex() != identifier or len(raw) != 4 + 8 + 2420:
            continue
        (time,) = struct.unpack(">Q", raw[4:12])
        try:
            public.verify(raw[12:], cosigned_message(name, time, checkpoint + "\n"))
            return True
        except Exception:
            return False
    return False


if __name__ == "__main__":
    if sys.argv[1] == "sign":
        sign(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.stdin.read())
    elif sys.argv[1] == "verify":
        sys.exit(0 if verify(sys.argv[2], sys.stdin.read()) else 1)
    else:
        sys.exit(__doc__)
