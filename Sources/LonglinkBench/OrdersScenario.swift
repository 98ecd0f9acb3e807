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
        report.runs.append(runner.run(.orders(context.endpoint), workload: workload, label: label, serverPID: gateway.pid))
    }

    /// The rider or driver (`index` even or odd) of order slot `slot`.
    static func subscriber(
        index: Int,
        slot: Int,
        names: RouteNames,
        endpoint: BenchEndpoint,
        context: LoopContext,
        counters: BenchCounters,
        settled: @escaping () -> Void
    ) -> any BenchSubscriber {
        let subscriber = LonglinkSubscriber(
            index: index,
            route: slot,
            routeText: names.orderRoute(slot: slot, generation: 0),
            endpoint: endpoint,
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

/// The orders scenario's plan: slot `route`'s current order moves one lifecycle step per publish; after `paid`
/// the slot's next order starts at `created`.
final class LifecyclePlan: PublishPlan {
    private let names: RouteNames
    private var steps: [Int]
    private var generations: [Int]

    init(names: RouteNames, slots: Int) {
        self.names = names
        self.steps = Array(repeating: 0, count: slots)
        self.generations = Array(repeating: 0, count: slots)
    }

    func appendPublish(
        route: Int,
        requestID: UInt32,
        stamp: (timestamp: UInt64, sequence: UInt64),
        payloadSize: Int,
        idempotencyKey: String,
        to frames: inout [UInt8]
    ) {
        let payload = BenchPayload.make(size: payloadSize, timestamp: stamp.timestamp, sequence: stamp.sequence)
        appendEncoded(nextChange(route: route, payload: payload), requestID: requestID, idempotencyKey: idempotencyKey, to: &frames)
    }

    private func nextChange(route: Int, payload: [UInt8]) -> OrderChange {
        let step = steps[route]
        let id = OrderID(names.orderID(slot: route, generation: generations[route]))!
        if step == Lifecycles.states.count - 1 {
            steps[route] = 0
            generations[route] += 1
        } else {
            steps[route] = step + 1
        }
        return Lifecycles.change(id, step: step, n: route, payload: payload)
    }
}
