import LonglinkCore
import LonglinkGateway
import LonglinkStores

/// Feature toggles over the real single writer: reads and writes run on the writer thread, in order with the
/// orders; a new value is published to the broker and announced to the Store's observers once stored, so
/// subscribers of its `config://` route get it like any other change.
struct StoreWriterToggles: ToggleAdministration {
    let writer: StoreWriter
    let observers: ObserverRegistry
    /// The broker path (nil when the store publishes by itself).
    let publisher: BrokerPublisher?
    let clock: any WallClock

    func list(app: String?, completion: @escaping @Sendable (Result<[FeatureToggle], StoreError>) -> Void) {
        writer.read({ (store) throws(StoreError) -> [FeatureToggle] in try store.toggles(app: app) }, completion: completion)
    }

    func set(
        app: String,
        name: String,
        value: ToggleValue,
        completion: @escaping @Sendable (Result<FeatureToggle, StoreError>) -> Void
    ) {
        let now = clock.nowMillis()
        let observers = self.observers
        let publisher = self.publisher
        writer.read(
            { (store) throws(StoreError) -> FeatureToggle in
                try store.setToggle(app: app, name: name, value: value, nowMillis: now)
            },
            completion: { result in
                if case .success(let toggle) = result {
                    publisher?.publish([toggle.record])
                    observers.notify([ContentChange(route: toggle.route, record: toggle.record, snapshot: toggle.snapshot)])
                }
                completion(result)
            }
        )
    }
}
