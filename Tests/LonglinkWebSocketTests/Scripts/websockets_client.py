#!/usr/bin/python3
"""An independent WebSocket client for Longlink's happy paths: Debian's python3-websockets (not our code) does the
upgrade, masking, fragmentation and close handshake. Prints one JSON line per event for the Swift test to check.

    websockets_client.py URL ROUTE [--ca CA.pem]
"""
import asyncio
import json
import ssl
import sys

import websockets

STATES = {1: "created", 2: "dispatching", 5: "driver_assigned", 12: "no_driver_timeout"}


def varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def field(number, payload):
    """A length-delimited field (wire type 2)."""
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def number(number, value):
    """A varint field (wire type 0)."""
    return varint(number << 3) + varint(value)


def frame(kind, body):
    """A ClientFrame with one oneof member, length-prefixed."""
    message = field(kind, body)
    return varint(len(message)) + message


def read_varint(data, at):
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def fields(data):
    """(number, value) pairs of a message; varints as ints, length-delimited as bytes."""
    at = 0
    out = []
    while at < len(data):
        key, at = read_varint(data, at)
        kind = key & 7
        if kind == 0:
            value, at = read_varint(data, at)
        elif kind == 2:
            length, at = read_varint(data, at)
            value = data[at:at + length]
            at += length
        elif kind == 1:
            value = data[at:at + 8]
            at += 8
        elif kind == 5:
            value = data[at:at + 4]
            at += 4
        else:
            raise ValueError("wire type %d" % kind)
        out.append((key >> 3, value))
    return out


def server_frames(message):
    """The ServerFrames in one binary message: (kind, body) pairs."""
    at = 0
    out = []
    while at < len(message):
        length, at = read_varint(message, at)
        body = message[at:at + length]
        at += length
        out.extend(fields(body))
    return out


def say(**event):
    print(json.dumps(event), flush=True)


async def frames_until(ws, wanted, count=1):
    """Reads messages until `count` frames of kind `wanted` arrived; returns them and every kind seen."""
    found = []
    seen = []
    while len(found) < count:
        message = await asyncio.wait_for(ws.recv(), 10)
        if isinstance(message, str):
            raise ValueError("a text message from the server")
        for kind, body in server_frames(message):
            seen.append(kind)
            if kind == wanted:
                found.append(body)
    return found, seen


async def main():
    url, route = sys.argv[1], sys.argv[2]
    context = None
    if "--ca" in sys.argv:
        context = ssl.create_default_context(cafile=sys.argv[sys.argv.index("--ca") + 1])
    try:
        async with websockets.connect(url, ssl=context, subprotocols=[]):
            say(event="accepted-without-subprotocol")
    except websockets.exceptions.InvalidStatusCode as error:
        say(event="refused", status=error.status_code)

    async with websockets.connect(url, ssl=context, subprotocols=["longlink.v1.protobuf"]) as ws:
        say(event="open", subprotocol=ws.subprotocol)
        await ws.send(frame(18, number(1, 1) + field(3, b"python-websockets")))
        connected, _ = await frames_until(ws, 10)
        client_id = dict(fields(connected[0])).get(2, b"").decode()
        say(event="connected", client_id=client_id)
        await ws.send(frame(16, number(1, 1) + field(2, route.encode())))
        await frames_until(ws, 6)
        say(event="subscribed")
        order = route.rsplit("/", 1)[1]
        publishes = b"".join(
            frame(13, number(1, 10 + index) + field(2, order.encode()) + field(3, b"taxi") + field(5, state.encode()))
            for index, state in enumerate(["created", "dispatching", "no_driver_timeout"])
        )
        await ws.send(publishes)  # three frames in one message
        pushes, seen = await frames_until(ws, 1, count=3)
        if seen.count(5) < 3:
            _, more = await frames_until(ws, 5, count=3 - seen.count(5))
            seen += more
        states = []
        for body in pushes:
            values = dict(fields(body))
            states.append(STATES.get(values.get(5), values.get(6, b"?").decode() if isinstance(values.get(6), bytes) else "?"))
        say(event="pushes", states=states, publish_results=seen.count(5))
        # A large message in fragments: 200 Longlink ping frames cut into 7-byte fragments.
        pings = b"\x02\x72\x00" * 200
        await ws.send(pings[i:i + 7] for i in range(0, len(pings), 7))
        _, seen = await frames_until(ws, 3, count=200)
        say(event="fragmented-pings-answered", pongs=seen.count(3))
        await asyncio.wait_for(await ws.ping(b"are you there"), 10)
        say(event="pong")
        await ws.close(code=1000, reason="done")
        say(event="closed", code=ws.close_code, reason=ws.close_reason)


asyncio.run(main())
