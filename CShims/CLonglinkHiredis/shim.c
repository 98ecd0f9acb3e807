#include "CLonglinkHiredis.h"
#include <string.h>
#include <sys/time.h>

const char *CLonglinkHiredis_readerError(const redisReader *reader) {
    return reader->err ? reader->errstr : "";
}

const char *CLonglinkHiredis_contextError(const redisContext *context) {
    return context->err ? context->errstr : "";
}

redisContext *CLonglinkHiredis_connect(const char *host, int port, long timeoutMillis) {
    struct timeval timeout = { timeoutMillis / 1000, (timeoutMillis % 1000) * 1000 };
    return redisConnectWithTimeout(host, port, timeout);
}

int CLonglinkHiredis_setTimeout(redisContext *context, long timeoutMillis) {
    struct timeval timeout = { timeoutMillis / 1000, (timeoutMillis % 1000) * 1000 };
    return redisSetTimeout(context, timeout);
}

static int isKind(const redisReply *reply, const char *kind, size_t length) {
    return reply->type == REDIS_REPLY_STRING && reply->len == length && memcmp(reply->str, kind, length) == 0;
}

int CLonglinkHiredis_pubSubMessage(
    const redisReply *reply,
    const char **channel, size_t *channelLength,
    const char **payload, size_t *payloadLength) {
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements < 3) return 0;
    size_t first;
    if (reply->elements == 3 && (isKind(reply->element[0], "message", 7) || isKind(reply->element[0], "smessage", 8))) {
        first = 1;
    } else if (reply->elements == 4 && isKind(reply->element[0], "pmessage", 8)) {
        first = 2;
    } else {
        return 0;
    }
    const redisReply *name = reply->element[first];
    const redisReply *body = reply->element[first + 1];
    if (name->type != REDIS_REPLY_STRING || body->type != REDIS_REPLY_STRING) return 0;
    *channel = name->str;
    *channelLength = name->len;
    *payload = body->str;
    *payloadLength = body->len;
    return 1;
}

int CLonglinkHiredis_shardUnsubscribe(const redisReply *reply, const char **channel, size_t *channelLength) {
    if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3) return 0;
    if (!isKind(reply->element[0], "sunsubscribe", 12)) return 0;
    const redisReply *name = reply->element[1];
    if (name->type != REDIS_REPLY_STRING) return 0;
    *channel = name->str;
    *channelLength = name->len;
    return 1;
}
