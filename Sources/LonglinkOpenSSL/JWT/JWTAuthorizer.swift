public import LonglinkCore

/// The production `Authorizer`: connection tokens are HS256 JWTs (`JWTClaims`), checked against a shared secret.
///
/// A token is accepted when its header says `HS256` (`none` and every other algorithm are refused), its
/// signature matches (compared in constant time), `exp` is in the future, `nbf` (if any) is not, and `iss`/`aud`
/// match when this authorizer is configured with them. The secret and the tokens never appear in errors or logs.
public struct JWTAuthorizer: Authorizer {
    /// The shortest secret accepted (256 bits, the size of the HMAC-SHA256 output).
    public static let minimumSecretBytes = 32

    private let secret: [UInt8]
    /// Required `iss`, if any.
    public let issuer: String?
    /// Required `aud` (the token's audience must include it), if any.
    public let audience: String?
    /// Clock skew tolerated on `exp` and `nbf`.
    public let leewayMillis: UInt64

    /// Creates an authorizer; throws `WeakSecret` when `secret` is shorter than `minimumSecretBytes`.
    public init(secret: [UInt8], issuer: String? = nil, audience: String? = nil, leewayMillis: UInt64 = 0) throws(WeakSecret) {
        guard secret.count >= Self.minimumSecretBytes else { throw WeakSecret(length: secret.count) }
        self.secret = secret
        self.issuer = issuer
        self.audience = audience
        self.leewayMillis = leewayMillis
    }

    public func authenticate(token: String, nowMillis: UInt64) throws(AuthorizationError) -> Principal {
        try verify(token, nowMillis: nowMillis).principal
    }

    /// Checks `token` completely and returns its claims.
    public func verify(_ token: String, nowMillis: UInt64) throws(AuthorizationError) -> JWTClaims {
        let parts = try JWTCodec.split(token)
        let expected = HMACSHA256.authenticationCode(key: secret, message: parts.signingInput)
        guard HMACSHA256.constantTimeEqual(expected, parts.signature) else {
            throw .invalidToken("signature does not match")
        }
        let claims = try JWTCodec.claims(parts.payload)
        let expiresAtMillis = claims.principal.expiresAtMillis ?? UInt64.max
        let (deadline, overflow) = expiresAtMillis.addingReportingOverflow(leewayMillis)
        if !overflow && nowMillis >= deadline { throw .expired }
        if let nbf = claims.notBefore, nowMillis &+ leewayMillis < nbf &* 1000 { throw .notYetValid }
        if let issuer, claims.issuer != issuer { throw .invalidToken("issuer is not '\(issuer)'") }
        if let audience, !claims.audience.contains(audience) { throw .invalidToken("audience does not include '\(audience)'") }
        return claims
    }
}

/// A token secret shorter than `JWTAuthorizer.minimumSecretBytes`.
public struct WeakSecret: Error, Hashable, Sendable, CustomStringConvertible {
    /// The secret's length in bytes.
    public let length: Int

    public var description: String {
        "the token secret has \(length) bytes; at least \(JWTAuthorizer.minimumSecretBytes) are required (e.g. `openssl rand -hex 32`)"
    }
}

/// Mints HS256 connection tokens (`longlink token`, tests, backends written in Swift).
public struct JWTMinter: Sendable {
    private let secret: [UInt8]

    /// A minter for `secret` (same length rule as `JWTAuthorizer`).
    public init(secret: [UInt8]) throws(WeakSecret) {
        guard secret.count >= JWTAuthorizer.minimumSecretBytes else { throw WeakSecret(length: secret.count) }
        self.secret = secret
    }

    /// The signed token for `claims`.
    public func mint(_ claims: JWTClaims) -> String {
        Self.sign(header: Array(JWTCodec.header.utf8), payload: JWTCodec.payload(claims), secret: secret)
    }

    /// Signs arbitrary header and payload bytes with HS256 (tests use it to build hostile tokens that are
    /// correctly signed).
    public static func sign(header: [UInt8], payload: [UInt8], secret: [UInt8]) -> String {
        let input = Base64URL.encode(header) + "." + Base64URL.encode(payload)
        return input + "." + Base64URL.encode(HMACSHA256.authenticationCode(key: secret, message: Array(input.utf8)))
    }
}
