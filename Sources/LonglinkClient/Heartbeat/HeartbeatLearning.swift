/// Smart heartbeat settings (what WeChat Mars does for battery): the client learns the longest ping interval the
/// network path keeps alive, within the bounds the server announces in `connected`. It starts at the shortest,
/// asks for `step` more after `pingsPerStep` pings arrived across an idle gap of the current interval, steps back
/// to the last good interval after a silent drop (no FIN, no RST: the server just goes quiet, as when a NAT forgets
/// the mapping) and stops probing there; the value is remembered per `networkName` in `store`.
public struct HeartbeatLearning: Sendable {
    /// The network the device is on, as the app names it (e.g. `wifi:HomeNet`, `cellular:46001`); learned values
    /// are kept per name. Change it with `LonglinkClient.setNetwork(_:)`.
    public var networkName: String
    /// How much longer each probe asks for.
    public var step: Duration
    /// Pings that must arrive at an interval before the next step up.
    public var pingsPerStep: Int
    /// Where learned intervals are kept; implement `HeartbeatStore` to keep them across launches.
    public var store: any HeartbeatStore

    public init(
        networkName: String,
        step: Duration = .seconds(30),
        pingsPerStep: Int = 2,
        store: any HeartbeatStore = MemoryHeartbeatStore()
    ) {
        self.networkName = networkName
        self.step = step
        self.pingsPerStep = pingsPerStep
        self.store = store
    }
}
