#!/usr/bin/env python3
"""Builds session.bin: the golden frame bodies copied from Tests/LonglinkProtobufTests/Fixtures (encoded by
protoc from their .txtpb files), each behind its varint length prefix, in the order of a plausible session.
Run from this directory: ./make_session.py"""
import os

ORDER = ["client_subscribe", "server_subscribed", "server_push_typical", "client_publish",
         "server_publish_result_refused", "client_ack", "server_push_custom_states", "server_push_first_record",
         "server_disconnect"]

def varint(n):
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)

here = os.path.dirname(os.path.abspath(__file__))
stream = b""
for name in ORDER:
    body = open(os.path.join(here, name + ".bin"), "rb").read()
    stream += varint(len(body)) + body
open(os.path.join(here, "session.bin"), "wb").write(stream)
print(f"session.bin: {len(ORDER)} frames, {len(stream)} bytes")
