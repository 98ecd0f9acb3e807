import Glibc
import LonglinkCore
import LonglinkOpenSSL

/// `longlink token`: mints an HS256 connection token with the gateway's secret. The secret comes from
/// `--secret-file` or `LONGLINK_SECRET`; the token is printed to stdout alone, so
/// `export LONGLINK_TOKEN=$(longlink token ...)` works.
public enum TokenCommand {
    /// The command.
    public static let command = Command(
        name: "token",
        summary: "mint a connection token (HS256 JWT) for a user, route scopes and a role",
        usage: "--sub USER [--routes PATTERN,...] [--role ROLE] [--ttl DURATION]",
        details: """
            The secret is read from --secret-file (or LONGLINK_SECRET_FILE) or from LONGLINK_SECRET, never from a
            flag. Route patterns: an exact route (order://taxi/8812), a namespace (order://taxi/*), a kind
            (order://*) or everything (*). Example:
              export LONGLINK_TOKEN=$(longlink token --secret-file data/dev-secret --sub rider-1 \\
                  --routes 'order://taxi/8812' --ttl 1h)
            """,
        maximumPositionals: 0,
        options: [
            OptionSpec("secret-file", valueName: "FILE", help: "file holding the token secret (or LONGLINK_SECRET)"),
            OptionSpec("sub", valueName: "USER", help: "the user or service id (sub claim)", configurable: false),
            OptionSpec(
                "routes",
                kind: .list,
                valueName: "PATTERN",
                help: "route patterns the holder may subscribe to, and publish to as a publisher (comma-separated or repeated)",
                configurable: false
            ),
            OptionSpec("role", default: "subscriber", valueName: "ROLE", help: "subscriber | publisher | admin", configurable: false),
            OptionSpec("ttl", default: "1h", valueName: "DURATION", help: "lifetime (exp = now + ttl)", configurable: false),
            OptionSpec("issuer", valueName: "ISS", help: "iss claim (match the gateway's --token-issuer)"),
            OptionSpec("audience", valueName: "AUD", help: "aud claim (match the gateway's --token-audience)"),
        ]
    ) { options, context in
        guard let loaded = try TokenSecret.load(file: options.string("secret-file"), environment: context.environment) else {
            throw CommandLineError("no secret: give --secret-file FILE or set \(TokenSecret.environmentName)")
        }
        if let warning = loaded.warning { context.io.err("warning: \(warning)") }
        let minter: JWTMinter
        do {
            minter = try JWTMinter(secret: loaded.secret)
        } catch {
            throw CommandFailure("\(error)", exitCode: 2)
        }
        let claims = try claims(options, nowSeconds: UInt64(time(nil)))
        if claims.role == .publisher && claims.routes.isEmpty {
            context.io.err("warning: a publisher token without --routes may publish to no route (try --routes 'order://*')")
        }
        context.io.out(minter.mint(claims))
        return 0
    }

    /// The claims the options describe.
    static func claims(_ options: ResolvedOptions, nowSeconds: UInt64) throws(CommandLineError) -> JWTClaims {
        let subject = try options.required("sub")
        let roleText = try options.required("role")
        guard let role = Principal.Role(rawValue: roleText) else {
            throw CommandLineError("--role must be subscriber, publisher or admin, got '\(roleText)'")
        }
        var routes: [RoutePattern] = []
        for text in options.list("routes").flatMap({ $0.split(separator: ",") }).map(String.init) where !text.isEmpty {
            do {
                routes.append(try RoutePattern(parsing: text))
            } catch {
                throw CommandLineError("--routes '\(text)': \(error)")
            }
        }
        let ttl = try options.duration("ttl") ?? .seconds(3600)
        guard ttl > .zero else { throw CommandLineError("--ttl must be above zero") }
        return JWTClaims(
            subject: subject,
            role: role,
            routes: routes,
            expiresAt: nowSeconds + UInt64(ttl.components.seconds),
            issuedAt: nowSeconds,
            issuer: options.string("issuer"),
            audience: options.string("audience").map { [$0] } ?? []
        )
    }
}
