"""JSON from a running scheduler's endpoints (`kubesched queue --url`, `kubesched explain --url`)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

FETCH_TIMEOUT = 10.0


class FetchError(Exception):
    """The URL gave no usable answer; the message says why."""


# Any: a scheduler endpoint's JSON, read as that endpoint documents it
def get_json(url: str, path: str) -> Any:
    """GET URL + path and decode it; a 404's JSON `message` is the error's."""
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}{path}", timeout=FETCH_TIMEOUT) as response:
            body = response.read()
    except urllib.error.HTTPError as e:
        try:
            message = json.loads(e.read()).get("message")
        except (ValueError, AttributeError):
            message = None
        raise FetchError(message or f"{path} answered {e.code} {e.reason}") from None
    except urllib.error.URLError as e:
        raise FetchError(f"cannot connect: {e.reason}") from None
    except (OSError, ValueError) as e:  # timeouts, resets; a URL urllib cannot use
        raise FetchError(str(e)) from None
    try:
        return json.loads(body)
    except ValueError:
        raise FetchError(f"{path} did not answer JSON") from None
