/// What a connection may do, decided once at connect (and again at token refresh).
public struct Principal: Hashable, Sendable {
    /// What the holder is allowed to do beyond subscribing.
    public enum Role: String, Hashable, Sendable, CaseIterable {
        /// Apps: subscribe within their route scopes.
        case subscriber
        /// Backends: also publish order changes.
        case publisher
        /// Operators: everything, including inspection and admin actions.
        case admin
    }

    /// The user (or service) id, the token's `sub`.
    public var userID: String
    /// The role.
    public var role: Role
    /// The routes the holder may subscribe to and, with the publisher role, publish to.
    public var routes: [RoutePattern]
    /// When the credentials expire (ms since the Unix epoch); nil when they do not.
    public var expiresAtMillis: UInt64?

    public init(userID: String, role: Role, routes: [RoutePattern], expiresAtMillis: UInt64? = nil) {
        self.userID = userID
        self.role = role
        self.routes = routes
        self.expiresAtMillis = expiresAtMillis
    }

    /// Whether the holder may subscribe to `route` (scope check only; the route registry is checked separately).
    public func maySubscribe(to route: Route) -> Bool {
        role == .admin || routes.contains { $0.matches(route) }
    }

    /// Why the holder may not publish a change to `route`, or nil when it may: the publisher role and a route
    /// pattern covering `route` (admins publish anywhere, as they subscribe anywhere). The one publish check, for
    /// every path a change comes in by (publish frames, the HTTP API), so they cannot disagree.
    public func publishDenial(for route: Route) -> PublishDenial? {
        switch role {
        case .admin: nil
        case .subscriber: .notPublisher
        case .publisher: routes.contains { $0.matches(route) } ? nil : .routeNotCovered(route)
        }
    }
}

/// Why a principal may not publish a change; answered with `ErrorCode.permissionDenied`.
public enum PublishDenial: Hashable, Sendable, CustomStringConvertible {
    /// The token's role is `subscriber`.
    case notPublisher
    /// The token's routes do not cover the change's route.
    case routeNotCovered(Route)

    public var description: String {
        switch self {
        case .notPublisher: "publishing needs the publisher role"
        case .routeNotCovered(let route): "token does not allow publishing to \(route)"
        }
    }
}

/// Turns a connect token into a `Principal`. The development `AllowAllAuthorizer` accepts everything;
/// the JWT authorizer (security issue) verifies HS256 tokens.
public protocol Authorizer: Sendable {
    /// Verifies `token` at `nowMillis`, or throws why it is not acceptable.
    func authenticate(token: String, nowMillis: UInt64) throws(AuthorizationError) -> Principal
}

/// Why a token was refused.
public enum AuthorizationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Missing, malformed, wrongly signed or using an unaccepted algorithm.
    case invalidToken(String)
    /// Past its `exp`.
    case expired
    /// Before its `nbf`.
    case notYetValid

    public var description: String {
        switch self {
        case .invalidToken(let why): "invalid token: \(why)"
        case .expired: "token expired"
        case .notYetValid: "token not yet valid"
        }
    }
}

/// Development authorizer: any token (even empty) is an admin allowed everywhere. Never for production;
/// `serve` announces loudly when it runs with it.
public struct AllowAllAuthorizer: Authorizer {
    public init() {}

    public func authenticate(token: String, nowMillis: UInt64) throws(AuthorizationError) -> Principal {
        token.isEmpty ? Self.anonymous : Self.developer
    }

    // Shared instances: every connection refers to the same route list instead of allocating its own.
    private static let anonymous = Principal(userID: "anonymous", role: .admin, routes: [.all])
    private static let developer = Principal(userID: "dev", role: .admin, routes: [.all])
}
