/// One WebSocket listener's settings, shared (by reference) by all its connections: the upgrade policy and the
/// limits on the request head and on messages.
public final class WebSocketEndpoint: Sendable {
    /// Path, origins, sub-protocol.
    public let policy: WebSocketUpgradePolicy
    /// The largest request head accepted (431 above it).
    public let maxHeadSize: Int
    /// The largest message accepted, all fragments together (close 1009 above it).
    public let maxMessageSize: Int

    /// Settings for one listener. `maxMessageSize` is typically the gateway's maximum frame size plus its
    /// length prefix, so one maximal frame fits in one message.
    public init(policy: WebSocketUpgradePolicy, maxHeadSize: Int = 8 * 1024, maxMessageSize: Int) {
        self.policy = policy
        self.maxHeadSize = maxHeadSize
        self.maxMessageSize = maxMessageSize
    }

    /// The message limit for a maximum frame size: the frame and its varint length prefix.
    public static func messageLimit(forMaxFrameSize size: Int) -> Int {
        var prefix = 1
        var value = size >> 7
        while value > 0 {
            prefix += 1
            value >>= 7
        }
        return size + prefix
    }
}
