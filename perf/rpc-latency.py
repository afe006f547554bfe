#!/usr/bin/env python3
"""JSON-RPC round trip of the target daemon's management socket (SPDK's framing: JSON objects back to back).

    perf/rpc-latency.py [-s SOCKET] [-n CALLS] [--method M] [--params JSON] [--per-call-connection]

Sends CALLS requests one after another (each waits for its answer), after 100 unmeasured warm-up calls, and prints
the median, p90, p99 and max round trip in microseconds. Standard library only."""
import argparse
import json
import socket
import statistics
import time


def read_one(sock, buf, decoder):
    """Reads until buf holds one whole JSON value; returns (value, rest of buf)."""
    while True:
        text = buf.lstrip()
        if text:
            try:
                value, end = decoder.raw_decode(text)
                return value, text[end:]
            except json.JSONDecodeError:
                pass
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the daemon closed the connection")
        buf += chunk.decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-s", "--socket", default="/var/tmp/nvmeof-target.sock")
    ap.add_argument("-n", "--calls", type=int, default=2000)
    ap.add_argument("--method", default="spdk_get_version")
    ap.add_argument("--params", default=None, help="JSON params, e.g. '{\"nqn\": \"...\"}'")
    ap.add_argument("--per-call-connection", action="store_true", help="connect anew for every call")
    a = ap.parse_args()
    params = json.loads(a.params) if a.params else None
    decoder = json.JSONDecoder()

    def connect():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(a.socket)
        return s

    sock = None if a.per_call_connection else connect()
    buf = ""
    samples = []
    for i in range(100 + a.calls):
        req = {"jsonrpc": "2.0", "id": i, "method": a.method}
        if params is not None:
            req["params"] = params
        data = json.dumps(req).encode()
        t0 = time.perf_counter_ns()
        s = connect() if a.per_call_connection else sock
        s.sendall(data)
        resp, buf = read_one(s, buf, decoder)
        t1 = time.perf_counter_ns()
        if a.per_call_connection:
            s.close()
            buf = ""
        if "error" in resp or resp.get("id") != i:
            raise SystemExit(f"unexpected answer: {resp}")
        if i >= 100:
            samples.append((t1 - t0) / 1000)
    samples.sort()
    q = lambda p: samples[min(len(samples) - 1, int(p * len(samples)))]
    mode = "a new connection per call" if a.per_call_connection else "one connection"
    print(f"{a.method}, {a.calls} calls, {mode}: median {statistics.median(samples):.0f} us, "
          f"p90 {q(0.90):.0f} us, p99 {q(0.99):.0f} us, max {samples[-1]:.0f} us")


if __name__ == "__main__":
    main()
