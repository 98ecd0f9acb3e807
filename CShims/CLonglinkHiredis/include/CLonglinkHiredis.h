// CLonglinkHiredis: Debian's hiredis 0.14 (libhiredis-dev; RESP2 only, the old `redisReply` layout) plus the few
// wrappers Swift needs. Only LonglinkRedis imports this module (`internal import`), so no hiredis type or pointer
// leaves that adapter.
//
// LonglinkRedis uses two parts of hiredis: the blocking `redisContext` with `redisCommandArgv` for one-off
// commands, and the protocol half (`redisFormatCommandArgv` to encode, `redisReader` to parse) for connections
// driven by Longlink's own event loop, which does the socket I/O itself.
#pragma once
#include <stddef.h>
#include <hiredis/hiredis.h>

// `redisReader.errstr` is a `char[128]`, which Swift imports as a 128-element tuple. This returns it as a C
// string (empty when the reader has no error).
const char *CLonglinkHiredis_readerError(const redisReader *reader);

// `redisContext.errstr` is a `char[128]` too (see above).
const char *CLonglinkHiredis_contextError(const redisContext *context);

// `redisConnectWithTimeout` takes a `struct timeval` by value; building it here keeps `timeval` out of Swift.
redisContext *CLonglinkHiredis_connect(const char *host, int port, long timeoutMillis);

// Applies `timeoutMillis` to every later blocking read and write of `context` (0 = no timeout).
int CLonglinkHiredis_setTimeout(redisContext *context, long timeoutMillis);

// Pub/sub messages are the hot path of a subscriber: `["message", channel, payload]`. Walking
// `reply->element[i]->str` from Swift costs several optional pointer hops per message; this one call recognises
// the shape and hands back the two byte ranges. Returns 1 for a message (pattern messages,
// `["pmessage", pattern, channel, payload]`, report the channel; shard messages of a Redis Cluster,
// `["smessage", channel, payload]`, are messages too), 0 for any other reply.
int CLonglinkHiredis_pubSubMessage(
    const redisReply *reply,
    const char **channel, size_t *channelLength,
    const char **payload, size_t *payloadLength);

// A Redis Cluster node pushes `["sunsubscribe", channel, count]` when a slot it served moves away (and answers an
// SUNSUBSCRIBE the same way). Returns 1 and the channel for that shape, 0 for any other reply.
int CLonglinkHiredis_shardUnsubscribe(const redisReply *reply, const char **channel, size_t *channelLength);
