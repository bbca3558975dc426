"""HTTP to the API server: pooled keep-alive connections, credentials, rate limit, error replies."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Mapping
from pathlib import Path

from kubesched.client import http1
from kubesched.client.config import ClientConfig
from kubesched.client.errors import ConnectionFailed, error_from_reply
from kubesched.client.execauth import CredentialError, Credentials, ExecCredentials, cluster_info
from kubesched.client.http1 import Response
from kubesched.client.ratelimit import TokenBucket

JSON = "application/json"
MAX_RETRIES = 10  # client-go retries a reply carrying Retry-After at most this often
TOKEN_FILE_PERIOD = 60.0  # client-go re-reads a token file once a minute
TRANSPORT_ERRORS = http1.ERRORS


class Transport:
    """Requests to one server. Non-watch requests take a token from the rate limiter first; a 429
    or 5xx reply with `Retry-After` is retried after that many seconds, as client-go does."""

    def __init__(self, config: ClientConfig) -> None:
        self.config = config
        self.limiter = TokenBucket(config.qps, config.burst) if config.qps > 0 else None
        self._pool: http1.Pool | None = None
        self._pool_cert: tuple[bytes | None, bytes | None] = (None, None)
        self._exec: ExecCredentials | None = None
        if config.exec is not None:
            info = cluster_info(config.server, config.ca_data, config.insecure, config.exec.cluster_config)
            self._exec = ExecCredentials(config.exec, info)
        self._token = config.token
        self._token_read: float | None = None

    def _headers(self, credentials: Credentials | None = None) -> dict[str, str]:
        headers = {"Accept": JSON, "User-Agent": self.config.user_agent}
        if credentials is not None:
            if credentials.token:
                headers["Authorization"] = f"Bearer {credentials.token}"
            return headers
        config = self.config
        now = time.monotonic()
        if config.token_file and (self._token_read is None or now - self._token_read > TOKEN_FILE_PERIOD):
            self._token = Path(config.token_file).read_text().strip()
            self._token_read = now
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        elif config.username and config.password:
            basic = base64.b64encode(f"{config.username}:{config.password}".encode()).decode()
            headers["Authorization"] = f"Basic {basic}"
        return headers

    def pool(self) -> http1.Pool:
        if self._pool is None:
            self._pool = http1.Pool(self.config.server, self.config.ssl_context(*self._pool_cert))
        return self._pool

    async def _credentials(self, exec_: ExecCredentials) -> Credentials:
        """The exec plugin's credentials; a new client certificate means new connections."""
        credentials = exec_.cached()
        if credentials is None:
            try:
                credentials = await exec_.get()
            except CredentialError as e:
                raise ConnectionFailed(f"getting credentials: {e}") from None
        cert = (credentials.client_cert, credentials.client_key)
        if cert != self._pool_cert:
            self._pool_cert = cert
            if self._pool is not None:
                self._pool.close()
                self._pool = None
        return credentials

    def _check_rejection(self, status: int, credentials: Credentials | None) -> None:
        """A 401 to an exec plugin's credentials has the plugin run again for the next request."""
        if status == 401 and credentials is not None and self._exec is not None:
            self._exec.rejected(credentials)

    async def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: bytes | None = None,
        content_type: str = JSON,
    ) -> tuple[int, bytes]:
        """(HTTP status, body) of a 2xx reply; any other reply raises its `ApiError`."""
        retries = 0
        while True:
            if self.limiter is not None:
                await self.limiter.wait()
            credentials = None if self._exec is None else await self._credentials(self._exec)
            headers = self._headers(credentials)
            if body is not None:
                headers["Content-Type"] = content_type
            try:
                response = await self.pool().request(
                    method, path, params=params, headers=headers, body=body, timeout=self.config.timeout
                )
            except TRANSPORT_ERRORS as e:
                raise ConnectionFailed(f"{method} {self.config.server}{path}: {_describe(e)}") from e
            status, data = response.status, await response.read()
            retry_after = response.headers.get("retry-after", "")
            if status < 400:
                return status, data
            self._check_rejection(status, credentials)
            if (status == 429 or status >= 500) and retry_after.isdigit() and retries < MAX_RETRIES:
                retries += 1
                await asyncio.sleep(int(retry_after))
                continue
            raise error_from_reply(status, data)

    async def stream(self, path: str, params: Mapping[str, str], *, timeout: float) -> Response:
        """An open streaming GET (a watch), not rate limited; the caller reads and closes it."""
        credentials = None if self._exec is None else await self._credentials(self._exec)
        try:
            response = await self.pool().stream(
                path,
                params=params,
                headers=self._headers(credentials),
                connect_timeout=self.config.timeout,
                timeout=timeout,
            )
            if response.status >= 400:
                self._check_rejection(response.status, credentials)
                try:
                    data = await response.read()
                finally:
                    response.close()
                raise error_from_reply(response.status, data)
        except TRANSPORT_ERRORS as e:
            raise ConnectionFailed(f"GET {self.config.server}{path}: {_describe(e)}") from e
        return response

    async def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
