import LonglinkTestSupport

/// The security suites' name for the shared raw frame peer.
typealias HostilePeer = FramePeer
