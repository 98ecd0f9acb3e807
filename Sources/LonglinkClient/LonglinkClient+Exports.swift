// An app needs nothing but `import LonglinkClient` (and a dependency on the `LonglinkClient` product alone): the
// domain values the client API speaks (Route, OrderID, BusinessLine, ContentChange, ContentObserver,
// ObservationToken, Logger, ...) come with it from LonglinkCore, and the TLS failure causes from LonglinkLoop, whose
// event loop otherwise stays the library's own. The same pattern as NIO's `NIO` module re-exporting `NIOCore`.
@_exported public import LonglinkCore
public import LonglinkLoop

/// Why a TLS handshake failed (`TLSFailure.cause`): expired, unknown CA, name mismatch, pin mismatch, plain peer, ...
public typealias TLSFailureCause = LonglinkLoop.TLSFailureCause
