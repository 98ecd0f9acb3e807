import LonglinkCore
import Synchronization

/// A deliberately broken broker, to show that each `BrokerContract` check fails on the fault it is there to catch
/// (the contract's own test: `BrokerContract.faultCases`).
public enum BrokerFault: Hashable, Sendable, CustomStringConvertible {
    /// Every 10th record handed to the delivery is lost.
    case dropsEveryTenth
    /// `unsubscribe` does nothing.
    case ignoresUnsubscribe
    /// `whenSubscribed` never runs its callback for routes it already confirmed once.
    case confirmsOnlyNew
    /// A record of a route held together with its line-wide route is delivered twice.
    case duplicatesRouteAndLine
    /// `brokerMayHaveMissed` never reaches the delivery.
    case swallowsMissed

    public var description: String {
        switch self {
        case .dropsEveryTenth: "drops every 10th record"
        case .ignoresUnsubscribe: "ignores unsubscribe"
        case .confirmsOnlyNew: "confirms only new routes"
        case .duplicatesRouteAndLine: "duplicates records of a route held with its line"
        case .swallowsMissed: "swallows brokerMayHaveMissed"
        }
    }
}

/// `inner` with one fault.
final class FaultyBroker: Broker {
    private let inner: any Broker
    private let fault: BrokerFault
    private let held = HeldRoutes()
    private let confirmed = Mutex<Set<Route>>([])

    init(_ inner: any Broker, fault: BrokerFault) {
        self.inner = inner
        self.fault = fault
    }

    func start(delivering handler: any BrokerDelivery) throws(BrokerError) {
        try inner.start(delivering: FaultyDelivery(handler, fault: fault, held: held))
    }

    func subscribe(_ routes: [Route]) throws(BrokerError) {
        try inner.subscribe(routes)
        held.routes.withLock { $0.formUnion(routes) }
    }

    func unsubscribe(_ routes: [Route]) throws(BrokerError) {
        guard fault != .ignoresUnsubscribe else { return }
        try inner.unsubscribe(routes)
        held.routes.withLock { $0.subtract(routes) }
    }

    func publish(_ record: OrderChangeRecord) throws(BrokerError) { try inner.publish(record) }

    func publish(contentsOf records: [OrderChangeRecord]) throws(BrokerError) { try inner.publish(contentsOf: records) }

    func shutdown() { inner.shutdown() }

    func whenSubscribed(_ routes: [Route], _ body: @escaping @Sendable () -> Void) {
        if fault == .confirmsOnlyNew {
            let known = confirmed.withLock { confirmed in
                defer { confirmed.formUnion(routes) }
                return !routes.isEmpty && confirmed.isSuperset(of: routes)
            }
            if known { return }
        }
        inner.whenSubscribed(routes, body)
    }
}

/// The routes a `FaultyBroker` holds, shared with its delivery.
final class HeldRoutes: Sendable {
    let routes = Mutex<Set<Route>>([])
}

/// The delivery side of `FaultyBroker`.
final class FaultyDelivery: BrokerDelivery {
    private let handler: any BrokerDelivery
    private let fault: BrokerFault
    private let held: HeldRoutes
    private let count = Mutex(0)

    init(_ handler: any BrokerDelivery, fault: BrokerFault, held: HeldRoutes) {
        self.handler = handler
        self.fault = fault
        self.held = held
    }

    /// What reaches the handler of `records`.
    private func passed(_ records: [OrderChangeRecord]) -> [OrderChangeRecord] {
        switch fault {
        case .dropsEveryTenth:
            return records.filter { _ in
                count.withLock { count in
                    count += 1
                    return count % 10 != 0
                }
            }
        case .duplicatesRouteAndLine:
            let routes = held.routes.withLock { $0 }
            return records.flatMap { record in
                let route = record.route
                let both = routes.contains(route) && routes.contains { $0.lineCovers(route) }
                return both ? [record, record] : [record]
            }
        default:
            return records
        }
    }

    func brokerDidDeliver(_ record: OrderChangeRecord) {
        let records = passed([record])
        if !records.isEmpty { handler.brokerDidDeliver(contentsOf: records) }
    }

    func brokerDidDeliver(contentsOf records: [OrderChangeRecord]) {
        let records = passed(records)
        if !records.isEmpty { handler.brokerDidDeliver(contentsOf: records) }
    }

    func brokerDidDeliver(contentsOf records: [OrderChangeRecord], routes: [Route]) {
        brokerDidDeliver(contentsOf: records)
    }

    func brokerMayHaveMissed(_ routes: [Route]) {
        guard fault != .swallowsMissed else { return }
        handler.brokerMayHaveMissed(routes)
    }
}

extension BrokerContractFactory {
    /// This backend's brokers, every node broken by `fault`.
    public func broken(by fault: BrokerFault) -> BrokerContractFactory {
        let make = self.make
        let networked = self.networked
        var brokenNode: (@Sendable () throws -> any Broker)?
        if let node = self.node {
            brokenNode = { @Sendable () throws -> any Broker in FaultyBroker(try node(), fault: fault) }
        }
        let brokenMake = { @Sendable () throws -> (publisher: any Broker, subscriber: any Broker) in
            let (publisher, subscriber) = try make()
            let faultySubscriber = FaultyBroker(subscriber, fault: fault)
            // An in-process broker is one node: the same (broken) instance on both sides.
            let faultyPublisher: any Broker = networked ? FaultyBroker(publisher, fault: fault) : faultySubscriber
            return (faultyPublisher, faultySubscriber)
        }
        return BrokerContractFactory(
            name: "\(name) that \(fault)",
            networked: networked,
            node: brokenNode,
            dropConnections: dropConnections,
            make: brokenMake
        )
    }
}

extension BrokerContract {
    /// A fault for each of `checks` that it must catch: run each check against brokers broken so and expect it to
    /// fail (`withKnownIssue`).
    public static let faultCases: [(BrokerContractCheck, BrokerFault)] = Array(
        zip(
            checks,
            [
                .dropsEveryTenth, .ignoresUnsubscribe, .ignoresUnsubscribe, .confirmsOnlyNew, .dropsEveryTenth,
                .ignoresUnsubscribe, .dropsEveryTenth, .duplicatesRouteAndLine,
            ] as [BrokerFault]
        ))

    /// A fault for each of `networkedChecks` that it must catch.
    public static let networkedFaultCases: [(BrokerContractCheck, BrokerFault)] = Array(
        zip(networkedChecks, [.dropsEveryTenth, .swallowsMissed] as [BrokerFault])
    )
}
