import LonglinkCore

/// Frames of every kind, with every field set and with the optional ones absent.
enum Samples {
    static let taxi8812 = Route.order(.taxi, OrderID("8812")!)
    static let carpool = Route.order(.carpool, OrderID("cp-77.a_B")!)

    static let fullFields = OrderFields(
        driverID: "driver-4711",
        etaSeconds: 240,
        location: GeoPoint(latitudeE6: -33_868_820, longitudeE6: -151_209_296),
        cancellationReason: "rider changed plans ✈️",
        payload: Array(0...255) + [0, 0, 1]
    )

    static func record(
        on route: Route,
        from: OrderState?,
        to: OrderState,
        fields: OrderFields = .none,
        offset: UInt64,
        epoch: UInt32 = 7
    ) -> OrderChangeRecord {
        let order = route.order!
        return OrderChangeRecord(
            orderID: order.id,
            line: order.line,
            fromState: from,
            toState: to,
            fields: fields,
            position: StreamPosition(epoch: epoch, offset: offset),
            timestampMillis: 1_732_900_000_000 + offset % 1_000
        )
    }

    static let fullPush = Push(
        route: carpool,
        record: record(on: carpool, from: "pool_matched", to: "waiting_for_co_riders", fields: fullFields,
                       offset: .max, epoch: .max),
        skippedBefore: true
    )
    /// What a typical change carries: the driver's id, an ETA and the driver's location in Shanghai.
    static let typicalFields = OrderFields(
        driverID: "driver-4711",
        etaSeconds: 240,
        location: GeoPoint(latitudeE6: 31_230_416, longitudeE6: 121_473_701)
    )

    /// The typical push of the size comparison (`PushSizeComparison.typicalPush()` in LonglinkBench; the golden
    /// fixture `server_push_typical` pins its bytes): taxi order 8812 goes from `driver_assigned` to
    /// `driver_arriving`, with the driver's id, an ETA, the driver's location, the store timestamp and the position.
    static func typicalPush() -> ServerFrame {
        let record = OrderChangeRecord(
            orderID: OrderID("8812")!,
            line: .taxi,
            fromState: "driver_assigned",
            toState: "driver_arriving",
            fields: typicalFields,
            position: StreamPosition(epoch: 1, offset: 3),
            timestampMillis: 1_732_900_000_000
        )
        return .push(Push(route: record.route, record: record))
    }

    static let firstPush = Push(route: taxi8812, record: record(on: taxi8812, from: nil, to: "created", offset: 1))

    static let snapshot = OrderSnapshot(
        orderID: OrderID("8812")!,
        line: .taxi,
        state: "in_trip",
        fields: OrderFields(driverID: "d-1", location: GeoPoint(latitudeE6: 90_000_000, longitudeE6: 180_000_000)),
        position: StreamPosition(epoch: 3, offset: 9),
        createdAtMillis: 1_700_000_000_000,
        updatedAtMillis: 1_700_000_500_000
    )

    static let serverFrames: [(String, ServerFrame)] = [
        ("connected, all fields", .connected(Connected(
            protocolVersion: 1, clientID: "c-42", nodeID: "node-a", pingIntervalMillis: 25_000,
            pongTimeoutMillis: 60_000, maxFrameSize: 65_536, maxSubscriptions: 128,
            tokenExpiresAtMillis: 1_800_000_000_000))),
        ("connected, defaults", .connected(Connected(
            protocolVersion: 0, clientID: "", nodeID: "", pingIntervalMillis: 0, pongTimeoutMillis: 0,
            maxFrameSize: 0, maxSubscriptions: 0))),
        ("subscribed, snapshot and missed records", .subscribed(Subscribed(
            requestID: 9, route: taxi8812, snapshot: snapshot, position: StreamPosition(epoch: 3, offset: 12),
            recovered: true,
            missed: [
                record(on: taxi8812, from: "in_trip", to: "completed", offset: 10, epoch: 3),
                record(on: taxi8812, from: "completed", to: "rated_by_rider", fields: fullFields, offset: 11, epoch: 3),
                record(on: taxi8812, from: "rated_by_rider", to: "paid", offset: 12, epoch: 3),
            ]))),
        ("subscribed, nothing yet", .subscribed(Subscribed(
            requestID: 0, route: Route.order(.express, OrderID("new")!), snapshot: nil, position: .zero,
            recovered: false))),
        ("subscribed, config route", .subscribed(Subscribed(
            requestID: 1, route: try! Route(parsing: "config://rider-app/dark-mode"), snapshot: nil,
            position: StreamPosition(epoch: 1, offset: 0), recovered: true))),
        ("unsubscribed", .unsubscribed(Unsubscribed(requestID: 4, route: taxi8812))),
        ("publish result, accepted", .publishResult(PublishResult(
            requestID: 77, outcome: .accepted(position: StreamPosition(epoch: 2, offset: 5),
                                              timestampMillis: 1_732_900_000_123, deduplicated: true)))),
        ("publish result, accepted, zero values", .publishResult(PublishResult(
            requestID: 0, outcome: .accepted(position: .zero, timestampMillis: 0, deduplicated: false)))),
        ("publish result, refused", .publishResult(PublishResult(
            requestID: 78, outcome: .refused(ErrorFrame(requestID: 78, code: .illegalTransition,
                                                        message: "created → paid is not allowed"))))),
        ("push, every field", .push(fullPush)),
        ("push, first record without fields", .push(firstPush)),
        ("ping", .ping),
        ("pong", .pong),
        ("error", .error(ErrorFrame(requestID: 3, code: .rateLimited, message: "slow down", retryable: true))),
        ("error, unknown code, connection level", .error(ErrorFrame(
            code: ErrorCode(rawValue: 1_999), message: "", retryable: false))),
        ("disconnect", .disconnect(Disconnect(code: .slow, reason: "outbound queue full", reconnectAfterMillis: 1_500))),
        ("disconnect, unknown code", .disconnect(Disconnect(code: DisconnectCode(rawValue: 3_999), reason: ""))),
        ("delivery receipt", .deliveryReceipt(DeliveryReceipt(
            route: taxi8812, position: StreamPosition(epoch: 1, offset: 3), subscriberID: "c-9", ackedCount: 2))),
        ("token expiring", .tokenExpiring(TokenExpiring(expiresAtMillis: 1_800_000_000_000))),
        ("token expiring, zero", .tokenExpiring(TokenExpiring(expiresAtMillis: 0))),
    ]

    static let clientFrames: [(String, ClientFrame)] = [
        ("connect, all fields", .connect(ConnectRequest(
            protocolVersion: 1, token: "eyJhbGciOiJIUzI1NiJ9.e30.sig", clientName: "longlink-swift",
            clientVersion: "1.0.0"))),
        ("connect, defaults", .connect(ConnectRequest(protocolVersion: 0))),
        ("subscribe with a position", .subscribe(SubscribeRequest(
            requestID: 1, route: "order://taxi/8812", since: StreamPosition(epoch: 7, offset: 41)))),
        ("subscribe from position zero", .subscribe(SubscribeRequest(requestID: 2, route: "order://taxi/1", since: .zero))),
        ("subscribe, fresh", .subscribe(SubscribeRequest(requestID: 3, route: "not even a route"))),
        ("unsubscribe", .unsubscribe(UnsubscribeRequest(requestID: 4, route: "order://taxi/8812"))),
        ("publish, every field", .publish(PublishRequest(
            requestID: 5, orderID: "8812", line: "taxi", targetState: "driver_arriving", fields: fullFields,
            idempotencyKey: "pub-1:8812:3", wantsReceipts: true))),
        ("publish, custom state, no fields", .publish(PublishRequest(
            requestID: 6, orderID: "x", line: "carpool", targetState: "waiting_for_co_riders"))),
        ("ack", .ack(Ack(route: "order://taxi/8812", offset: 3))),
        ("ack, zero", .ack(Ack(route: "", offset: 0))),
        ("ping", .ping),
        ("pong", .pong),
        ("refresh", .refresh(RefreshRequest(token: "new-token"))),
    ]
}
