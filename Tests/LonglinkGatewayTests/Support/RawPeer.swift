import LonglinkCore
import LonglinkTestSupport

/// The gateway suites' name for the shared raw frame peer (`LonglinkTestSupport.FramePeer`).
typealias RawPeer = FramePeer

/// Reads a `disconnect` frame (skipping others).
func disconnectFrame(_ frame: ServerFrame) -> Disconnect? {
    if case .disconnect(let d) = frame { d } else { nil }
}

/// Reads a `push` frame (skipping others).
func pushFrame(_ frame: ServerFrame) -> Push? {
    if case .push(let p) = frame { p } else { nil }
}
