#!/usr/bin/env python3
"""Verifies a Chamber webhook delivery with the standard library alone.

Usage: python3 verify.py SECRET HEADERS_JSON < raw-body   (prints "verified", or the reason and exits 1)
"""
import base64
import hashlib
import hmac
import json
import sys
import time


def verify_delivery(secret: str, headers: dict, body: bytes, tolerance_seconds: int = 300) -> None:
    """Raises ValueError unless both signatures match body, the raw request body (bytes, exactly as received)."""
    h = {name.lower(): str(value) for name, value in headers.items()}

    # 1. X-CC-Signature: hex HMAC-SHA256 of the raw body, keyed with the whole secret string.
    hex_digest = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(hex_digest.encode(), h.get("x-cc-signature", "").encode()):
        raise ValueError("X-CC-Signature does not match")

    # 2. webhook-signature (Standard Webhooks): base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}",
    #    keyed with the base64-decoded secret after "whsec_". Refuse old or future timestamps (replays).
    msg_id = h.get("webhook-id", "")
    timestamp = h.get("webhook-timestamp", "")
    if not (timestamp.isascii() and timestamp.isdigit()) or abs(time.time() - int(timestamp)) > tolerance_seconds:
        raise ValueError("webhook-timestamp is missing or too far from now")
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{msg_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest())
    signatures = h.get("webhook-signature", "").split(" ")
    if not any(s.startswith("v1,") and hmac.compare_digest(s[3:].encode(), expected) for s in signatures):
        raise ValueError("webhook-signature does not match")


if __name__ == "__main__":
    try:
        verify_delivery(sys.argv[1], json.loads(sys.argv[2]), sys.stdin.buffer.read())
        print("verified")
    except ValueError as error:
        print(error)
        sys.exit(1)
