import LonglinkCore
import LonglinkGateway
import LonglinkProtobuf

/// Fuzz target: `PeerStateMachine` fed decoded frames and every other input a connection gives it. The input is
/// a program: each byte is an operation (its low 3 bits) with an argument (the high bits); operation 1 decodes
/// the next frame from the following bytes. Whatever the order, the machine must never trap, and its invariants
/// hold: a closed or draining peer emits nothing for frames, subscriptions stay within the limit, and every
/// `close` action leaves it draining.
enum PeerFuzz {
    static let codec = ProtobufFrameCodec()
    static let reader = FrameReader(maxFrameSize: 4_096)
    static let settings = PeerSettings(
        nodeID: "fuzz",
        pingIntervalMillis: 1_000,
        pongTimeoutMillis: 500,
        handshakeTimeoutMillis: 800,
        maxSubscriptions: 4,
        maxFrameSize: 4_096,
        maxRecoveredRecords: 3,
        maxViolations: 3,
        tokenWarningLeadMillis: 500,
        publishesPerSecond: 5,
        publishBurst: 3
    )

    /// Tokens by first letter: `p` publisher, `a` admin, `x` invalid, `e` expired, `n` not yet valid; anything
    /// else a subscriber scoped to taxi orders. Every principal expires 3 s after the fuzz clock's start.
    struct FuzzAuthorizer: Authorizer {
        func authenticate(token: String, nowMillis: UInt64) throws(AuthorizationError) -> Principal {
            switch token.first {
            case "x": throw .invalidToken("fuzz")
            case "e": throw .expired
            case "n": throw .notYetValid
            case "p": return Principal(userID: "p", role: .publisher, routes: [], expiresAtMillis: 1_003_000)
            case "a": return Principal(userID: "a", role: .admin, routes: [.all], expiresAtMillis: 1_003_000)
            default: return Principal(userID: "s", role: .subscriber, routes: [try! RoutePattern(parsing: "order://taxi/*")], expiresAtMillis: 1_003_000)
            }
        }
    }

    static func run(_ input: UnsafeRawBufferPointer) {
        var now: UInt64 = 1_000_000
        var peer = PeerStateMachine(clientID: "fuzz", settings: settings, authorizer: FuzzAuthorizer(), nowMillis: now)
        var subscribes: [Route] = []
        var publishes: [UInt32] = []
        var bytes = ByteBuffer(bytes: input)
        var offset: UInt64 = 0
        while bytes.readableBytes > 0 {
            let op = bytes.withReadableBytes { $0[0] }
            bytes.moveReaderIndex(forwardBy: 1)
            let argument = UInt64(op >> 3)
            var actions: [PeerAction] = []
            switch op & 7 {
            case 0:
                if peer.phase == .accepted { peer.transportReady(nowMillis: now) }
            case 1:
                let frame: ClientFrame?
                do {
                    frame = try codec.decodeNextClientFrame(from: &bytes, reader: reader)
                } catch {
                    actions = peer.decodeFailed(error)
                    frame = nil
                }
                if let frame {
                    let wasClosing = peer.phase == .closed || peer.phase == .draining
                    actions = peer.receive(frame, nowMillis: now)
                    precondition(!wasClosing || actions.isEmpty, "a closing peer answered a frame")
                }
            case 2:
                now += argument * 50
                actions = peer.tick(nowMillis: now)
            case 3:
                if !subscribes.isEmpty {
                    let route = subscribes.removeFirst()
                    offset += 1
                    let history: HistoryRead? = argument % 3 == 0 ? nil : argument % 3 == 1 ? .expired : .records([record(route, offset)])
                    actions = peer.subscribeCompleted(route: route, read: SubscribeRead(epoch: 1, snapshot: nil, history: history))
                }
            case 4:
                if !subscribes.isEmpty {
                    actions = peer.subscribeFailed(route: subscribes.removeFirst(), error: .storage("fuzz", retryable: true))
                }
            case 5:
                if !publishes.isEmpty {
                    let id = publishes.removeFirst()
                    offset += 1
                    let route = Route.order(.taxi, OrderID("f\(argument)")!)
                    let stored = record(route, offset)
                    let result: Result<AppliedChange, StoreError> = argument & 1 == 0
                        ? .success(AppliedChange(record: stored, snapshot: OrderSnapshot(first: stored), deduplicated: argument & 2 != 0))
                        : .failure(.unknownOrder(route.order!.line, route.order!.id))
                    actions = peer.publishCompleted(requestID: id, result: result)
                }
            case 6:
                offset = argument & 1 == 0 ? offset + 1 : max(1, offset) - 1
                for route in peer.subscribedRoutes.prefix(2) { _ = peer.deliver(record(route, offset), on: route) }
            default:
                actions = argument & 1 == 0
                    ? peer.drain(reconnectAfterMillis: UInt32(argument))
                    : peer.disconnect(.slow, reason: "fuzz")
            }
            for action in actions {
                switch action {
                case .subscribe(let route, _, _): subscribes.append(route)
                case .publish(_, let id, _): publishes.append(id)
                case .close: precondition(peer.phase == .draining, "close action while \(peer.phase)")
                default: break
                }
            }
            precondition(peer.subscriptionCount <= settings.maxSubscriptions, "more subscriptions than allowed")
        }
        peer.transportClosed()
        precondition(peer.subscriptionCount == 0 && peer.phase == .closed)
    }

    static func record(_ route: Route, _ offset: UInt64) -> OrderChangeRecord {
        let (line, id) = route.order ?? (.taxi, OrderID("x")!)
        return OrderChangeRecord(
            orderID: id,
            line: line,
            fromState: nil,
            toState: "created",
            fields: .none,
            position: StreamPosition(epoch: 1, offset: offset),
            timestampMillis: 1
        )
    }

    static func seeds() -> [[UInt8]] {
        func frame(_ frame: ClientFrame) -> [UInt8] {
            var out = ByteBuffer()
            try! codec.encode(frame, into: &out)
            return [1] + out.readableArray
        }
        let subscribe = frame(.subscribe(SubscribeRequest(requestID: 1, route: "order://taxi/8812")))
        let outside = frame(.subscribe(SubscribeRequest(requestID: 2, route: "order://food/1")))
        let publish = frame(.publish(PublishRequest(requestID: 3, orderID: "8812", line: "taxi", targetState: "created")))
        return [
            [0] + frame(.connect(ConnectRequest(token: "s"))) + subscribe + [3 | 2 << 3, 6, 6, 2 | 8 << 3] + outside + outside + outside,
            [0] + frame(.connect(ConnectRequest(token: "p"))) + publish + publish + publish + publish + [5, 5 | 1 << 3, 7],
            [0] + frame(.connect(ConnectRequest(token: "a"))) + frame(.ping) + frame(.refresh(RefreshRequest(token: "a"))) + [2 | 31 << 3, 2 | 31 << 3],
            [0, 2 | 31 << 3, 2 | 31 << 3],
            [0] + frame(.ping),
        ]
    }
}
