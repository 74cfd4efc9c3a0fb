"""The allreduce of a distributed fit (issue 13): blocking TCP sockets between the ranks, their
addresses exchanged through Dask.

One fit runs one task per worker ("rank", ranks in the order of the sorted worker addresses).
Dask places the data, starts the ranks' tasks and carries rank 0's address to the others (the
result of a short task on rank 0's worker); the sums themselves travel over one TCP connection
per rank r > 0 to rank 0, opened once and kept for the whole fit (as lightgbm.dask does: Dask
schedules, the training's messages go straight between the workers). With TLS configured for
the workers (`distributed.comm.tls`), the sockets are wrapped in the workers' own TLS contexts.

Why not `distributed.comm` (session 6's transport): a reduction is on the critical path of every
rank, about ten times a round. Through `distributed.comm` each one cost the task thread a hop to
an asyncio loop thread and back, Dask's message framing and (de)serialisation on both sides:
≈ 1 ms per reduction on an idle machine and 3.3 ms in the fit, where the loop threads compete
with the training for the GIL and the cores. A blocking socket read releases the GIL and wakes the
task thread itself: no thread hop, no framing beyond a 16-byte header (docs/distributed.md,
"Session 7").

One reduction (`Collective.allreduce`) is a star:

- each rank r > 0 writes its vector (n float64) to rank 0: one message of 16 + 8n bytes;
- rank 0 reads them in rank order and sums in rank order, ((x₀ + x₁) + x₂) + …, so that the
  result does not depend on which message arrived first;
- rank 0 writes the sum back to every rank: one message of 16 + 8n bytes each.

So a reduction costs 2(P − 1) messages and 2(P − 1)·8n payload bytes through rank 0, and two
network latencies. Every rank ends with the same bits. A ring would move fewer bytes through one
link for very long vectors, but it sums every chunk in a different order (still deterministic,
not rank order) and needs 2(P − 1) latencies per reduction; boostlab's reductions are histograms
of at most a few MB per tree level, where the latency term dominates (docs/distributed.md).

Every exchange has a timeout: a rank that does not connect, send or answer within it, or whose
connection closes (its worker died), makes the reduction raise `DaskFitError` naming the rank
and its worker. Rank 0 then closes every connection, so that the other ranks fail at their next
exchange instead of waiting.
"""

from __future__ import annotations

import socket
import ssl
import struct
import time

import numpy as np
from distributed.comm.addressing import get_address_host, parse_address, parse_host_port, unparse_host_port

# A message: (sequence number of the reduction, number of float64 values), then the values.
_HEADER = struct.Struct("<QQ")
# The first message of a connection: the fit's id (length, then UTF-8 bytes) and the rank.
_HELLO = struct.Struct("<QQ")
# Connections of this process wrapped in TLS (both ends count; the tests read it).
TLS_WRAPPED = [0]


class DaskFitError(RuntimeError):
    """A distributed fit failed: a worker was lost, did not answer within `timeout`, or the fit
    was cancelled. The message names the rank and its worker."""


def _who(rank: int, addrs) -> str:
    return f"rank {rank} (worker {addrs[rank]})"


class _Closed(Exception):
    """The peer closed the connection."""


def _recv_into(sock, view) -> None:
    """Fills the writable byte `view` from `sock` (blocking, with the socket's timeout)."""
    got, n = 0, len(view)
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise _Closed("connection closed by the peer")
        got += k


def _write(sock, header: bytes, payload) -> None:
    """Writes `header` then the bytes of `payload` (one system call where the socket allows)."""
    body = memoryview(payload).cast("B")
    if isinstance(sock, ssl.SSLSocket):
        # TLS sockets have no scatter write.
        sock.sendall(header)
        sock.sendall(body)
        return
    bufs = [memoryview(header), body]
    while bufs:
        k = sock.sendmsg(bufs)
        while bufs and k >= len(bufs[0]):
            k -= len(bufs[0])
            bufs.pop(0)
        if bufs:
            bufs[0] = bufs[0][k:]


def _tuned(sock):
    # Small messages on the critical path: no Nagle delay.
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


class Collective:
    """The sums of one rank's fit. `allreduce(x)` returns the rank-order sum of `x` over all ranks;
    `stats` counts the reductions and the payload bytes this rank sent and received, and the wall
    seconds spent inside `allreduce`."""

    def __init__(self, fit_id: str, rank: int, addrs, timeout: float, cancelled=None):
        self.fit_id = fit_id
        self.rank = rank
        self.addrs = list(addrs)
        self.size = len(self.addrs)
        self.timeout = float(timeout)
        self.cancelled = cancelled
        self.stats = {"reductions": 0, "values": 0, "bytes_sent": 0, "bytes_received": 0, "seconds": 0.0}
        self._seq = 0
        self._socks: list = [None] * self.size
        self._listener = None
        self._ssl = None
        self._closed = False
        self._scratch = np.empty(0)
        self._header = bytearray(_HEADER.size)
        self.address = None

    # ------------------------------------------------------------------ set-up

    def open_root(self, listen_args=None):
        """Rank 0: starts listening on its worker's host (any free port); returns the address
        ("host:port") the other ranks connect to."""
        self._ssl = (listen_args or {}).get("ssl_context")
        scheme, loc = parse_address(self.addrs[0])
        # Workers in the client's process (LocalCluster(processes=False), "inproc://"): loopback.
        host = get_address_host(self.addrs[0]) if scheme in ("tcp", "tls") else "127.0.0.1"
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.bind((host, 0))
        sock.listen(max(self.size, 8))
        self._listener = sock
        self.address = unparse_host_port(host, sock.getsockname()[1])
        if self.size == 1:
            self._listener_close()
        return self.address

    def _listener_close(self):
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    def wait_connected(self):
        """Rank 0: accepts (at most `timeout`) until every other rank has connected; a connection
        that does not present this fit's id and a valid rank is dropped."""
        deadline = time.monotonic() + self.timeout
        try:
            while self._listener is not None and not all(s is not None for s in self._socks[1:]):
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = [_who(r, self.addrs) for r in range(1, self.size) if self._socks[r] is None]
                    raise DaskFitError(
                        f"boostlab.dask: {', '.join(missing)} did not connect to rank 0 within "
                        f"timeout={self.timeout:g} s (worker lost or busy)"
                    )
                self._listener.settimeout(min(left, 0.5))
                try:
                    conn, _ = self._listener.accept()
                except (socket.timeout, TimeoutError):
                    if self.cancelled is not None and self.cancelled():
                        raise DaskFitError(f"boostlab.dask: the fit was cancelled ({_who(0, self.addrs)})") from None
                    continue
                self._admit(conn)
        finally:
            self._listener_close()

    def _admit(self, conn):
        try:
            conn.settimeout(self.timeout)
            if self._ssl is not None:
                conn = self._ssl.wrap_socket(conn, server_side=True)
                TLS_WRAPPED[0] += 1
            head = bytearray(_HELLO.size)
            _recv_into(conn, memoryview(head))
            n_id, r = _HELLO.unpack(head)
            if n_id > 1024:
                raise ValueError("bad hello")
            ident = bytearray(n_id)
            _recv_into(conn, memoryview(ident))
            if ident.decode() != self.fit_id or not 0 < r < self.size or self._socks[r] is not None:
                raise ValueError("not this fit's rank")
        except Exception:
            conn.close()
            return
        self._socks[r] = _tuned(conn)

    def connect(self, address, connection_args=None):
        """Rank r > 0: connects to rank 0 at `address` (retrying until `timeout`)."""
        host, port = parse_host_port(address)
        ctx = (connection_args or {}).get("ssl_context")
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                sock = socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic()))
                sock.settimeout(self.timeout)
                if ctx is not None:
                    sock = ctx.wrap_socket(sock, server_hostname=None if not ctx.check_hostname else host)
                    TLS_WRAPPED[0] += 1
                ident = self.fit_id.encode()
                sock.sendall(_HELLO.pack(len(ident), self.rank) + ident)
                break
            except OSError as e:
                if time.monotonic() >= deadline:
                    raise DaskFitError(
                        f"boostlab.dask: rank {self.rank} could not connect to {_who(0, self.addrs)} "
                        f"at {address} within timeout={self.timeout:g} s: {e}"
                    ) from e
                time.sleep(0.05)
        self._socks[0] = _tuned(sock)

    # ------------------------------------------------------------------ the reduction

    def allreduce(self, x):
        """The rank-order sum over all ranks of the 1-d float64 vector `x` (a new array)."""
        if self._closed:
            raise DaskFitError(f"boostlab.dask: rank {self.rank}'s collective is closed")
        if self.cancelled is not None and self.cancelled():
            raise DaskFitError(f"boostlab.dask: the fit was cancelled ({_who(self.rank, self.addrs)})")
        x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
        self._seq += 1
        t0 = time.perf_counter()
        try:
            out = self._root_reduce(x) if self.rank == 0 else self._peer_reduce(x)
        except BaseException:
            self.close()
            raise
        self.stats["seconds"] += time.perf_counter() - t0
        self.stats["reductions"] += 1
        self.stats["values"] += x.size
        return out

    def _fail(self, r, e, doing):
        if isinstance(e, (socket.timeout, TimeoutError)):
            return DaskFitError(
                f"boostlab.dask: {_who(r, self.addrs)} did not {doing} reduction #{self._seq} within "
                f"timeout={self.timeout:g} s"
            )
        return DaskFitError(
            f"boostlab.dask: lost the connection to {_who(r, self.addrs)} during reduction "
            f"#{self._seq} (worker died or its task failed): {type(e).__name__}: {e}"
        )

    def _recv(self, r, out):
        """Reads rank `r`'s message of this reduction into `out` (n float64)."""
        sock = self._socks[r]
        try:
            _recv_into(sock, memoryview(self._header))
            seq, n = _HEADER.unpack(self._header)
            if seq != self._seq or n != out.size:
                raise DaskFitError(
                    f"boostlab.dask: {_who(r, self.addrs)} sent {n} values to reduction #{seq} during "
                    f"reduction #{self._seq} of {out.size} values (the ranks are out of step)"
                )
            _recv_into(sock, memoryview(out).cast("B"))
        except DaskFitError:
            raise
        except (OSError, _Closed) as e:
            raise self._fail(r, e, "answer") from e
        self.stats["bytes_received"] += out.nbytes

    def _send(self, r, data):
        try:
            _write(self._socks[r], _HEADER.pack(self._seq, data.size), data)
        except OSError as e:
            raise self._fail(r, e, "take") from e
        self.stats["bytes_sent"] += data.nbytes

    def _root_reduce(self, x):
        total = x.copy()
        if self._scratch.size != x.size:
            self._scratch = np.empty(x.size)
        for r in range(1, self.size):
            self._recv(r, self._scratch)
            # Rank order: ((x0 + x1) + x2) + ..., whatever order the messages arrived in.
            total += self._scratch
        for r in range(1, self.size):
            self._send(r, total)
        return total

    def _peer_reduce(self, x):
        self._send(0, x)
        out = np.empty(x.size)
        self._recv(0, out)
        return out

    # ------------------------------------------------------------------ tear-down

    def close(self):
        """Closes every connection (the other ranks then fail at their next exchange)."""
        if self._closed:
            return
        self._closed = True
        for i, s in enumerate(self._socks):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass
                self._socks[i] = None
        self._listener_close()
