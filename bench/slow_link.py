"""A slow network link on loopback: a TCP proxy that delays every byte.

SlowLink listens on 127.0.0.1 and forwards each connection it accepts to one
upstream host:port, holding every chunk it reads for `delay` seconds before
passing it on, in each direction, in order. A round trip through it therefore
costs 2 × delay more than on loopback, as on a link with that one-way latency.

What it models:
  - Propagation delay, the same both ways, for every byte (a request, an
    answer, each TLS handshake flight).
  - The TCP handshake. On loopback, connect() returns at once, so a client
    could send its first bytes a round trip early. The SYN / SYN-ACK costs one
    round trip before the client can send, so bytes the client sends are
    forwarded no earlier than accept time + 2 × delay, and then + delay, as
    they would arrive: the first request on a new connection costs one round
    trip more than on a kept one, as on a real network.
  - Half-closes: an end-of-stream is passed on after the bytes before it,
    with the same delay.

What it does not model: bandwidth (every chunk travels at once, whatever its
size), loss and retransmission, TCP's congestion window and slow start, Nagle
and delayed ACKs between the real ends, jitter, or the closing handshake
(FIN/ACK after the client is done costs the client nothing). A connection to
the upstream itself is made at accept time over loopback, at no delay.

`delay` is read when a connection is accepted: changing it between commands
(e.g. 0 to time the same chain without the link) never changes a connection
in flight. `connections` counts the connections accepted since start.

In-process use (asyncio on a thread of its own):
    link = SlowLink("127.0.0.1", 8443, delay=0.04).start()
    ... connect to 127.0.0.1:link.port ...
    link.stop()
Only the Python standard library is used.
"""
import asyncio
import socket
import threading

HOST = "127.0.0.1"
CHUNK = 65536


class SlowLink:
    def __init__(self, upstream_host, upstream_port, delay, host=HOST):
        self.upstream = (upstream_host, upstream_port)
        self.delay = delay
        self.host = host
        self.port = None
        self._connections = 0
        self._lock = threading.Lock()
        self._loop = None
        self._thread = None
        self._server = None
        self._tasks = set()

    # --- life cycle (called from the owner's thread) -------------------------------

    def start(self):
        """Listen on a free port of `host`; returns self once it does."""
        ready = threading.Event()
        failure = []

        def run():
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            try:
                self._server = self._loop.run_until_complete(
                    asyncio.start_server(self._serve, self.host, 0, reuse_address=True))
                self.port = self._server.sockets[0].getsockname()[1]
            except Exception as err:  # reported to start()'s caller
                failure.append(err)
                ready.set()
                return
            ready.set()
            self._loop.run_forever()
            # Stopped: close the listener and every connection still open.
            self._server.close()
            for task in list(self._tasks):
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*self._tasks, return_exceptions=True))
            self._loop.run_until_complete(self._server.wait_closed())
            self._loop.close()

        self._thread = threading.Thread(target=run, name=f"slow-link-{id(self):x}", daemon=True)
        self._thread.start()
        ready.wait()
        if failure:
            raise failure[0]
        return self

    def stop(self):
        if self._loop is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def connections(self):
        """Connections accepted since start."""
        with self._lock:
            return self._connections

    def url(self, scheme="https"):
        return f"{scheme}://{self.host}:{self.port}/"

    # --- the link (on the loop's thread) -------------------------------------------

    async def _serve(self, client_reader, client_writer):
        loop = asyncio.get_running_loop()
        accepted = loop.time()
        delay = self.delay  # fixed for this connection's life
        with self._lock:
            self._connections += 1
        task = asyncio.current_task()
        self._tasks.add(task)
        upstream_writer = None
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self.upstream)
            for writer in (client_writer, upstream_writer):
                # asyncio sets TCP_NODELAY on its TCP streams already; said
                # here because a held-back small write would add a delay the
                # link does not mean to add.
                writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            await asyncio.gather(
                # The client's bytes wait for the modelled SYN / SYN-ACK round trip first.
                self._pipe(client_reader, upstream_writer, delay, not_before=accepted + 2 * delay + delay),
                self._pipe(upstream_reader, client_writer, delay, not_before=0.0),
            )
        except (ConnectionError, OSError):
            pass  # either end went away: close both
        except asyncio.CancelledError:
            pass  # stop(): ends quietly (asyncio logs a stream handler's cancellation as an error)
        finally:
            for writer in (client_writer, upstream_writer):
                if writer is not None:
                    writer.close()
            self._tasks.discard(task)

    @staticmethod
    async def _pipe(reader, writer, delay, not_before):
        """Copy reader to writer, each chunk `delay` seconds after it was read
        (and never before `not_before`), in order. Reading goes on while
        earlier chunks wait, so the delay is not added once per chunk."""
        loop = asyncio.get_running_loop()
        queue = asyncio.Queue()

        async def deliver():
            while True:
                due, data = await queue.get()
                wait = due - loop.time()
                if wait > 0:
                    await asyncio.sleep(wait)
                if not data:  # end of stream, after everything before it
                    if writer.can_write_eof():
                        writer.write_eof()
                    return
                writer.write(data)
                await writer.drain()

        delivering = asyncio.ensure_future(deliver())
        try:
            while True:
                try:
                    data = await reader.read(CHUNK)
                except (ConnectionError, OSError):
                    data = b""
                # Due times never decrease (loop.time() is monotonic and
                # not_before is fixed), so the queue's order is the wire's.
                queue.put_nowait((max(loop.time() + delay, not_before), data))
                if not data:
                    break
            await delivering
        finally:
            delivering.cancel()
