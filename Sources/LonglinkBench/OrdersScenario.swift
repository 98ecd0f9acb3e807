import LonglinkCore
import LonglinkLoop

/// `longlink bench orders`: ride-hailing traffic. `--routes` T order slots, each watched by a rider and a driver
/// (S = 2T); the publisher walks every slot's order through the taxi lifecycle (created … paid: ids, ETAs,
/// locations and the stamped payload) round-robin at `--rate`, and starts the slot's next order after `paid`.
/// Rider and driver follow: on the `paid` push they unsubscribe and subscribe to the slot's next order (a record
/// published before their subscribe lands is covered by the subscribe snapshot and counted as such, not lost).
enum OrdersScenario {
    static func run(_ context: ScenarioContext, into report: inout BenchReport) throws {
        let parameters = context.parameters
        var workload = parameters.workload
        workload.subscribers = 2 * workload.routes
        let runner = FanoutRunner(
            loops: context.loops,
            control: context.control,
            duration: parameters.durationLimit,
            timeout: parameters.timeoutLimit
        )
        let label = "orders T=\(workload.routes) orders × (rider + driver), M=\(workload.messages) changes, R=\(format(workload.rate)) P=\(workload.payload)"
        let gateway = context.servers.gateway
        report.runs.append(runner.run(.orders(gateway.address), workload: workload, label: label, serverPID: gateway.pid))
    }

    /// The rider or driver (`index` even or odd) of order slot `slot`.
    static func subscriber(
        index: Int,
        slot: Int,
        names: RouteNames,
        address: SocketAddress,
        context: LoopContext,
        counters: BenchCounters,
        settled: @escaping () -> Void
    ) -> any BenchSubscriber {
        let subscriber = LonglinkSubscriber(
            index: index,
            route: slot,
            routeText: names.orderRoute(slot: slot, generation: 0),
            address: address,
            context: context,
            counters: counters
        )
        var generation = 0
        var counted = false
        subscriber.onSubscribed = { _ in
            guard !counted else { return }
            counted = true
            counters.subscribed.add(1)
            settled()
        }
        subscriber.onLost = { _ in settled() }
        subscriber.onPush = { subscriber, sequence in
            // Publish k on a slot is lifecycle step (k − 1) mod 8, so every 8th is `paid`.
            guard sequence % UInt64(Lifecycles.states.count) == 0 else { return }
            generation += 1
            subscriber.move(to: slot, routeText: names.orderRoute(slot: slot, generation: generation))
        }
        subscriber.start()
        return subscriber
    }
}

extension RouteNames {
    /// The order id of slot `slot`'s `generation`-th order.
    func orderID(slot: Int, generation: Int) -> String { "o\(tag)-\(slot)-\(generation)" }
    /// Its route URL.
    func orderRoute(slot: Int, generation: Int) -> String { "order://taxi/\(orderID(slot: slot, generation: generation))" }
}

/// Publishes lifecycle steps for the orders scenario: slot `route`'s current order moves one step per publish;
/// after `paid` the slot's next order starts at `created`. Loop-confined.
final class OrdersPublishSink: PublishSink, BenchConnectionDelegate {
    private let names: RouteNames
    private var connection: BenchConnection?
    private var steps: [Int]
    private var generations: [Int]
    private var routesByRequest: [UInt32: Int] = [:]
    private var nextRequest: UInt32 = 1
    weak var publisher: PacedPublisher?
    private let counters: BenchCounters
    var onReady: (() -> Void)?

    init(names: RouteNames, slots: Int, address: SocketAddress, context: LoopContext, counters: BenchCounters) {
        self.names = names
        self.steps = Array(repeating: 0, count: slots)
        self.generations = Array(repeating: 0, count: slots)
        self.counters = counters
        do {
            connection = try BenchConnection(
                index: -1,
                address: address,
                connectFrame: LonglinkFrames.connect,
                context: context,
                delegate: self
            )
        } catch {
            counters.fail("publisher connect: \(BenchConnection.reason(error))")
        }
    }

    var isReady: Bool { connection?.isOpen ?? false }

    func close() {
        connection?.close()
        connection = nil
    }

    func publish(route: Int, sequence: UInt64, payload: [UInt8]) {
        let step = steps[route]
        let id = OrderID(names.orderID(slot: route, generation: generations[route]))!
        let change = Lifecycles.change(id, step: step, n: route, payload: payload)
        if step == Lifecycles.states.count - 1 {
            steps[route] = 0
            generations[route] += 1
        } else {
            steps[route] = step + 1
        }
        let request = nextRequest
        nextRequest = nextRequest == UInt32.max ? 1 : nextRequest + 1
        routesByRequest[request] = route
        connection?.send(
            .publish(
                PublishRequest(
                    requestID: request,
                    orderID: change.orderID.rawValue,
                    line: change.line.name,
                    targetState: change.targetState.name,
                    fields: change.fields
                )
            )
        )
    }

    func connectionDidConnect(_ connection: BenchConnection) { onReady?() }

    func connection(_ connection: BenchConnection, didReceive frame: ServerFrame) {
        guard case .publishResult(let result) = frame, let route = routesByRequest.removeValue(forKey: result.requestID)
        else { return }
        if case .refused(let error) = result.outcome {
            counters.fail("publish refused: \(error.code)")
            publisher?.acknowledged(route: route, accepted: false)
        } else {
            publisher?.acknowledged(route: route, accepted: true)
        }
    }

    func connectionDidClose(_ connection: BenchConnection, error: String?) {
        guard let error else { return }
        counters.fail("publisher: \(error)")
        let lost = routesByRequest
        routesByRequest = [:]
        for route in lost.values { publisher?.acknowledged(route: route, accepted: false) }
    }
}

@available(*, unavailable)
extension OrdersPublishSink: Sendable {}
