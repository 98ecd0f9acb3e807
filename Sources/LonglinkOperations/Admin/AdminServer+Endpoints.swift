import LonglinkCore
import LonglinkGateway
import LonglinkHTTP
import LonglinkJSON
import LonglinkLoop
import LonglinkStores
import Synchronization

extension AdminServer {
    /// The `/admin/...` endpoints, after authentication. `path` is without the leading `admin`.
    func admin(
        _ path: [String],
        method: String,
        _ request: HTTPRequest,
        _ exchange: HTTPExchange,
        principal: Principal,
        context: LoopContext
    ) -> HTTPResponse? {
        switch (method, path.first) {
        case ("GET", "connections"): return connections(request, exchange)
        case ("POST", "connections"): return disconnect(clientID: path[1], request, exchange)
        case ("GET", "tap"): return tap(request, exchange)
        case ("POST", "publish"): return publish(request, exchange, principal: principal)
        case ("GET", "orders"): return order(line: path[1], id: path[2], exchange)
        case ("GET", "presence"): return presence(request, exchange)
        case ("POST", "drain"): return drain()
        case ("GET", "stats"): return .json(stats())
        case ("GET", "routes"): return routes(request, exchange)
        case ("GET", "log-level"), ("PUT", "log-level"): return logLevel(request)
        case (_, "toggles"): return toggleEndpoint(path, method: method, request, exchange)
        default: return .error(.notFound, "no such endpoint")
        }
    }

    // MARK: Connections

    private func connections(_ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse? {
        let sort = request.queryValue("sort") ?? "id"
        let filter = request.queryValue("filter") ?? ""
        let limit = request.queryValue("limit").flatMap { Int($0) } ?? 1_000
        let keys = ["id", "outbound_bytes", "last_activity", "user", "address", "subscriptions", "loop"]
        guard keys.contains(sort) else {
            return .error(.badRequest, "sort must be one of \(keys.joined(separator: ", "))")
        }
        gateway.inspect { inspection in
            var list = inspection.connections
            if !filter.isEmpty {
                list = list.filter { info in
                    info.id.contains(filter) || info.address.contains(filter) || (info.user ?? "").contains(filter)
                        || info.client.contains(filter) || info.subscriptions.contains { $0.contains(filter) }
                }
            }
            list.sort(by: Self.ordering(sort))
            let shown = list.prefix(max(0, limit)).map(Self.json)
            exchange.respond(.json(.object([("connections", .array(Array(shown))), ("total", .int(Int64(list.count)))])))
        }
        return nil
    }

    private static func ordering(_ key: String) -> (ConnectionInfo, ConnectionInfo) -> Bool {
        switch key {
        case "outbound_bytes": { ($0.outboundBytes, $1.id) > ($1.outboundBytes, $0.id) }
        case "last_activity": { ($0.lastActivityMillisAgo, $0.id) < ($1.lastActivityMillisAgo, $1.id) }
        case "user": { ($0.user ?? "", $0.id) < ($1.user ?? "", $1.id) }
        case "address": { ($0.address, $0.id) < ($1.address, $1.id) }
        case "subscriptions": { ($0.subscriptions.count, $1.id) > ($1.subscriptions.count, $0.id) }
        case "loop": { ($0.loop, $0.id) < ($1.loop, $1.id) }
        default: { ($0.id.count, $0.id) < ($1.id.count, $1.id) }
        }
    }

    private static func json(_ info: ConnectionInfo) -> JSONValue {
        .object([
            ("id", .string(info.id)),
            ("address", .string(info.address)),
            ("user", info.user.map(JSONValue.string) ?? .null),
            ("subscriptions", .array(info.subscriptions.map(JSONValue.string))),
            ("outbound_bytes", .int(Int64(info.outboundBytes))),
            ("last_activity_ms_ago", .int(Int64(clamping: info.lastActivityMillisAgo))),
            ("tls", .bool(info.tls)),
            ("transport", .string(info.transport)),
            ("client", .string(info.client)),
            ("loop", .int(Int64(info.loop))),
        ])
    }

    private func disconnect(clientID: String, _ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse? {
        var code = DisconnectCode.adminReconnect
        var reason = "disconnected by an operator"
        if !request.body.isEmpty {
            let body: JSONValue
            do { body = try JSONValue.parse(request.body) } catch { return .error(.badRequest, "\(error)") }
            if let number = body["code"] {
                guard let value = number.intValue, (3000..<4000).contains(value) else {
                    return .error(.unprocessableContent, "code must be a disconnect code from 3000 to 3999")
                }
                code = DisconnectCode(rawValue: UInt32(value))
            }
            if let text = body["reason"]?.stringValue { reason = String(text.prefix(200)) }
        }
        let chosen = code
        gateway.disconnect(clientID: clientID, code: chosen, reason: reason) { found in
            exchange.respond(
                found
                    ? .json(.object([("disconnected", .string(clientID)), ("code", .int(Int64(chosen.rawValue)))]))
                    : .error(.notFound, "no open connection \(clientID)")
            )
        }
        return nil
    }

    private func routes(_ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse? {
        let limit = request.queryValue("limit").flatMap { Int($0) } ?? 10
        gateway.inspect { inspection in
            let top = inspection.routeSubscribers.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(max(0, limit))
            exchange.respond(
                .json(
                    .object([
                        ("routes", .array(top.map { .object([("route", .string($0.key)), ("subscribers", .int(Int64($0.value)))]) })),
                        ("total_routes", .int(Int64(inspection.routeSubscribers.count))),
                    ])
                )
            )
        }
        return nil
    }

    // MARK: Orders

    private func publish(_ request: HTTPRequest, _ exchange: HTTPExchange, principal: Principal) -> HTTPResponse? {
        let change: OrderChange
        do {
            change = try Self.change(from: JSONValue.parse(request.body))
        } catch let error as JSONError {
            return .error(.badRequest, "\(error)")
        } catch {
            return .error(.unprocessableContent, "\(error)")
        }
        // The same check as publish frames (admins pass it today; a publisher-facing HTTP API reuses it).
        if let denial = principal.publishDenial(for: change.route) { return AdminJSON.refusal(denial) }
        let counters = gateway.counters
        writer.apply(change) { result in
            counters.recordPublish(result)
            switch result {
            case .success(let applied):
                exchange.respond(
                    .json(
                        .object([
                            ("route", .string(applied.record.route.text)),
                            ("epoch", .int(Int64(applied.record.position.epoch))),
                            ("offset", .int(Int64(clamping: applied.record.position.offset))),
                            ("time_ms", .int(Int64(clamping: applied.record.timestampMillis))),
                            ("state", .string(applied.snapshot.state.name)),
                            ("deduplicated", .bool(applied.deduplicated)),
                        ])
                    )
                )
            case .failure(let error):
                exchange.respond(AdminJSON.refusal(error))
            }
        }
        return nil
    }

    /// Reads a publish body: `{"order","line","state"}` plus optional `driver_id`, `eta_seconds`, `lat_e6`+`lon_e6`,
    /// `cancellation_reason`, `idempotency_key`.
    static func change(from body: JSONValue) throws -> OrderChange {
        guard let order = body["order"]?.stringValue ?? body["order"]?.intValue.map(String.init), let id = OrderID(order) else {
            throw AdminRequestError("'order' must be an order id ([A-Za-z0-9_.-], at most 64)")
        }
        guard let lineName = body["line"]?.stringValue, let line = BusinessLine(lineName) else {
            throw AdminRequestError("'line' must be a business line name")
        }
        guard let state = body["state"]?.stringValue, !state.isEmpty else { throw AdminRequestError("'state' is required") }
        var fields = OrderFields()
        fields.driverID = body["driver_id"]?.stringValue
        if let eta = body["eta_seconds"] {
            guard let value = eta.intValue, let seconds = UInt32(exactly: value) else {
                throw AdminRequestError("'eta_seconds' must be a non-negative integer")
            }
            fields.etaSeconds = seconds
        }
        if body["lat_e6"] != nil || body["lon_e6"] != nil {
            guard let lat = body["lat_e6"]?.intValue.flatMap(Int32.init(exactly:)),
                let lon = body["lon_e6"]?.intValue.flatMap(Int32.init(exactly:))
            else { throw AdminRequestError("'lat_e6' and 'lon_e6' must be given together as integers") }
            fields.location = GeoPoint(latitudeE6: lat, longitudeE6: lon)
        }
        fields.cancellationReason = body["cancellation_reason"]?.stringValue
        return OrderChange(
            orderID: id,
            line: line,
            targetState: OrderState(state),
            fields: fields,
            idempotencyKey: body["idempotency_key"]?.stringValue ?? ""
        )
    }

    private func order(line: String, id: String, _ exchange: HTTPExchange) -> HTTPResponse? {
        guard let line = BusinessLine(line), let order = OrderID(id) else {
            return .error(.badRequest, "expected /admin/orders/{line}/{order-id}")
        }
        let counters = gateway.counters
        writer.orderHistory(line, order) { result in
            switch result {
            case .success(nil):
                exchange.respond(.error(.notFound, "no \(line) order \(order)"))
            case .success(let history?):
                exchange.respond(
                    .json(
                        .object([
                            ("snapshot", AdminJSON.snapshot(history.snapshot)),
                            ("history", .array(history.records.map { AdminJSON.record($0, route: $0.route) })),
                        ])
                    )
                )
            case .failure(let error):
                counters.recordStoreError()
                exchange.respond(AdminJSON.refusal(error))
            }
        }
        return nil
    }

    // MARK: Node

    private func drain() -> HTTPResponse {
        let already = state == .draining
        markDraining()
        if !already {
            logger.notice("drain requested through the admin API")
            drainAction()
        }
        return .json(.object([("state", .string("draining"))]), status: .accepted)
    }

    /// The counters the admin page polls (rates are computed by the page from two polls).
    func stats() -> JSONValue {
        let stats = gateway.counters.snapshot
        let readiness: String =
            switch state {
            case .starting: "starting"
            case .ready: "ready"
            case .draining: "draining"
            }
        return .object([
            ("time_ms", .int(Int64(clamping: clock.nowMillis()))),
            ("state", .string(readiness)),
            ("version", .string(version)),
            ("connections", .int(Int64(stats.connections))),
            ("accepted", .int(Int64(stats.accepted))),
            ("refused", .int(Int64(stats.refused))),
            ("subscriptions", .int(Int64(stats.subscriptions))),
            ("pushes", .int(Int64(stats.pushes))),
            ("pushed_bytes", .int(Int64(stats.pushedBytes))),
            ("flush_submissions", .int(Int64(stats.flushSubmissions))),
            ("flush_ring_sends", .int(Int64(stats.flushRingSends))),
            ("flush_ring_loops", .int(Int64(stats.flushRingLoops))),
            ("publishes_applied", .int(Int64(stats.publishesApplied))),
            ("publishes_refused", .int(Int64(stats.publishesRefused))),
            ("slow_disconnects", .int(Int64(stats.slowDisconnects))),
            ("recoveries", .int(Int64(stats.recoveries))),
            ("tap_clients", .int(Int64(tapClients.load(ordering: .relaxed)))),
            ("listeners", .array(gateway.listeners.map { listener in
                var members: [(String, JSONValue)] = [("transport", .string(listener.transport)), ("port", .int(Int64(listener.port)))]
                if let path = listener.path { members.append(("path", .string(path))) }
                return .object(members)
            })),
        ])
    }

    private func logLevel(_ request: HTTPRequest) -> HTTPResponse {
        guard let levelSwitch = logger.levelSwitch else {
            return .error(.conflict, "this node's log level is fixed at start")
        }
        if request.method == "PUT" {
            guard let body = try? JSONValue.parse(request.body), let name = body["level"]?.stringValue,
                let level = LogLevel(name: name)
            else { return .error(.badRequest, "expected {\"level\": \"trace|debug|info|notice|warning|error\"}") }
            levelSwitch.set(level)
            logger.notice("log level set to \(level) through the admin API")
        }
        return .json(.object([("level", .string(levelSwitch.level.description))]))
    }
}

/// A well-formed admin request whose content is refused (422).
struct AdminRequestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
