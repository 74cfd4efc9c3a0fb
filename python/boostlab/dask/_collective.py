"""The allreduce of a distributed fit: one star algorithm over one of two channels, the
ranks' addresses exchanged through Dask. The star and the "tcp" channel are engine-neutral
(`boostlab._collective`, shared with `boostlab.spark`); this module gives them Dask's names and
adds the "dask" channel.

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

from distributed.comm import connect as dask_connect
from distributed.comm import listen as dask_listen
from distributed.comm.addressing import get_address_host, parse_address, unparse_host_port
from distributed.protocol.serialize import Serialized

from .. import _collective as _base
from .._collective import _HEADER, TLS_WRAPPED, FitError, _SocketChannel  # noqa: F401 (TLS_WRAPPED: the tests)

# The channels a fit's reductions can travel over (the Dask estimators' `transport`).
TRANSPORTS = ("tcp", "dask")


class DaskFitError(FitError):
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


class Collective(_base.Collective):
    """The engine-neutral collective (`boostlab._collective`) with Dask's names and a second
    channel, "dask" (the default): Dask's own comms. On the "tcp" channel rank 0 listens on its
    worker's host (loopback for workers in the client's process, "inproc://")."""

    error = DaskFitError
    prefix = "boostlab.dask"
    peer = "worker"

    def __init__(self, fit_id: str, rank: int, addrs, timeout: float, cancelled=None, transport: str = "dask"):
        super().__init__(fit_id, rank, addrs, timeout, cancelled, check_transport(transport))

    def listen_host(self) -> str:
        scheme, _ = parse_address(self.addrs[0])
        return get_address_host(self.addrs[0]) if scheme in ("tcp", "tls") else "127.0.0.1"


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

Collective.channels = {"tcp": _SocketChannel, "dask": _DaskChannel}
