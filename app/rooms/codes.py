"""Join codes (short, read aloud, typed on a phone) and control tokens (unguessable).

The code's alphabet leaves out what looks or sounds alike (0/O/D/Q, 1/I/L, 2/Z, 5/S,
8/B, 6/G, U/V, and N, which is heard as M when read aloud) and every vowel, so that no
code spells a word: sixteen characters, six of them, 16.7 million codes. A code only finds
a room; controlling it takes the token.
Input is taken in any case, with spaces or dashes.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets

ALPHABET = "CFHJKMPRTWXY3479"
LENGTH = 6
_CODE = re.compile(f"^[{ALPHABET}]{{{LENGTH}}}$")


def new_code() -> str:
    return "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))


def normalize(text: str) -> str | None:
    """The code someone typed, or None if it cannot be one."""
    code = re.sub(r"[\s-]", "", text).upper()
    return code if _CODE.match(code) else None


def new_token() -> str:
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    """What the store keeps: a leaked store (Redis) reveals no token."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_matches(token: str | None, stored_hash: str) -> bool:
    """Compared in constant time, so a wrong token's timing tells nothing about the right
    one."""
    given = token_hash(token or "")
    return token is not None and hmac.compare_digest(given, stored_hash)
