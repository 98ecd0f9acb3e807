public import LonglinkCore
public import LonglinkGateway
public import LonglinkHTTP
public import LonglinkLoop
public import LonglinkStores
import Synchronization

/// The operations surface of one gateway node, served by a small HTTP server on the gateway's first event loop:
/// Prometheus metrics, health and readiness, the admin API (admin role required) and the admin page.
///
///     GET  /metrics                          Prometheus text (no auth; bind the listener to a private address)
///     GET  /healthz                          200 while the process runs
///     GET  /readyz                           200 when ready; 503 while starting, draining, or the Store does not answer
///     GET  /  and  /admin                    the admin page (it asks for a token and calls the API below)
///     GET  /admin/connections?sort=&filter=&limit=
///     POST /admin/connections/{id}/disconnect   {"code": 3007, "reason": "..."}
///     GET  /admin/tap?route=&line=&state=&recent=   Server-Sent Events, one `data: {json}` per stored record
///     POST /admin/publish                    {"order","line","state", fields..., "idempotency_key"}
///     GET  /admin/orders/{line}/{id}         snapshot and retained history
///     GET  /admin/presence?route=            who is subscribed to a route, over every node
///     POST /admin/drain                      drain the node (as SIGTERM does)
///     GET  /admin/stats, /admin/routes?limit=   counters and top routes (for the page)
///     GET|PUT /admin/log-level               {"level": "debug"}
///
/// Every `/admin/` endpoint needs `Authorization: Bearer <token>` accepted by the gateway's `Authorizer` with the
/// `admin` role (401 without or with a bad token, 403 for another role).
public final class AdminServer: Sendable {
    /// Where the node is in its life, as `/readyz` reports it.
    public enum Readiness: UInt8, Sendable {
        /// Not yet serving (the composition root calls `markReady()` last).
        case starting
        /// Serving traffic.
        case ready
        /// Draining or stopped.
        case draining
    }

    let gateway: Gateway
    /// The Store's single writer: admin publishes, order reads and the readiness probe go through it.
    let writer: StoreWriter
    let observers: ObserverRegistry
    let authorizer: any Authorizer
    let clock: any WallClock
    let logger: Logger
    let version: String
    let drainAction: @Sendable () -> Void
    let storeProbeTimeout: Duration
    let httpConfiguration: HTTPServer.Configuration
    /// Feature toggles, when the node serves them.
    let toggles: ToggleService?
    private let readiness = Atomic<UInt8>(Readiness.starting.rawValue)
    let tapClients = Atomic<Int>(0)
    let tapClientsCut = Atomic<Int>(0)
    let requests = Atomic<Int>(0)
    private let boundPort = Atomic<Int>(0)
    private let loop = Mutex<EventLoop?>(nil)
    /// The last stored changes, for taps opened with `recent=N`.
    let recent = RecentChanges()
    private let recentToken: ObservationToken

    /// Creates the surface; nothing listens until `start(host:port:)`.
    /// - Parameter drainAction: what `POST /admin/drain` does; it must return at once (drain on another thread).
    public init(
        gateway: Gateway,
        writer: StoreWriter,
        observers: ObserverRegistry,
        authorizer: any Authorizer,
        toggles: ToggleService? = nil,
        clock: any WallClock = SystemWallClock(),
        logger: Logger = .disabled,
        version: String = "dev",
        storeProbeTimeout: Duration = .seconds(2),
        httpConfiguration: HTTPServer.Configuration = HTTPServer.Configuration(),
        drainAction: @escaping @Sendable () -> Void
    ) {
        self.gateway = gateway
        self.writer = writer
        self.observers = observers
        self.authorizer = authorizer
        self.toggles = toggles
        self.clock = clock
        self.logger = logger
        self.version = version
        self.storeProbeTimeout = storeProbeTimeout
        self.httpConfiguration = httpConfiguration
        self.drainAction = drainAction
        self.recentToken = observers.observeInline(.all, recent)
    }

    /// The bound port (0 before `start`).
    public var port: Int { boundPort.load(ordering: .relaxed) }

    /// Binds `host:port` now (so a taken address fails here) and serves on the gateway's first loop.
    /// Returns the bound port.
    @discardableResult
    public func start(host: String, port: Int) throws(IOError) -> Int {
        guard let target = gateway.eventLoops.first else { throw IOError(errno: 22, function: "admin listener: gateway not started") }
        let (fd, bound) = try HTTPServer.bind(host: host, port: port, backlog: 128)
        boundPort.store(bound, ordering: .relaxed)
        loop.withLock { $0 = target }
        HTTPServer.start(
            "operations listener",
            listeningFD: fd,
            on: target,
            configuration: httpConfiguration,
            logger: logger,
            makeHandler: { [self] context in { [unowned context] request, exchange in self.handle(request, exchange, context: context) } },
            started: { context, server in context.attach(AdminListener(server: server)) }
        )
        logger.info("operations listener on \(host):\(bound)", [("address", "\(host):\(bound)")])
        return bound
    }

    /// Stops listening and closes the operations connections (open taps end). Returns at once.
    public func stop() {
        recentToken.cancel()
        let target = loop.withLock { $0 }
        target?.execute { context in
            context.attachment(AdminListener.self)?.server.close()
            context.detach(AdminListener.self)
        }
    }

    /// The node is ready for traffic (call after everything started).
    public func markReady() { readiness.store(Readiness.ready.rawValue, ordering: .relaxed) }

    /// The node is draining: `/readyz` answers 503 from now on.
    public func markDraining() { readiness.store(Readiness.draining.rawValue, ordering: .relaxed) }

    /// The lifecycle part of readiness (the Store probe is added per request).
    public var state: Readiness {
        let value = Readiness(rawValue: readiness.load(ordering: .relaxed)) ?? .starting
        if value == .ready && gateway.currentState != .running { return .draining }
        return value
    }

    /// The metrics text as `/metrics` serves it.
    public func metricsText() -> String {
        GatewayMetrics.render(
            gateway.counters,
            extras: GatewayMetrics.Extras(
                ready: state == .ready,
                observerDroppedChanges: observers.droppedCount,
                tapClients: tapClients.load(ordering: .relaxed),
                tapClientsCut: tapClientsCut.load(ordering: .relaxed),
                httpRequests: requests.load(ordering: .relaxed)
            ),
            version: version
        )
    }

    // MARK: Routing

    /// Answers one request on the listener's loop.
    func handle(_ request: HTTPRequest, _ exchange: HTTPExchange, context: LoopContext) -> HTTPResponse? {
        requests.add(1, ordering: .relaxed)
        guard let segments = request.pathSegments else { return .error(.badRequest, "malformed percent escape in path") }
        let method = request.method == "HEAD" ? "GET" : request.method
        let allowed = Self.methods(for: segments)
        guard !allowed.isEmpty else { return .error(.notFound, "no such endpoint: \(request.path)") }
        guard allowed.contains(method) else {
            var response = HTTPResponse.error(.methodNotAllowed, "\(request.method) is not allowed here")
            response.headers.append(("Allow", (allowed + (allowed.contains("GET") ? ["HEAD"] : [])).joined(separator: ", ")))
            return response
        }
        if segments.isEmpty || segments == ["admin"] {
            return HTTPResponse(
                status: .ok,
                headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store"),
                          ("Content-Security-Policy", AdminPage.contentSecurityPolicy)],
                body: AdminPage.bytes
            )
        }
        if segments == ["longlink.js"] {
            return HTTPResponse(
                status: .ok,
                headers: [("Content-Type", "text/javascript; charset=utf-8"), ("Cache-Control", "no-cache")],
                body: ClientAssets.script
            )
        }
        if segments == ["example"] {
            return HTTPResponse(
                status: .ok,
                headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-cache"),
                          ("Content-Security-Policy", AdminPage.examplePolicy)],
                body: ClientAssets.example
            )
        }
        switch segments.first {
        case "metrics":
            return HTTPResponse(status: .ok, headers: [("Content-Type", PrometheusText.contentType)], body: Array(metricsText().utf8))
        case "healthz":
            return .text("ok\n")
        case "readyz":
            return readyz(exchange, context: context)
        default:
            switch authenticate(request) {
            case .refused(let refusal): return refusal
            case .admitted(let principal):
                return admin(Array(segments.dropFirst()), method: method, request, exchange, principal: principal, context: context)
            }
        }
    }

    /// The methods each path allows (empty: no such path).
    static func methods(for segments: [String]) -> [String] {
        switch segments.count {
        case 0: return ["GET"]
        case 1: return ["metrics", "healthz", "readyz", "admin", "longlink.js", "example"].contains(segments[0]) ? ["GET"] : []
        default: break
        }
        guard segments[0] == "admin" else { return [] }
        switch Array(segments.dropFirst()) {
        case ["connections"], ["tap"], ["stats"], ["routes"], ["toggles"], ["presence"]: return ["GET"]
        case ["publish"], ["drain"]: return ["POST"]
        case ["log-level"]: return ["GET", "PUT"]
        case let rest where rest.count == 3 && rest[0] == "connections" && rest[2] == "disconnect": return ["POST"]
        case let rest where rest.count == 3 && rest[0] == "orders": return ["GET"]
        case let rest where rest.count == 3 && rest[0] == "toggles": return ["GET", "PUT", "DELETE"]
        default: return []
        }
    }

    /// The outcome of checking a request's credentials.
    enum Authentication {
        /// The token is valid and has the admin role.
        case admitted(Principal)
        /// The response to send instead (401 or 403).
        case refused(HTTPResponse)
    }

    /// Checks `Authorization: Bearer <token>` for the admin role. The token itself is never logged.
    func authenticate(_ request: HTTPRequest) -> Authentication {
        guard let header = request.header("authorization") else {
            return .refused(challenge(.unauthorized, "missing Authorization: Bearer <token>"))
        }
        // "Bearer" with an empty token is passed on: the authorizer decides (the development one admits it).
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count >= 1, parts[0].lowercased() == "bearer" else {
            return .refused(challenge(.unauthorized, "Authorization must be 'Bearer <token>'"))
        }
        let token = parts.count == 2 ? String(parts[1]).trimmingCharacters(in: " ") : ""
        let principal: Principal
        do {
            principal = try authorizer.authenticate(token: token, nowMillis: clock.nowMillis())
        } catch {
            logger.notice("admin request refused: \(error)", [("path", request.path)])
            return .refused(challenge(.unauthorized, "\(error)"))
        }
        guard principal.role == .admin else {
            logger.notice("admin request without the admin role", [("user", principal.userID), ("path", request.path)])
            return .refused(.error(.forbidden, "the admin role is required"))
        }
        return .admitted(principal)
    }

    private func challenge(_ status: HTTPStatus, _ message: String) -> HTTPResponse {
        var response = HTTPResponse.error(status, message)
        response.headers.append(("WWW-Authenticate", "Bearer realm=\"longlink-admin\""))
        return response
    }

    private func readyz(_ exchange: HTTPExchange, context: LoopContext) -> HTTPResponse? {
        switch state {
        case .starting: return .text("starting\n", status: .serviceUnavailable)
        case .draining: return .text("draining\n", status: .serviceUnavailable)
        case .ready: break
        }
        writer.probe { result in
            switch result {
            case .success: exchange.respond(.text("ready\n"))
            case .failure(let error): exchange.respond(.text("store unavailable: \(error)\n", status: .serviceUnavailable))
            }
        }
        let timeout = storeProbeTimeout
        context.schedule(after: timeout) {
            exchange.respond(.text("store did not answer within \(timeout)\n", status: .serviceUnavailable))
        }
        return nil
    }
}

extension String {
    /// Without leading and trailing `character`s.
    fileprivate func trimmingCharacters(in character: Character) -> String {
        var text = Substring(self)
        while text.first == character { text = text.dropFirst() }
        while text.last == character { text = text.dropLast() }
        return String(text)
    }
}

/// The operations HTTP server, attached to its loop so `stop()` can find it.
final class AdminListener {
    let server: HTTPServer
    init(server: HTTPServer) { self.server = server }
}

@available(*, unavailable)
extension AdminListener: Sendable {}
