public import LonglinkCore

/// The claims of a Longlink connection token (a standard JWT, so any JWT library can mint one):
///
///     { "sub": "user-42", "exp": 1767225600, "nbf": 1767222000, "iat": 1767222000,
///       "iss": "longlink", "aud": "apps",
///       "routes": ["order://taxi/8812", "order://food/*"], "role": "subscriber" }
///
/// `routes` lists the route patterns the holder may subscribe to and, as a publisher, publish to (`RoutePattern`
/// syntax); `role` is `subscriber` (default), `publisher` or `admin` (everything, whatever `routes` says).
public struct JWTClaims: Sendable, Hashable {
    /// `sub`: the user or service id.
    public var subject: String
    /// `role`.
    public var role: Principal.Role
    /// `routes`: the patterns the holder may subscribe to (and publish to, with the publisher role).
    public var routes: [RoutePattern]
    /// `exp`: seconds since the Unix epoch after which the token is refused.
    public var expiresAt: UInt64
    /// `nbf`: seconds since the Unix epoch before which the token is refused.
    public var notBefore: UInt64?
    /// `iat`: when it was issued (informational).
    public var issuedAt: UInt64?
    /// `iss`: who issued it.
    public var issuer: String?
    /// `aud`: who it is for (a string or a list in the token).
    public var audience: [String]

    /// Creates claims.
    public init(
        subject: String,
        role: Principal.Role = .subscriber,
        routes: [RoutePattern],
        expiresAt: UInt64,
        notBefore: UInt64? = nil,
        issuedAt: UInt64? = nil,
        issuer: String? = nil,
        audience: [String] = []
    ) {
        self.subject = subject
        self.role = role
        self.routes = routes
        self.expiresAt = expiresAt
        self.notBefore = notBefore
        self.issuedAt = issuedAt
        self.issuer = issuer
        self.audience = audience
    }

    /// The principal these claims describe.
    public var principal: Principal {
        Principal(userID: subject, role: role, routes: routes, expiresAtMillis: expiresAt.multipliedReportingOverflow(by: 1000).overflow ? UInt64.max : expiresAt * 1000)
    }
}
