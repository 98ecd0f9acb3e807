internal import CLonglinkHiredis

/// hiredis's RESP parser (`redisReader`), fed with bytes Longlink's loop read. Not thread-safe; owned by one
/// connection.
final class RedisReplyReader {
    private let reader: UnsafeMutablePointer<redisReader>

    init() {
        guard let reader = redisReaderCreate() else { preconditionFailure("redisReaderCreate: out of memory") }
        self.reader = reader
    }

    deinit { redisReaderFree(reader) }

    /// Appends received bytes (the reader copies them).
    func feed(_ bytes: UnsafeRawBufferPointer) throws(RedisError) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard redisReaderFeed(reader, base.assumingMemoryBound(to: CChar.self), bytes.count) == REDIS_OK else {
            throw .protocolViolation(String(cString: CLonglinkHiredis_readerError(reader)))
        }
    }

    /// Calls `body` with each complete reply, in order, until the buffered bytes hold no whole reply. The pointer is
    /// only valid during the call. Throws on malformed input (the connection must then close).
    func drain(_ body: (UnsafePointer<redisReply>) -> Void) throws(RedisError) {
        while true {
            var object: UnsafeMutableRawPointer?
            guard redisReaderGetReply(reader, &object) == REDIS_OK else {
                throw .protocolViolation(String(cString: CLonglinkHiredis_readerError(reader)))
            }
            guard let object else { return }
            let reply = object.assumingMemoryBound(to: redisReply.self)
            body(reply)
            freeReplyObject(object)
        }
    }
}

/// Recognises a pub/sub message (`message`, `pmessage` or `smessage`) and hands its channel and payload to `body`.
/// Returns false for any other reply.
func withPubSubMessage(
    _ reply: UnsafePointer<redisReply>,
    _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) -> Void
) -> Bool {
    var channel: UnsafePointer<CChar>?
    var channelLength = 0
    var payload: UnsafePointer<CChar>?
    var payloadLength = 0
    guard CLonglinkHiredis_pubSubMessage(reply, &channel, &channelLength, &payload, &payloadLength) == 1 else {
        return false
    }
    body(
        UnsafeRawBufferPointer(start: channel, count: channelLength),
        UnsafeRawBufferPointer(start: payload, count: payloadLength)
    )
    return true
}

/// The channel of a `["sunsubscribe", channel, count]` reply, borrowed from it; nil for any other reply.
func shardUnsubscribeChannel(_ reply: UnsafePointer<redisReply>) -> UnsafeRawBufferPointer? {
    var channel: UnsafePointer<CChar>?
    var length = 0
    guard CLonglinkHiredis_shardUnsubscribe(reply, &channel, &length) == 1 else { return nil }
    return UnsafeRawBufferPointer(start: channel, count: length)
}
