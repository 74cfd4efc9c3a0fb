"""The allreduce of a distributed fit: one star algorithm over one of two channels, the
ranks' addresses exchanged through Dask.

One fit runs one task per worker ("rank", ranks in the order of the sorted worker addresses).
Dask places the data, starts the ranks' tasks and carries rank 0's address to the others (the
result of a short task on rank 0's worker); the sums travel over one connection per rank r > 0 to
rank 0, opened once and kept for the whole fit. The channel (`transport`) carries the messages:

- "tcp": blocking TCP sockets between the workers (as lightgbm.dask does: Dask
  schedules, the training's messages go straight between the workers), wrapped in the workers'
  own TLS contexts when TLS is configured for them (`distributed.comm.tls`). A message is a
  16-byte header and the raw float64 values, written with one `sendmsg` and read with `recv_into`
  on the rank's task thread itself (a blocking read releases the GIL and wakes that thread).
- "dask" (the default): Dask's own communication layer (`distributed.comm.listen` / `connect`):
  the workers' address scheme (tcp://, tls://, ucx:// where installed, inproc:// for workers in
  the client's process), their security settings — it works wherever the Dask cluster works
  (e.g. where only Dask's own connections are allowed between the workers). The rank's
  connections live on a private asyncio event loop owned by the rank: its task thread drives
  each reduction with `run_until_complete` and blocks in the loop's epoll itself, so no other
  thread is involved (on a loop thread, a thread hop there and back per message costs ≈ 1 ms a
  reduction idle and 3.3 ms inside a fit). On a TCP or TLS comm, after a hello in Dask's framing,
  a message is the "tcp" channel's (16-byte header, raw float64) written on and read from the
  comm's own stream (0.17–0.23 ms a reduction instead of 0.56–0.77 ms for Dask's framed messages,
  within 0.1 ms of "tcp"); on other comms (inproc, ucx) it is a Dask message: a dict holding the
  reduction's number and one raw frame of float64 (`Serialized`, no pickling, no compression
  attempt); the receiver copies the values into its preallocated array.

One reduction (`Collective.allreduce`) is a star, the same code over either channel:

- each rank r > 0 writes its vector (n float64) to rank 0: one message of 8n payload bytes;
- rank 0 reads them in rank order and sums in rank order, ((x₀ + x₁) + x₂) + …, so that the
  result does not depend on which message arrived first (nor on the channel);
- rank 0 writes the sum back to every rank: one message of 8n payload bytes each.

So a reduction costs 2(P − 1) messages and 2(P − 1)·8n payload bytes through rank 0, and two
network latencies; the framing adds 16 bytes a message (either channel over TCP or TLS; Dask's
headers, ≈ 100 bytes, on other comms). Every rank ends with the same bits, the same with either
channel. A ring would move fewer bytes through one link for very long vectors, but it sums every
chunk in a different order
(still deterministic, not rank order) and needs 2(P − 1) latencies per reduction; boostlab's
reductions are histograms of at most a few MB per tree level, where the latency term dominates
(docs/distributed.md).

Every exchange has a timeout: a rank that does not connect, send or answer within it, or whose
connection closes (its worker died), makes the reduction raise `DaskFitError` naming the rank
and its worker. Rank 0 then closes every connection, so that the other ranks fail at their next
exchange instead of waiting.
"""

from __future__ import annotations

import asyncio
import socket
import ssl
import struct
import time
from typing import Any

import numpy as np
from distributed.comm import connect as dask_connect
from distributed.comm import listen as dask_listen
from distributed.comm.addressing import get_address_host, parse_address, parse_host_port, unparse_host_port
from distributed.protocol.serialize import Serialized

# The channels a fit's reductions can travel over (the Dask estimators' `transport`).
TRANSPORTS = ("tcp", "dask")
# A message: (sequence number of the reduction, number of float64 values), then the values.
_HEADER = struct.Struct("<QQ")
# The first message of a connection: the fit's id (length, then UTF-8 bytes) and the rank.
_HELLO = struct.Struct("<QQ")
# Connections of this process wrapped in TLS by the "tcp" channel (both ends count; the tests
# read it).
TLS_WRAPPED = [0]


class DaskFitError(RuntimeError):
    """A distributed fit failed: a worker was lost, did not answer within `timeout`, or the fit
    was cancelled. The message names the rank and its worker."""


def check_transport(value) -> str:
    """`value` if it names a transport ("tcp" or "dask"), else a `ValueError` saying so."""
    if isinstance(value, str) and value in TRANSPORTS:
        return value
    raise ValueError(
        f"invalid parameter `transport`: expected one of {', '.join(repr(t) for t in TRANSPORTS)}, got {value!r}"
    )


def _who(rank: int, addrs) -> str:
    return f"rank {rank} (worker {addrs[rank]})"


def _is_timeout(e) -> bool:
    # asyncio.TimeoutError is TimeoutError from Python 3.11 on, a class of its own before.
    return isinstance(e, (TimeoutError, socket.timeout, asyncio.TimeoutError))


class _Closed(Exception):
    """The peer closed the connection."""


class Collective:
    """The sums of one rank's fit. `allreduce(x)` returns the rank-order sum of `x` over all ranks;
    `stats` counts the reductions and the payload bytes this rank sent and received, and the wall
    seconds spent inside `allreduce`. `transport` chooses the channel ("tcp" or "dask")."""

    def __init__(self, fit_id: str, rank: int, addrs, timeout: float, cancelled=None, transport: str = "dask"):
        self.fit_id = fit_id
        self.rank = rank
        self.addrs = list(addrs)
        self.size = len(self.addrs)
        self.timeout = float(timeout)
        self.cancelled = cancelled
        self.transport = check_transport(transport)
        self.stats: dict[str, Any] = {
            "reductions": 0, "values": 0, "bytes_sent": 0, "bytes_received": 0, "seconds": 0.0
        }
        # The channel and rank 0's address (where rank 0 listens, or what this rank connected to).
        self.stats.update(transport=self.transport, address=None)
        self._seq = 0
        self._at = (0, "answer")  # the exchange in progress: (peer rank, what it must do)
        self._closed = False
        self._buffers: dict = {}  # (use, values) -> a reused buffer (`_buffer`)
        self._chan = (_SocketChannel if self.transport == "tcp" else _DaskChannel)(self)
        self.address = None

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
                    missing = [_who(r, self.addrs) for r in range(1, self.size) if not self._chan.has(r)]
                    raise DaskFitError(
                        f"boostlab.dask: {', '.join(missing)} did not connect to rank 0 within "
                        f"timeout={self.timeout:g} s (worker lost or busy)"
                    )
                # In slices, to notice a cancelled fit.
                self._chan.accept_for(min(left, 0.5))
                if not self._chan.all_connected() and self.cancelled is not None and self.cancelled():
                    raise DaskFitError(f"boostlab.dask: the fit was cancelled ({_who(0, self.addrs)})")
        finally:
            self._chan.stop_listening()

    def _hello_ok(self, ident: str, r) -> bool:
        return ident == self.fit_id and isinstance(r, int) and 0 < r < self.size and not self._chan.has(r)

    def connect(self, address, connection_args=None):
        """Rank r > 0: connects to rank 0 at `address` (retrying until `timeout`)."""
        try:
            self._chan.connect(address, connection_args or {})
        except Exception as e:
            raise DaskFitError(
                f"boostlab.dask: rank {self.rank} could not connect to {_who(0, self.addrs)} "
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
            raise DaskFitError(f"boostlab.dask: rank {self.rank}'s collective is closed")
        if self.cancelled is not None and self.cancelled():
            raise DaskFitError(f"boostlab.dask: the fit was cancelled ({_who(self.rank, self.addrs)})")
        x = np.ascontiguousarray(x, dtype=np.float64).reshape(-1)
        self._seq += 1
        t0 = time.perf_counter()
        try:
            out = self._chan.run(self._root_reduce(x) if self.rank == 0 else self._peer_reduce(x))
        except DaskFitError:
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
            return DaskFitError(
                f"boostlab.dask: {_who(r, self.addrs)} did not {doing} reduction #{self._seq} within "
                f"timeout={self.timeout:g} s"
            )
        return DaskFitError(
            f"boostlab.dask: lost the connection to {_who(r, self.addrs)} during reduction "
            f"#{self._seq} (worker died or its task failed): {type(e).__name__}: {e}"
        )

    def _check_message(self, r, seq, n, want):
        """A message's header against the reduction in progress (`want` values)."""
        if seq != self._seq or n != want:
            raise DaskFitError(
                f"boostlab.dask: {_who(r, self.addrs)} sent {n} values to reduction #{seq} during "
                f"reduction #{self._seq} of {want} values (the ranks are out of step)"
            )

    async def _recv(self, r, out):
        """Reads rank `r`'s message of this reduction into `out` (n float64)."""
        self._at = (r, "answer")
        try:
            await self._chan.recv(r, out)
        except DaskFitError:
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

    # ------------------------------------------------------------------ tear-down

    def close(self):
        """Closes every connection (the other ranks then fail at their next exchange)."""
        if self._closed:
            return
        self._closed = True
        self._chan.close()


# ---------------------------------------------------------------------------------- "tcp"


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
        raise RuntimeError("boostlab.dask: a socket exchange suspended (a bug)")

    def open_root(self, listen_args):
        c = self.c
        self.ssl = listen_args.get("ssl_context")
        scheme, _ = parse_address(c.addrs[0])
        # Workers in the client's process (LocalCluster(processes=False), "inproc://"): loopback.
        host = get_address_host(c.addrs[0]) if scheme in ("tcp", "tls") else "127.0.0.1"
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.bind((host, 0))
        sock.listen(max(c.size, 8))
        self.listener = sock
        address = unparse_host_port(host, sock.getsockname()[1])
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

    def connect(self, address, connection_args):
        c = self.c
        host, port = parse_host_port(address)
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

    async def send(self, r, data):
        _write(self.socks[r], _HEADER.pack(self.c._seq, data.size), data)

    def close(self):
        for i, s in enumerate(self.socks):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass
                self.socks[i] = None
        self.stop_listening()


# ---------------------------------------------------------------------------------- "dask"


def _raw_stream(comm):
    """The byte stream under a TCP or TLS comm of the "dask" channel (Tornado's IOStream of the
    connection Dask opened, with Dask's address, TLS and timeouts): after the hello, the two ends
    exchange the "tcp" channel's messages (16-byte header, raw float64) on it instead of Dask's
    framed messages — a few Python calls a message instead of Dask's message (de)serialisation
    (0.17–0.23 ms a reduction instead of 0.56–0.77 ms). None for other comms (inproc, ucx): Dask's
    messages."""
    return getattr(comm, "stream", None)


def _quick(comm):
    """A comm of the "dask" channel: its messages are never handed to Dask's offload thread (the
    size check before each write walks the message: a cost on every reduction, for messages far
    below the offload threshold)."""
    if hasattr(comm, "allow_offload"):
        comm.allow_offload = False
    return comm


class _DaskChannel:
    """The "dask" channel: `distributed.comm` connections on a private event loop that the rank's
    thread runs only while it exchanges (`run`). Between two reductions the loop is idle: what
    arrives waits in the kernel's buffers, and every write is flushed before `send` returns."""

    def __init__(self, coll: Collective):
        self.c = coll
        self.loop = asyncio.new_event_loop()
        self.comms: list = [None] * coll.size
        self.listener = None
        self.connected = None

    def run(self, coro, timeout=None):
        """Runs `coro` on this rank's loop on the calling thread, at most `timeout` seconds (by
        default the fit's `timeout`): past it, the coroutine is cancelled and `TimeoutError`
        raised."""
        task = self.loop.create_task(coro)
        expired = []

        def expire():
            expired.append(True)
            task.cancel()

        handle = self.loop.call_later(self.c.timeout if timeout is None else timeout, expire)
        try:
            return self.loop.run_until_complete(task)
        except asyncio.CancelledError:
            if expired:
                raise TimeoutError(f"no answer within {self.c.timeout if timeout is None else timeout:g} s") from None
            raise
        finally:
            handle.cancel()

    def open_root(self, listen_args):
        c = self.c
        scheme, _ = parse_address(c.addrs[0])
        # Workers in the client's process (LocalCluster(processes=False)): an in-process listener,
        # whose address the listener chooses.
        where = (
            "inproc://" if scheme == "inproc"
            else f"{scheme}://{unparse_host_port(get_address_host(c.addrs[0]), 0)}"
        )
        self.connected = asyncio.Event()

        async def start():
            self.listener = dask_listen(where, self._accept, deserialize=False, **listen_args)
            await self.listener.start()
            return self.listener.contact_address

        address = self.run(start())
        if c.size == 1:
            self.stop_listening()
        return address

    async def _accept(self, comm):
        try:
            hello = await asyncio.wait_for(comm.read(), self.c.timeout)
            r = hello.get("rank") if isinstance(hello, dict) else None
            if not isinstance(hello, dict) or not self.c._hello_ok(hello.get("fit"), r):
                raise ValueError("not this fit's rank")
        except Exception:
            comm.abort()
            return
        self.comms[r] = _quick(comm)
        if self.all_connected():
            self.connected.set()

    def has(self, r) -> bool:
        return self.comms[r] is not None

    def all_connected(self) -> bool:
        return all(c is not None for c in self.comms[1:])

    def accept_for(self, seconds):
        try:
            self.run(self.connected.wait(), timeout=seconds)
        except TimeoutError:
            pass

    def stop_listening(self):
        if self.listener is not None:
            listener, self.listener = self.listener, None
            self.run(self._stop(listener))

    @staticmethod
    async def _stop(listener):
        listener.stop()

    def connect(self, address, connection_args):
        c = self.c

        async def go():
            comm = await dask_connect(address, timeout=c.timeout, deserialize=False, **connection_args)
            await comm.write({"fit": c.fit_id, "rank": c.rank})
            return comm

        self.comms[0] = _quick(self.run(go()))

    async def recv(self, r, out):
        stream = _raw_stream(self.comms[r])
        if stream is not None:
            head = memoryview(bytearray(_HEADER.size))
            await stream.read_into(head)
            seq, n = _HEADER.unpack(head)
            self.c._check_message(r, seq, n, out.size)
            await stream.read_into(memoryview(out).cast("B"))
            return
        msg = await self.comms[r].read()
        data = msg.get("data") if isinstance(msg, dict) else None
        frames = getattr(data, "frames", None)
        if frames is None or len(frames) != 1:
            raise DaskFitError(
                f"boostlab.dask: {_who(r, self.c.addrs)} sent an unexpected message during reduction "
                f"#{self.c._seq} (the ranks are out of step)"
            )
        frame = memoryview(frames[0]).cast("B")
        self.c._check_message(r, msg.get("seq"), frame.nbytes // 8 if frame.nbytes % 8 == 0 else -1, out.size)
        # The frame may sit at any byte offset of the message's buffer: copied as bytes.
        memoryview(out).cast("B")[:] = frame

    async def send(self, r, data):
        comm = self.comms[r]
        raw = _raw_stream(comm)
        if raw is not None:
            # Both writes' futures resolve once their bytes are in the kernel; both are awaited
            # (a failed one raises here, none is left unretrieved).
            done = await asyncio.gather(
                raw.write(_HEADER.pack(self.c._seq, data.size)),
                raw.write(memoryview(data).cast("B")),
                return_exceptions=True,
            )
            for d in done:
                if isinstance(d, BaseException):
                    raise d
            return
        # Other comms (inproc hands the object over, ucx): a Dask message with its own copy of the
        # values.
        await comm.write({"seq": self.c._seq, "data": Serialized({}, [data.tobytes()])})

    def close(self):
        async def shut():
            for i, comm in enumerate(self.comms):
                if comm is not None and not comm.closed():
                    comm.abort()
                self.comms[i] = None
            if self.listener is not None:
                self.listener.stop()
                self.listener = None
            await asyncio.sleep(0)

        loop = self.loop
        if loop.is_closed():
            return
        try:
            loop.run_until_complete(shut())
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for t in pending:
                t.cancel()
            if pending:
                loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.run_until_complete(loop.shutdown_default_executor())
        finally:
            loop.close()
