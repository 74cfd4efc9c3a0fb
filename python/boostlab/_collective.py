"""The allreduce of a distributed fit (issue 13), over Dask's own communication layer.

One fit runs one task per worker ("rank", ranks in the order of the sorted worker addresses).
Rank 0 listens on a `distributed.comm` listener (the worker's host, the worker's protocol and TLS
settings); every other rank connects to it once and keeps the connection for the whole fit.

One reduction (`Collective.allreduce`) is a star:

- each rank r > 0 writes its vector (n float64) to rank 0: one message of 8n bytes;
- rank 0 reads them in rank order and sums in rank order, ((x₀ + x₁) + x₂) + …, so that the
  result does not depend on which message arrived first;
- rank 0 writes the sum back to every rank: one message of 8n bytes each.

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

import asyncio
import threading
import time

import numpy as np
from distributed.comm import connect, listen
from distributed.comm.addressing import parse_address, unparse_host_port, get_address_host
from distributed.protocol import to_serialize


class DaskFitError(RuntimeError):
    """A distributed fit failed: a worker was lost, did not answer within `timeout`, or the fit
    was cancelled. The message names the rank and its worker."""


class _Loop:
    """A private asyncio loop on a daemon thread: the connections of one rank live on it, and the
    rank's task thread (which runs the training) blocks on its coroutines."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="boostlab-dask-comm", daemon=True)
        self.thread.start()

    def run(self, coro):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result()

    def stop(self):
        if self.loop.is_closed():
            return
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        if not self.thread.is_alive():
            self.loop.close()


def _who(rank: int, addrs) -> str:
    return f"rank {rank} (worker {addrs[rank]})"


class Collective:
    """The sums of one rank's fit. `allreduce(x)` returns the rank-order sum of `x` over all ranks;
    `stats` counts the reductions and the payload bytes this rank sent and received."""

    def __init__(self, fit_id: str, rank: int, addrs, timeout: float, cancelled=None):
        self.fit_id = fit_id
        self.rank = rank
        self.addrs = list(addrs)
        self.size = len(self.addrs)
        self.timeout = float(timeout)
        self.cancelled = cancelled
        self.stats = {"reductions": 0, "values": 0, "bytes_sent": 0, "bytes_received": 0, "seconds": 0.0}
        self._seq = 0
        self._io = _Loop()
        self._comms: list = [None] * self.size
        self._closed = False
        self.address = None

    # ------------------------------------------------------------------ set-up

    def open_root(self, listen_args=None):
        """Rank 0: starts listening on the worker's host; returns the address to connect to."""
        self.address = self._io.run(self._open_root(listen_args or {}))
        return self.address

    async def _open_root(self, listen_args):
        self._all_connected = asyncio.Event()
        scheme, _ = parse_address(self.addrs[0])
        if scheme == "inproc":
            # Workers in the client's process (LocalCluster(processes=False)): an in-process
            # listener, whose address the listener chooses.
            where = "inproc://"
        else:
            where = f"{scheme}://{unparse_host_port(get_address_host(self.addrs[0]), 0)}"
        self._listener = listen(where, self._accept, deserialize=True, **listen_args)
        await self._listener.start()
        if self.size == 1:
            self._all_connected.set()
        return self._listener.contact_address

    async def _accept(self, comm):
        try:
            hello = await asyncio.wait_for(comm.read(), self.timeout)
            r = hello.get("rank") if isinstance(hello, dict) else None
            if hello.get("fit") != self.fit_id or not isinstance(r, int) or not 0 < r < self.size or self._comms[r]:
                await comm.close()
                return
        except Exception:
            comm.abort()
            return
        self._comms[r] = comm
        if all(c is not None for c in self._comms[1:]):
            self._all_connected.set()

    def wait_connected(self):
        """Rank 0: waits (at most `timeout`) until every other rank has connected."""
        self._io.run(self._wait_connected())

    async def _wait_connected(self):
        try:
            await asyncio.wait_for(self._all_connected.wait(), self.timeout)
        except asyncio.TimeoutError:
            missing = [_who(r, self.addrs) for r in range(1, self.size) if self._comms[r] is None]
            raise DaskFitError(
                f"boostlab.dask: {', '.join(missing)} did not connect to rank 0 within "
                f"timeout={self.timeout:g} s (worker lost or busy)"
            ) from None
        finally:
            self._listener.stop()

    def connect(self, address, connection_args=None):
        """Rank r > 0: connects to rank 0 at `address` (retrying until `timeout`)."""
        self._io.run(self._connect(address, connection_args or {}))

    async def _connect(self, address, connection_args):
        try:
            comm = await connect(address, timeout=self.timeout, deserialize=True, **connection_args)
            await asyncio.wait_for(comm.write({"fit": self.fit_id, "rank": self.rank}), self.timeout)
        except Exception as e:
            raise DaskFitError(
                f"boostlab.dask: rank {self.rank} could not connect to {_who(0, self.addrs)} "
                f"at {address} within timeout={self.timeout:g} s: {e}"
            ) from e
        self._comms[0] = comm

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
            out = self._io.run(self._root_reduce(x) if self.rank == 0 else self._peer_reduce(x))
        except BaseException:
            self.close()
            raise
        self.stats["seconds"] += time.perf_counter() - t0
        self.stats["reductions"] += 1
        self.stats["values"] += x.size
        # A received vector may be a view into the message's frame, at any byte offset: the core
        # reads an aligned array (numpy's `require` copies only an unaligned one).
        return np.require(out, dtype=np.float64, requirements=["C", "A"])

    async def _recv(self, r):
        comm = self._comms[r]
        try:
            msg = await asyncio.wait_for(comm.read(), self.timeout)
        except asyncio.TimeoutError:
            raise DaskFitError(
                f"boostlab.dask: {_who(r, self.addrs)} did not answer reduction #{self._seq} within "
                f"timeout={self.timeout:g} s"
            ) from None
        except Exception as e:
            raise DaskFitError(
                f"boostlab.dask: lost the connection to {_who(r, self.addrs)} during reduction "
                f"#{self._seq} (worker died or its task failed): {type(e).__name__}: {e}"
            ) from e
        if not isinstance(msg, dict) or msg.get("seq") != self._seq:
            raise DaskFitError(
                f"boostlab.dask: {_who(r, self.addrs)} sent an unexpected message during reduction "
                f"#{self._seq} (the ranks are out of step)"
            )
        data = np.asarray(msg["data"], dtype=np.float64)
        self.stats["bytes_received"] += data.nbytes
        return data

    async def _send(self, r, data):
        try:
            await asyncio.wait_for(self._comms[r].write({"seq": self._seq, "data": to_serialize(data)}), self.timeout)
        except asyncio.TimeoutError:
            raise DaskFitError(
                f"boostlab.dask: {_who(r, self.addrs)} did not take reduction #{self._seq} within "
                f"timeout={self.timeout:g} s"
            ) from None
        except Exception as e:
            raise DaskFitError(
                f"boostlab.dask: lost the connection to {_who(r, self.addrs)} during reduction "
                f"#{self._seq} (worker died or its task failed): {type(e).__name__}: {e}"
            ) from e
        self.stats["bytes_sent"] += data.nbytes

    async def _root_reduce(self, x):
        total = x.copy()
        for r in range(1, self.size):
            part = await self._recv(r)
            if part.shape != total.shape:
                raise DaskFitError(
                    f"boostlab.dask: {_who(r, self.addrs)} sent {part.size} values to reduction "
                    f"#{self._seq}, rank 0 has {total.size} (the ranks are out of step)"
                )
            # Rank order: ((x0 + x1) + x2) + ..., whatever order the messages arrived in.
            total += part
        for r in range(1, self.size):
            await self._send(r, total)
        return total

    async def _peer_reduce(self, x):
        await self._send(0, x)
        out = await self._recv(0)
        if out.shape != x.shape:
            raise DaskFitError(f"boostlab.dask: rank 0 answered reduction #{self._seq} with {out.size} values, expected {x.size}")
        return out

    # ------------------------------------------------------------------ tear-down

    def close(self):
        """Closes every connection (the other ranks then fail at their next exchange)."""
        if self._closed:
            return
        self._closed = True

        async def _close():
            for c in self._comms:
                if c is not None and not c.closed():
                    c.abort()
            listener = getattr(self, "_listener", None)
            if listener is not None:
                listener.stop()

        try:
            self._io.run(_close())
        finally:
            self._io.stop()
