// An app needs nothing but `import LonglinkClient` (and a dependency on the `LonglinkClient` product alone): the
// domain values the client API speaks (Route, OrderID, BusinessLine, ContentChange, ContentObserver,
// ObservationToken, Logger, ...) come with it from LonglinkCore, and from LonglinkLoop, whose event loop otherwise
// stays the library's own, the two types the client's settings and errors name: TLSFailureCause (`TLSFailure.cause`:
// expired, unknown CA, name mismatch, pin mismatch, ...) and SelectorBackend (`ClientConfiguration.selectorBackend`).
// Re-exported declarations, not typealiases (an alias beside the original is ambiguous where both modules are
// imported). The same pattern as NIO's `NIO` module re-exporting `NIOCore`.
@_exported public import LonglinkCore
@_exported public import enum LonglinkLoop.TLSFailureCause
@_exported public import enum LonglinkLoop.SelectorBackend
