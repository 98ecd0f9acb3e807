#!/usr/bin/env python3
"""Figures for issue 14, items 1 and 2, against a real `longlink serve` process (loopback, ephemeral ports).

    python3 Tests/Measurements/outbound_and_admission.py rss BINARY [--loops N] [--megabytes 30]
    python3 Tests/Measurements/outbound_and_admission.py admission BINARY --loops N [--connections 4000] [--seconds 0.25]

rss: for each of "pings" and "refused publishes", starts a fresh gateway, connects one client that completes the
handshake and then never reads, and sends up to --megabytes of that frame kind, pipelined. Prints the server's
RSS before, at its peak and after, how the client's sending ended, and the slow-consumer counter.

admission: starts a gateway with the documented connection-rate defaults (1000/s, burst 2000; no per-address
cap, since every connection comes from 127.0.0.1), opens --connections connections paced over --seconds, and
prints how many were admitted and how many got connection_rate_limited (3005).

Every loop is bounded in count and time; the gateway is stopped by its PID (SIGTERM, then SIGKILL).
"""

import argparse
import errno
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.request


def varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def field(number, payload):
    """A length-delimited protobuf field."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def frame(body):
    return varint(len(body)) + body


CONNECT = frame(field(18, b"\x08\x01" + field(2, b"dev") + field(3, b"measure")))
PING = frame(field(14, b""))


def refused_publish(request_id):
    # An order that does not exist moved to a state no line has: refused (by the store, or by the publish rate).
    body = varint(1 << 3) + varint(request_id) + field(2, b"measure-1") + field(3, b"taxi") + field(5, b"nosuch")
    return frame(field(13, body))


class Gateway:
    def __init__(self, binary, extra):
        arguments = [binary, "serve", "--store", "memory", "--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0",
                     "--insecure-dev", "--log-level", "warning", "--log-format", "text"] + extra
        self.process = subprocess.Popen(arguments, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.port = None
        self.operations = None
        text = b""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (self.port is None or self.operations is None):
            ready, _, _ = select.select([self.process.stderr], [], [], 0.5)
            if ready:
                chunk = os.read(self.process.stderr.fileno(), 65536)
                if not chunk:
                    break
                text += chunk
            found = re.search(rb"serving on 127\.0\.0\.1:(\d+)", text)
            if found:
                self.port = int(found.group(1))
            found = re.search(rb"operations: http://127\.0\.0\.1:(\d+)", text)
            if found:
                self.operations = int(found.group(1))
        if self.port is None or self.operations is None:
            self.stop()
            raise SystemExit("the gateway did not start:\n" + text.decode(errors="replace"))

    def rss_kib(self):
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return -1

    def metric(self, name, labels=""):
        """The sum of a metric's samples whose labels contain `labels`."""
        text = urllib.request.urlopen(f"http://127.0.0.1:{self.operations}/metrics", timeout=5).read().decode()
        total = 0.0
        for line in text.splitlines():
            found = re.match(r"([a-z_]+)(\{[^}]*\})? (\S+)$", line)
            if found and found.group(1) == name and labels in (found.group(2) or ""):
                total += float(found.group(3))
        return int(total)

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def never_reading_client(gateway, payload_of, total_bytes, seconds):
    """Sends up to total_bytes of frames without ever reading after the handshake; samples the server's RSS."""
    client = socket.create_connection(("127.0.0.1", gateway.port), timeout=5)
    client.sendall(CONNECT)
    client.recv(4096)  # connected
    client.setblocking(False)
    sent = 0
    peak = gateway.rss_kib()
    outcome = "sent everything"
    started = time.monotonic()
    last_progress = started
    last_sample = 0.0
    pending = b""
    index = 0
    while sent < total_bytes:
        now = time.monotonic()
        if now - started > seconds:
            outcome = f"stopped after {seconds} s"
            break
        if now - last_progress > 15:
            outcome = "blocked: the server stopped reading for 15 s"
            break
        if now - last_sample > 0.1:
            peak = max(peak, gateway.rss_kib())
            last_sample = now
        if not pending:
            batch = bytearray()
            while len(batch) < 64 * 1024:
                index += 1
                batch += payload_of(index)
            pending = bytes(batch)
        _, writable, _ = select.select([], [client], [], 0.1)
        if not writable:
            continue
        try:
            count = client.send(pending)
        except BlockingIOError:
            continue
        except OSError as error:
            if error.errno in (errno.EPIPE, errno.ECONNRESET):
                outcome = "cut by the server"
                break
            raise
        pending = pending[count:]
        sent += count
        last_progress = time.monotonic()
    # The server may still be working through what it read: keep sampling a little.
    settle = time.monotonic() + 3
    while time.monotonic() < settle:
        peak = max(peak, gateway.rss_kib())
        time.sleep(0.1)
    client.close()
    return sent, peak, outcome


def measure_rss(arguments):
    extra = ["--loops", str(arguments.loops), "--pong-timeout", "2s"]
    kinds = [("pings", lambda index: PING), ("refused publishes", refused_publish)]
    for name, payload_of in kinds:
        gateway = Gateway(arguments.binary, extra)
        try:
            time.sleep(0.5)
            before = gateway.rss_kib()
            sent, peak, outcome = never_reading_client(gateway, payload_of, arguments.megabytes << 20, arguments.timeout)
            after = gateway.rss_kib()
            slow = gateway.metric("longlink_slow_consumer_disconnects_total")
            slow_code = gateway.metric("longlink_disconnects_total", 'code="3002"')
            print(f"{name:18} loops={arguments.loops} sent={sent / 1048576:.1f} MiB ({outcome}); "
                  f"RSS before={before / 1024:.1f} MiB peak={peak / 1024:.1f} MiB after={after / 1024:.1f} MiB; "
                  f"slow disconnects={slow} (code 3002: {slow_code})", flush=True)
        finally:
            gateway.stop()


def measure_admission(arguments):
    extra = ["--loops", str(arguments.loops), "--max-connections-per-address", "0", "--max-connections", "19000"]
    gateway = Gateway(arguments.binary, extra)
    sockets = []
    try:
        time.sleep(0.5)
        count = arguments.connections
        # The sockets are made before the clock starts: only the connects are paced.
        for _ in range(count):
            client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            client.setblocking(False)
            sockets.append(client)
        address = ("127.0.0.1", gateway.port)
        started = time.monotonic()
        for index, client in enumerate(sockets):
            # Paced: connection i is opened at i/count of the period (or as soon as possible after it).
            if index % 100 == 0:
                delay = started + arguments.seconds * index / count - time.monotonic()
                if delay > 0:
                    time.sleep(delay)
            client.connect_ex(address)
        elapsed = time.monotonic() - started
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and gateway.metric("longlink_connections_accepted_total") < count:
            time.sleep(0.1)
        time.sleep(0.5)
        accepted = gateway.metric("longlink_connections_accepted_total")
        limited = gateway.metric("longlink_disconnects_total", 'code="3005"')
        admitted = gateway.metric("longlink_connections")
        print(f"loops={arguments.loops} opened={count} in {elapsed:.2f} s: accepted={accepted} admitted={admitted} "
              f"connection_rate_limited(3005)={limited}", flush=True)
    finally:
        for client in sockets:
            client.close()
        gateway.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["rss", "admission"])
    parser.add_argument("binary")
    parser.add_argument("--loops", type=int, default=2)
    parser.add_argument("--megabytes", type=int, default=30)
    parser.add_argument("--timeout", type=float, default=60, help="longest a never-reading client keeps sending")
    parser.add_argument("--connections", type=int, default=4000)
    parser.add_argument("--seconds", type=float, default=0.25)
    arguments = parser.parse_args()
    if arguments.mode == "rss":
        measure_rss(arguments)
    else:
        measure_admission(arguments)


if __name__ == "__main__":
    sys.exit(main())
