public import LonglinkCore

/// What every peer of one gateway shares: its settings and the authorizer. One instance per gateway, referenced
/// by each `PeerStateMachine`, so a connection carries eight bytes for it instead of a copy.
public final class PeerContext: Sendable {
    /// Timings and limits.
    public let settings: PeerSettings
    /// Turns connect tokens into principals.
    public let authorizer: any Authorizer

    public init(settings: PeerSettings, authorizer: any Authorizer) {
        self.settings = settings
        self.authorizer = authorizer
    }
}
