public import LonglinkCore
public import LonglinkGateway
import LonglinkHTTP
import LonglinkJSON
public import LonglinkLoop
public import LonglinkStores
import Synchronization

/// The HTTP API for backend services, on a listener of its own (`serve --api-listen`, default `127.0.0.1:9180`),
/// served on the gateway's first event loop. Described by `docs/api/openapi.json`, which a test checks against
/// `APIServer.endpoints` both ways.
///
///     POST /api/v1/publish           one change            → 200 with its position, or a numbered refusal
///     POST /api/v1/publish/batch     {"changes": [...]}    → 200 with one result per change, in order
///     GET  /api/v1/orders/{line}/{id}                      → snapshot and retained history
///
/// Authorised by `Authorization: Bearer <token>`: publishing needs a token with the `publisher` role whose routes
/// cover the change's route (`Principal.publishDenial(for:)`, the socket's check), reading an order a token whose
/// routes cover it. A result is sent only after the Store committed the change. Bad input is refused before
/// anything is stored, naming the field: malformed JSON (400), unknown members, wrong types and invalid values
/// (422), bodies over `maxBodyBytes` and batches over `maxBatchChanges` (413), bodies that do not arrive within
/// `bodyTimeout` (408).
///
/// Why its own listener and not the operations one: the operations port serves `/metrics`, health checks and the
/// admin page without a token and is meant for the operators' network only, while backends sit in the services'
/// network; a port of its own lets each be opened only to whom needs it.
public final class APIServer: Sendable {
    /// Limits of the API.
    public struct Configuration: Sendable, Hashable {
        /// The largest request body.
        public var maxBodyBytes: Int
        /// The most changes in one batch.
        public var maxBatchChanges: Int
        /// Time for a request's head and body to arrive (a slow body gets 408).
        public var bodyTimeout: Duration
        /// Time for the Store to answer before the request gets 504.
        public var responseTimeout: Duration
        /// Open API connections at most.
        public var maxConnections: Int

        /// Creates a configuration (defaults: 256 KiB bodies, 100 changes per batch, 5 s per body, 10 s answers).
        public init(
            maxBodyBytes: Int = 256 * 1024,
            maxBatchChanges: Int = 100,
            bodyTimeout: Duration = .seconds(5),
            responseTimeout: Duration = .seconds(10),
            maxConnections: Int = 1_024
        ) {
            self.maxBodyBytes = maxBodyBytes
            self.maxBatchChanges = maxBatchChanges
            self.bodyTimeout = bodyTimeout
            self.responseTimeout = responseTimeout
            self.maxConnections = maxConnections
        }
    }

    /// One served endpoint: a method and a path template (`{line}` stands for one segment).
    public struct Endpoint: Hashable, Sendable {
        /// The HTTP method.
        public var method: String
        /// The path template, as the OpenAPI document writes it.
        public var path: String
    }

    /// Every endpoint the API serves (the OpenAPI test compares the document with this list).
    public static let endpoints: [Endpoint] = [
        Endpoint(method: "POST", path: "/api/v1/publish"),
        Endpoint(method: "POST", path: "/api/v1/publish/batch"),
        Endpoint(method: "GET", path: "/api/v1/orders/{line}/{id}"),
    ]

    let gateway: Gateway
    let writer: StoreWriter
    let authorizer: any Authorizer
    let clock: any WallClock
    let logger: Logger
    /// The limits.
    public let configuration: Configuration
    private let boundPort = Atomic<Int>(0)
    private let loop = Mutex<EventLoop?>(nil)

    /// Creates the API; nothing listens until `start(host:port:)`.
    public init(
        gateway: Gateway,
        writer: StoreWriter,
        authorizer: any Authorizer,
        configuration: Configuration = Configuration(),
        clock: any WallClock = SystemWallClock(),
        logger: Logger = .disabled
    ) {
        self.gateway = gateway
        self.writer = writer
        self.authorizer = authorizer
        self.configuration = configuration
        self.clock = clock
        self.logger = logger
    }

    /// The bound port (0 before `start`).
    public var port: Int { boundPort.load(ordering: .relaxed) }

    /// Binds `host:port` now (a taken address fails here) and serves on the gateway's first loop; returns the port.
    @discardableResult
    public func start(host: String, port: Int) throws(IOError) -> Int {
        guard let target = gateway.eventLoops.first else { throw IOError(errno: 22, function: "API listener: gateway not started") }
        let (fd, bound) = try HTTPServer.bind(host: host, port: port, backlog: 512)
        boundPort.store(bound, ordering: .relaxed)
        loop.withLock { $0 = target }
        let http = HTTPServer.Configuration(
            limits: HTTPLimits(maxBodyBytes: configuration.maxBodyBytes),
            maxConnections: configuration.maxConnections,
            requestTimeout: configuration.bodyTimeout,
            responseTimeout: configuration.responseTimeout,
            streamKeepAlive: nil,
            sweepInterval: .milliseconds(250)
        )
        HTTPServer.start(
            "API listener",
            listeningFD: fd,
            on: target,
            configuration: http,
            logger: logger,
            makeHandler: { [self] _ in { request, exchange in self.handle(request, exchange) } },
            started: { context, server in context.attach(APIListener(server: server)) }
        )
        logger.info("backend API listener on \(host):\(bound)", [("address", "\(host):\(bound)")])
        return bound
    }

    /// Stops listening and closes the API's connections. Returns at once.
    public func stop() {
        let target = loop.withLock { $0 }
        target?.execute { context in
            context.attachment(APIListener.self)?.server.close()
            context.detach(APIListener.self)
        }
    }

    // MARK: Routing

    /// Answers one request on the listener's loop.
    func handle(_ request: HTTPRequest, _ exchange: HTTPExchange) -> HTTPResponse? {
        guard let segments = request.pathSegments else {
            return APIResponses.error(.badRequest, "malformed percent escape in path", code: .badRequest)
        }
        let method = request.method == "HEAD" ? "GET" : request.method
        let allowed = Self.methods(for: segments)
        guard !allowed.isEmpty else { return APIResponses.error(.notFound, "no such endpoint: \(request.path)", code: .badRequest) }
        guard allowed.contains(method) else {
            var response = APIResponses.error(.methodNotAllowed, "\(request.method) is not allowed here", code: .badRequest)
            response.headers.append(("Allow", allowed.joined(separator: ", ")))
            return response
        }
        let principal: Principal
        switch authenticate(request) {
        case .failure(let refusal): return refusal.response
        case .success(let admitted): principal = admitted
        }
        switch (method, segments.count) {
        case ("GET", 5): return order(line: segments[3], id: segments[4], principal: principal, exchange)
        case ("POST", 3): return publish(request, principal: principal, exchange)
        default: return publishBatch(request, principal: principal, exchange)
        }
    }

    /// The methods a path allows (empty: no such path).
    static func methods(for segments: [String]) -> [String] {
        guard segments.count >= 3, segments[0] == "api", segments[1] == "v1" else { return [] }
        switch Array(segments.dropFirst(2)) {
        case ["publish"], ["publish", "batch"]: return ["POST"]
        case let rest where rest.count == 3 && rest[0] == "orders": return ["GET"]
        default: return []
        }
    }

    /// `Authorization: Bearer <token>` through the gateway's authorizer (the token is never logged).
    private func authenticate(_ request: HTTPRequest) -> Result<Principal, HTTPResponseBox> {
        guard let header = request.header("authorization") else {
            return .failure(HTTPResponseBox(challenge("missing Authorization: Bearer <token>")))
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count >= 1, parts[0].lowercased() == "bearer" else {
            return .failure(HTTPResponseBox(challenge("Authorization must be 'Bearer <token>'")))
        }
        let token = parts.count == 2 ? String(parts[1].drop { $0 == " " }) : ""
        do {
            return .success(try authorizer.authenticate(token: token, nowMillis: clock.nowMillis()))
        } catch .expired {
            return .failure(HTTPResponseBox(challenge("token expired", code: .tokenExpired)))
        } catch {
            logger.notice("API request refused: \(error)", [("path", request.path)])
            return .failure(HTTPResponseBox(challenge("\(error)")))
        }
    }

    private func challenge(_ message: String, code: ErrorCode = .unauthorized) -> HTTPResponse {
        var response = APIResponses.error(.unauthorized, message, code: code)
        response.headers.append(("WWW-Authenticate", "Bearer realm=\"longlink-api\""))
        return response
    }

    // MARK: Publishing

    /// Checks the body's media type (JSON, or none given) and parses it.
    private func body(_ request: HTTPRequest) throws(APIFieldError) -> JSONValue {
        if let type = request.header("content-type") {
            let media = type.split(separator: ";").first.map { $0.filter { $0 != " " && $0 != "\t" }.lowercased() } ?? ""
            guard media == "application/json" else {
                throw APIFieldError(field: "Content-Type", "must be application/json, not \(type)", code: .badRequest, status: 415)
            }
        }
        guard !request.body.isEmpty else { throw APIFieldError(field: "body", "is empty; send a JSON object", code: .badRequest, status: 400) }
        do {
            return try JSONValue.parse(request.body)
        } catch {
            throw APIFieldError(field: "body", "is not valid JSON: \(error)", code: .badRequest, status: 400)
        }
    }

    private func publish(_ request: HTTPRequest, principal: Principal, _ exchange: HTTPExchange) -> HTTPResponse? {
        let change: OrderChange
        do {
            change = try APIChangeDecoder.change(body(request), idempotencyKey: request.header("idempotency-key"))
        } catch {
            return APIResponses.refusal(error)
        }
        if let denial = principal.publishDenial(for: change.route) { return APIResponses.refusal(denial) }
        let counters = gateway.counters
        writer.apply(change) { result in
            counters.recordPublish(result)
            switch result {
            case .success(let applied): exchange.respond(APIResponses.json(.object(APIResponses.accepted(applied))))
            case .failure(let error): exchange.respond(APIResponses.refusal(error))
            }
        }
        return nil
    }

    /// Validates every change and its scope first (a refusal here stores nothing), then hands them to the Store in
    /// order; the one writer applies them in that order, each on its own (a refused change does not undo the others).
    private func publishBatch(_ request: HTTPRequest, principal: Principal, _ exchange: HTTPExchange) -> HTTPResponse? {
        let changes: [OrderChange]
        do throws(APIFieldError) {
            let value = try body(request)
            guard case .object(let members) = value else {
                throw APIFieldError(field: "body", "must be a JSON object {\"changes\": [...]}", code: .badRequest, status: 400)
            }
            for (name, _) in members where name != "changes" {
                throw APIFieldError(field: name, "is not a field of a batch (known: changes)")
            }
            guard let list = value["changes"] else { throw APIFieldError(field: "changes", "is required") }
            guard case .array(let items) = list else { throw APIFieldError(field: "changes", "must be an array of changes") }
            guard !items.isEmpty else { throw APIFieldError(field: "changes", "must not be empty") }
            guard items.count <= configuration.maxBatchChanges else {
                throw APIFieldError(
                    field: "changes",
                    "has \(items.count) changes; at most \(configuration.maxBatchChanges) per batch",
                    status: 413
                )
            }
            var decoded: [OrderChange] = []
            decoded.reserveCapacity(items.count)
            for (index, item) in items.enumerated() {
                decoded.append(try APIChangeDecoder.change(item, prefix: "changes[\(index)]."))
            }
            changes = decoded
        } catch {
            return APIResponses.refusal(error)
        }
        for change in changes {
            if let denial = principal.publishDenial(for: change.route) { return APIResponses.refusal(denial) }
        }
        let collector = BatchResults(count: changes.count)
        let counters = gateway.counters
        for (index, change) in changes.enumerated() {
            writer.apply(change) { result in
                counters.recordPublish(result)
                guard let all = collector.add(index, result) else { return }
                var applied = 0
                let items: [JSONValue] = all.enumerated().map { index, result in
                    switch result {
                    case .success(let change):
                        applied += 1
                        return .object([("index", .int(Int64(index))), ("status", .int(200))] + APIResponses.accepted(change))
                    case .failure(let error):
                        return .object([("index", .int(Int64(index)))] + APIResponses.refusalMembers(error))
                    }
                }
                exchange.respond(
                    APIResponses.json(
                        .object([
                            ("results", .array(items)),
                            ("applied", .int(Int64(applied))),
                            ("refused", .int(Int64(all.count - applied))),
                        ])
                    )
                )
            }
        }
        return nil
    }

    // MARK: Reading

    private func order(line: String, id: String, principal: Principal, _ exchange: HTTPExchange) -> HTTPResponse? {
        guard let line = BusinessLine(line) else {
            return APIResponses.refusal(APIFieldError(field: "line", "'\(line)' is not a business line name", code: .unknownLine))
        }
        guard let order = OrderID(id) else {
            return APIResponses.refusal(APIFieldError(field: "id", "'\(id)' is not an order id ([A-Za-z0-9_.-], 1 to 64)"))
        }
        let route = Route.order(line, order)
        guard principal.maySubscribe(to: route) else {
            return APIResponses.error(.forbidden, "token does not allow reading \(route)", code: .permissionDenied)
        }
        let counters = gateway.counters
        writer.orderHistory(line, order) { result in
            switch result {
            case .success(nil):
                exchange.respond(APIResponses.error(.notFound, "no \(line) order \(order)", code: .unknownOrder))
            case .success(let history?):
                exchange.respond(
                    APIResponses.json(
                        .object([
                            ("snapshot", AdminJSON.snapshot(history.snapshot)),
                            ("history", .array(history.records.map { AdminJSON.record($0, route: route) })),
                        ])
                    )
                )
            case .failure(let error):
                counters.recordStoreError()
                exchange.respond(APIResponses.refusal(error))
            }
        }
        return nil
    }
}

/// An `HTTPResponse` as an error, so `authenticate` can return `Result`.
struct HTTPResponseBox: Error {
    let response: HTTPResponse
    init(_ response: HTTPResponse) { self.response = response }
}

/// Results of one batch, filled from the Store's completions; the last one hands back the whole list in order.
final class BatchResults: Sendable {
    private let results: Mutex<(slots: [Result<AppliedChange, StoreError>?], remaining: Int)>

    init(count: Int) { results = Mutex((Array(repeating: nil, count: count), count)) }

    /// Records result `index`; returns every result once all have arrived (once), else nil.
    func add(_ index: Int, _ result: Result<AppliedChange, StoreError>) -> [Result<AppliedChange, StoreError>]? {
        results.withLock { state in
            state.slots[index] = result
            state.remaining -= 1
            return state.remaining == 0 ? state.slots.map { $0! } : nil
        }
    }
}

/// The API's HTTP server, attached to its loop so `stop()` can find it.
final class APIListener {
    let server: HTTPServer
    init(server: HTTPServer) { self.server = server }
}

@available(*, unavailable)
extension APIListener: Sendable {}
