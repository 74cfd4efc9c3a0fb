"""The allreduce of a distributed fit, engine-neutral: one star algorithm over blocking TCP
sockets between the ranks. The engines (`boostlab.dask`, `boostlab.spark`) start the ranks and
carry rank 0's address to the others; this module does the sums.

One fit runs one task per rank. Rank 0 listens; each rank r > 0 opens one connection to it, kept
for the whole fit. A message is a 16-byte header (the exchange's sequence number, the number of
values) and the raw float64 values, written with one `sendmsg` and read with `recv_into` on the
rank's task thread itself (a blocking read releases the GIL and wakes that thread); the
connections may be wrapped in TLS contexts the engine gives (`open_root`, `connect`).

One reduction (`Collective.allreduce`) is a star:

- each rank r > 0 writes its vector (n float64) to rank 0: one message of 8n payload bytes;
- rank 0 reads them in rank order and sums in rank order, ((x₀ + x₁) + x₂) + …, so that the
  result does not depend on which message arrived first (nor on the channel);
- rank 0 writes the sum back to every rank: one message of 8n payload bytes each.

So a reduction costs 2(P − 1) messages and 2(P − 1)·8n payload bytes through rank 0, and two
network latencies; the framing adds 16 bytes a message. Every rank ends with the same bits. A ring
would move fewer bytes through one link for very long vectors, but it sums every chunk in a
different order (still deterministic, not rank order) and needs 2(P − 1) latencies per reduction;
boostlab's reductions are histograms of at most a few MB per tree level, where the latency term
dominates (docs/explanation/distributed.md). Besides the sums, `gather_bytes` and
`broadcast_bytes` carry set-up data over the same connections (the binning summaries to rank 0,
the bin mapper back).

Every exchange has a timeout: a rank that does not connect, send or answer within it, or whose
connection closes (its process died), makes the exchange raise the engine's `FitError` naming the
rank and where it runs. The rank then closes every connection, so that the other ranks fail at
their next exchange instead of waiting.
"""

from __future__ import annotations

import asyncio
import hashlib
import socket
import ssl
import struct
import time
from typing import Any

import numpy as np

# A message: (sequence number of the exchange, number of float64 values or bytes), then the payload.
_HEADER = struct.Struct("<QQ")
# The first message of a connection: the fit's id (length, then UTF-8 bytes) and the rank.
_HELLO = struct.Struct("<QQ")
# Connections of this process wrapped in TLS by the "tcp" channel (both ends count), and its
# listening sockets open now (the tests read them).
TLS_WRAPPED = [0]
LISTENING = [0]


def _split_host_port(address: str) -> tuple[str, int]:
    """`"host:port"` or `"[v6]:port"` as (host, port)."""
    host, _, port = address.rpartition(":")
    return host.strip("[]"), int(port)


def _join_host_port(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class FitError(RuntimeError):
    """A distributed fit failed: a rank was lost, did not answer within `timeout`, or the fit was
    cancelled. The message names the rank and where it ran. Each engine raises its own subclass
    (`boostlab.dask.DaskFitError`, `boostlab.spark.SparkFitError`)."""


def _is_timeout(e) -> bool:
    # asyncio.TimeoutError is TimeoutError from Python 3.11 on, a class of its own before.
    return isinstance(e, (TimeoutError, socket.timeout, asyncio.TimeoutError))


class _Closed(Exception):
    """The peer closed the connection."""


class Collective:
    """The sums of one rank's fit. `allreduce(x)` returns the rank-order sum of `x` over all ranks;
    `stats` counts the reductions and the payload bytes this rank sent and received, and the wall
    seconds spent inside `allreduce`. `transport` chooses the channel (one of `channels`: here
    "tcp"; `boostlab.dask` adds Dask's comms). `addrs[r]` says where rank r runs (a host, or
    `host:port`): rank 0 listens on its host; the errors name it.

    An engine subclasses it for its names: `error` (the exception class), `prefix` (the start of
    every message), `peer` (what a rank runs on: "worker", "task") and `listen_host`."""

    error: type[FitError] = FitError
    prefix = "boostlab"
    peer = "worker"

    def __init__(self, fit_id: str, rank: int, addrs, timeout: float, cancelled=None, transport: str = "tcp"):
        self.fit_id = fit_id
        self.rank = rank
        self.addrs = list(addrs)
        self.size = len(self.addrs)
        self.timeout = float(timeout)
        self.cancelled = cancelled
        if transport not in self.channels:
            raise ValueError(
                f"invalid parameter `transport`: expected one of {', '.join(map(repr, self.channels))}, "
                f"got {transport!r}"
            )
        self.transport = transport
        self.stats: dict[str, Any] = {
            "reductions": 0, "values": 0, "bytes_sent": 0, "bytes_received": 0, "seconds": 0.0
        }
        # The channel and rank 0's address (where rank 0 listens, or what this rank connected to).
        self.stats.update(transport=self.transport, address=None)
        self._seq = 0
        self._at = (0, "answer")  # the exchange in progress: (peer rank, what it must do)
        self._closed = False
        self._buffers: dict = {}  # (use, values) -> a reused buffer (`_buffer`)
        self._chan = self.channels[self.transport](self)
        self.address = None

    channels: dict[str, type] = {}  # filled below, once the channels are defined

    def who(self, r: int) -> str:
        """Rank `r` and where it runs, for the error messages."""
        return f"rank {r} ({self.peer} {self.addrs[r]})"

    def listen_host(self) -> str:
        """The host rank 0 listens on: its entry of `addrs` (a host, or `host:port`)."""
        a = self.addrs[0]
        if a.startswith("["):
            return a[1 : a.index("]")]
        return a.rsplit(":", 1)[0] if a.count(":") == 1 else a

    # ------------------------------------------------------------------ set-up

    def open_root(self, listen_args=None):
        """Rank 0: starts listening on its worker's host (any free port); returns the address the
        other ranks connect to."""
        self.address = self.stats["address"] = self._chan.open_root(listen_args or {})
        return self.address

    def wait_connected(self):
        """Rank 0: waits (at most `timeout`) until every other rank has connected; a connection
        that does not present this fit's id and a valid rank is dropped."""
        deadline = time.monotonic() + self.timeout
        try:
            while not self._chan.all_connected():
                left = deadline - time.monotonic()
                if left <= 0:
                    missing = [self.who(r) for r in range(1, self.size) if not self._chan.has(r)]
                    raise self.error(
                        f"{self.prefix}: {', '.join(missing)} did not connect to rank 0 within "
                        f"timeout={self.timeout:g} s (worker lost or busy)"
                    )
                # In slices, to notice a cancelled fit.
                self._chan.accept_for(min(left, 0.5))
                if not self._chan.all_connected() and self.cancelled is not None and self.cancelled():
                    raise self.error(f"{self.prefix}: the fit was cancelled ({self.who(0)})")
        finally:
            self._chan.stop_listening()

    def _hello_ok(self, ident: str, r) -> bool:
        return ident == self.fit_id and isinstance(r, int) and 0 < r < self.size and not self._chan.has(r)

    def connect(self, address, connection_args=None):
        """Rank r > 0: connects to rank 0 at `address` (retrying until `timeout`)."""
        try:
            self._chan.connect(address, connection_args or {})
        except Exception as e:
            raise self.error(
                f"{self.prefix}: rank {self.rank} could not connect to {self.who(0)} "
                f"at {address} within timeout={self.timeout:g} s: {type(e).__name__}: {e}"
            ) from e
        self.stats["address"] = address

    # ------------------------------------------------------------------ the reduction

    def allreduce(self, x):
        """The rank-order sum over all ranks of the 1-d float64 vector `x` (a new array)."""
        return self.allreduce_shared(x).copy()

    def allreduce_shared(self, x):
        """`allreduce`, its result in this collective's buffer for that many values: valid until
        the next reduction of as many values (the core copies it out at once). Reused because a
        fresh array of 128 KiB or more — a histogram — is a new mapping in a Dask worker, whose
        `MALLOC_TRIM_THRESHOLD_` turns glibc's adaptive mmap threshold off: page-faulted in and
        unmapped at every reduction."""
        if self._closed:
            raise self.error(f"{self.prefix}: rank {self.rank}'s collective is closed")
        if self.cancelled is not None and self.cancelled():
            raise self.error(f"{self.prefix}: the fit was cancelled ({self.who(self.rank)})")
        x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
        self._seq += 1
        t0 = time.perf_counter()
        try:
            out = self._chan.run(self._root_reduce(x) if self.rank == 0 else self._peer_reduce(x))
        except FitError:
            self.close()
            raise
        except TimeoutError as e:
            # The channel's deadline for the whole exchange ("dask"): name the rank it waited for.
            self.close()
            raise self._fail(*self._at, e) from None
        except BaseException:
            self.close()
            raise
        self.stats["seconds"] += time.perf_counter() - t0
        self.stats["reductions"] += 1
        self.stats["values"] += x.size
        return out

    def _fail(self, r, doing, e):
        if _is_timeout(e):
            return self.error(
                f"{self.prefix}: {self.who(r)} did not {doing} reduction #{self._seq} within "
                f"timeout={self.timeout:g} s"
            )
        return self.error(
            f"{self.prefix}: lost the connection to {self.who(r)} during reduction "
            f"#{self._seq} (worker died or its task failed): {type(e).__name__}: {e}"
        )

    def _check_message(self, r, seq, n, want):
        """A message's header against the reduction in progress (`want` values)."""
        if seq != self._seq or n != want:
            raise self.error(
                f"{self.prefix}: {self.who(r)} sent {n} values to reduction #{seq} during "
                f"reduction #{self._seq} of {want} values (the ranks are out of step)"
            )

    async def _recv(self, r, out):
        """Reads rank `r`'s message of this reduction into `out` (n float64)."""
        self._at = (r, "answer")
        try:
            await self._chan.recv(r, out)
        except FitError:
            raise
        except Exception as e:
            raise self._fail(r, "answer", e) from e
        self.stats["bytes_received"] += out.nbytes

    async def _send(self, r, data):
        self._at = (r, "take")
        try:
            await self._chan.send(r, data)
        except Exception as e:
            raise self._fail(r, "take", e) from e
        self.stats["bytes_sent"] += data.nbytes

    def _buffer(self, use, n):
        """The reused buffer of n values for `use` ("result", or "incoming" on rank 0): a few
        lengths recur (histograms, small sums), so each keeps its own."""
        out = self._buffers.get((use, n))
        if out is None:
            if len(self._buffers) >= 16:
                self._buffers.clear()
            out = self._buffers[(use, n)] = np.empty(n)
        return out

    async def _root_reduce(self, x):
        total = self._buffer("result", x.size)
        np.copyto(total, x)
        incoming = self._buffer("incoming", x.size)
        for r in range(1, self.size):
            await self._recv(r, incoming)
            # Rank order: ((x0 + x1) + x2) + ..., whatever order the messages arrived in.
            total += incoming
        for r in range(1, self.size):
            await self._send(r, total)
        return total

    async def _peer_reduce(self, x):
        await self._send(0, x)
        out = self._buffer("result", x.size)
        await self._recv(0, out)
        return out

    # ------------------------------------------------------------------ bytes (set-up data)

    def gather_bytes(self, data: bytes):
        """Rank 0: the `data` of every rank, in rank order (a list); other ranks: None. One message
        per rank r > 0 to rank 0 (the binning summaries, before training)."""
        return self._exchange(self._root_gather(bytes(data)) if self.rank == 0 else self._peer_give(bytes(data)))

    def broadcast_bytes(self, data):
        """Rank 0's `data` (bytes) on every rank (others pass None): the bin mapper."""
        return self._exchange(self._root_give(bytes(data)) if self.rank == 0 else self._peer_take())

    def _exchange(self, coro):
        if self._closed:
            raise self.error(f"{self.prefix}: rank {self.rank}'s collective is closed")
        self._seq += 1
        try:
            return self._chan.run(coro)
        except BaseException:
            self.close()
            raise

    async def _root_gather(self, data):
        out = [data]
        for r in range(1, self.size):
            out.append(await self._recv_bytes(r))
        return out

    async def _peer_give(self, data):
        await self._send(0, memoryview(data))
        return None

    async def _root_give(self, data):
        for r in range(1, self.size):
            await self._send(r, memoryview(data))
        return data

    async def _peer_take(self):
        return await self._recv_bytes(0)

    async def _recv_bytes(self, r):
        self._at = (r, "answer")
        try:
            data = await self._chan.recv_bytes(r)
        except FitError:
            raise
        except Exception as e:
            raise self._fail(r, "answer", e) from e
        self.stats["bytes_received"] += len(data)
        return data

    # ------------------------------------------------------------------ tear-down

    def close(self):
        """Closes every connection (the other ranks then fail at their next exchange)."""
        if self._closed:
            return
        self._closed = True
        self._chan.close()


def check_same_model(coll: Collective, model_json: str) -> None:
    """Every rank checks that all ranks hold the same model (one reduction of the models' SHA-256
    digests, each rank in its own slot): a last exchange that also proves every rank alive."""
    size, rank = coll.size, coll.rank
    digest = np.frombuffer(hashlib.sha256(model_json.encode()).digest(), dtype=np.uint32).astype(np.float64)
    v = np.zeros(size * digest.size)
    v[rank * digest.size : (rank + 1) * digest.size] = digest
    all_digests = coll.allreduce(v).reshape(size, digest.size)
    if not np.all(all_digests == all_digests[0]):
        bad = [r for r in range(size) if not np.array_equal(all_digests[r], all_digests[0])]
        raise coll.error(f"{coll.prefix}: ranks {bad} ended with a model different from rank 0's")


# ---------------------------------------------------------------------------------- the "tcp" channel


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


class _SocketChannel:
    """The "tcp" channel: one blocking socket per peer. Its `send` and `recv` never suspend, so
    `run` drives the star's coroutine to its end in one step on the calling thread."""

    def __init__(self, coll: Collective):
        self.c = coll
        self.socks: list = [None] * coll.size
        self.listener = None
        self.ssl = None
        self.header = bytearray(_HEADER.size)

    @staticmethod
    def run(coro):
        try:
            coro.send(None)
        except StopIteration as done:
            return done.value
        coro.close()
        raise RuntimeError("boostlab: a socket exchange suspended (a bug)")

    def open_root(self, listen_args):
        c = self.c
        self.ssl = listen_args.get("ssl_context")
        host = c.listen_host()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.bind((host, 0))
        sock.listen(max(c.size, 8))
        self.listener = sock
        LISTENING[0] += 1
        address = _join_host_port(host, sock.getsockname()[1])
        if c.size == 1:
            self.stop_listening()
        return address

    def has(self, r) -> bool:
        return self.socks[r] is not None

    def all_connected(self) -> bool:
        return all(s is not None for s in self.socks[1:])

    def accept_for(self, seconds):
        if self.listener is None:
            return
        self.listener.settimeout(seconds)
        try:
            conn, _ = self.listener.accept()
        except TimeoutError:
            return
        self._admit(conn)

    def _admit(self, conn):
        try:
            conn.settimeout(self.c.timeout)
            if self.ssl is not None:
                conn = self.ssl.wrap_socket(conn, server_side=True)
                TLS_WRAPPED[0] += 1
            head = bytearray(_HELLO.size)
            _recv_into(conn, memoryview(head))
            n_id, r = _HELLO.unpack(head)
            if n_id > 1024:
                raise ValueError("bad hello")
            ident = bytearray(n_id)
            _recv_into(conn, memoryview(ident))
            if not self.c._hello_ok(ident.decode(), r):
                raise ValueError("not this fit's rank")
        except Exception:
            conn.close()
            return
        self.socks[r] = _tuned(conn)

    def stop_listening(self):
        if self.listener is not None:
            self.listener.close()
            self.listener = None
            LISTENING[0] -= 1

    def connect(self, address, connection_args):
        c = self.c
        host, port = _split_host_port(address)
        ctx = connection_args.get("ssl_context")
        deadline = time.monotonic() + c.timeout
        while True:
            try:
                sock = socket.create_connection((host, port), timeout=max(0.1, deadline - time.monotonic()))
                sock.settimeout(c.timeout)
                if ctx is not None:
                    sock = ctx.wrap_socket(sock, server_hostname=None if not ctx.check_hostname else host)
                    TLS_WRAPPED[0] += 1
                ident = c.fit_id.encode()
                sock.sendall(_HELLO.pack(len(ident), c.rank) + ident)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.05)
        self.socks[0] = _tuned(sock)

    async def recv(self, r, out):
        sock = self.socks[r]
        _recv_into(sock, memoryview(self.header))
        seq, n = _HEADER.unpack(self.header)
        self.c._check_message(r, seq, n, out.size)
        _recv_into(sock, memoryview(out).cast("B"))

    async def recv_bytes(self, r):
        sock = self.socks[r]
        _recv_into(sock, memoryview(self.header))
        seq, n = _HEADER.unpack(self.header)
        self.c._check_message(r, seq, n, n)
        out = bytearray(n)
        _recv_into(sock, memoryview(out))
        return bytes(out)

    async def send(self, r, data):
        _write(self.socks[r], _HEADER.pack(self.c._seq, data.size if hasattr(data, "size") else data.nbytes), data)

    def close(self):
        for i, s in enumerate(self.socks):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass
                self.socks[i] = None
        self.stop_listening()



Collective.channels = {"tcp": _SocketChannel}
