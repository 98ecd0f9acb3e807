import Foundation
import LonglinkCore
import LonglinkOpenSSL
import LonglinkTestSupport
import Testing

/// 32 bytes of test secret.
let secret = Array("0123456789abcdef0123456789abcdef".utf8)
let now: UInt64 = 1_800_000_000_000  // ms
let nowSeconds = now / 1000

func token(
    header: String = #"{"alg":"HS256","typ":"JWT"}"#,
    payload: String,
    key: [UInt8] = secret
) -> String {
    JWTMinter.sign(header: Array(header.utf8), payload: Array(payload.utf8), secret: key)
}

func payload(exp: UInt64 = nowSeconds + 3600, extra: String = "") -> String {
    #"{"sub":"rider-1","exp":\#(exp),"routes":["order://taxi/8812","order://food/*"],"role":"subscriber"\#(extra)}"#
}

/// Tokens that must be refused as invalid, by name.
let invalidTokens: [(String, String)] = {
    var list: [(String, String)] = []
    let good = token(payload: payload()).split(separator: ".")
    let evil = Base64URL.encode(Array(payload(extra: #","x":1"#).utf8))
    let noneHeader = Base64URL.encode(Array(#"{"alg":"none","typ":"JWT"}"#.utf8))
    let exp = nowSeconds + 60
    list.append(("forged signature", token(payload: payload(), key: Array("another secret of at least 32 bytes!".utf8))))
    list.append(("payload swapped after signing", "\(good[0]).\(evil).\(good[2])"))
    list.append(("alg none", noneHeader + "." + Base64URL.encode(Array(payload().utf8)) + "."))
    list.append(("alg none, signed anyway", token(header: #"{"alg":"none"}"#, payload: payload())))
    list.append(("alg HS512", token(header: #"{"alg":"HS512","typ":"JWT"}"#, payload: payload())))
    list.append(("alg RS256", token(header: #"{"alg":"RS256","typ":"JWT"}"#, payload: payload())))
    list.append(("alg missing", token(header: #"{"typ":"JWT"}"#, payload: payload())))
    list.append(("alg not a string", token(header: #"{"alg":1}"#, payload: payload())))
    list.append(("crit header", token(header: #"{"alg":"HS256","crit":["exp"]}"#, payload: payload())))
    list.append(("two parts", "abc.def"))
    list.append(("four parts", token(payload: payload()) + ".x"))
    list.append(("empty", ""))
    list.append(("not base64url", "a+b.c/d.e=f"))
    list.append(("header not JSON", Base64URL.encode(Array("hello".utf8)) + ".e30.sig"))
    list.append(("payload not an object", token(payload: "[1,2]")))
    list.append(("no sub", token(payload: #"{"exp":\#(exp)}"#)))
    list.append(("no exp", token(payload: #"{"sub":"a"}"#)))
    list.append(("exp a string", token(payload: #"{"sub":"a","exp":"tomorrow"}"#)))
    list.append(("exp a boolean", token(payload: #"{"sub":"a","exp":true}"#)))
    list.append(("bad role", token(payload: payload(extra: #","role":"root""#))))
    list.append(("bad route", token(payload: #"{"sub":"a","exp":\#(exp),"routes":["not a route"]}"#)))
    list.append(("routes not a list", token(payload: #"{"sub":"a","exp":\#(exp),"routes":"*"}"#)))
    list.append(("huge", String(repeating: "a", count: 9_000)))
    return list
}()

@Suite("JWT (HS256) authorizer", .ownThreads)
struct JWTAuthorizerTests {
    let authorizer = try! JWTAuthorizer(secret: secret)

    @Test("a valid token gives the principal its claims describe")
    func valid() throws {
        let principal = try authorizer.authenticate(token: token(payload: payload()), nowMillis: now)
        #expect(principal.userID == "rider-1")
        #expect(principal.role == .subscriber)
        #expect(principal.expiresAtMillis == (nowSeconds + 3600) * 1000)
        #expect(principal.maySubscribe(to: try Route(parsing: "order://taxi/8812")))
        #expect(principal.maySubscribe(to: try Route(parsing: "order://food/1")))
        #expect(!principal.maySubscribe(to: try Route(parsing: "order://taxi/1")))
        #expect(principal.publishDenial(for: try Route(parsing: "order://taxi/8812")) == .notPublisher)
    }

    @Test("a minted token round-trips every claim")
    func minted() throws {
        let claims = JWTClaims(
            subject: "backend-1",
            role: .publisher,
            routes: [.all],
            expiresAt: nowSeconds + 60,
            notBefore: nowSeconds - 1,
            issuedAt: nowSeconds,
            issuer: "longlink",
            audience: ["apps", "backends"]
        )
        let strict = try JWTAuthorizer(secret: secret, issuer: "longlink", audience: "backends")
        #expect(try strict.verify(try JWTMinter(secret: secret).mint(claims), nowMillis: now) == claims)
    }

    @Test("the signature equals what the openssl command computes (any JWT library can mint tokens)")
    func interoperableSignature() throws {
        let input = Base64URL.encode(Array(#"{"alg":"HS256","typ":"JWT"}"#.utf8)) + "." + Base64URL.encode(Array(payload().utf8))
        let output = try ProcessRunner.run(
            ["openssl", "dgst", "-sha256", "-mac", "HMAC", "-macopt", "key:" + String(decoding: secret, as: UTF8.self), "-binary"],
            input: Array(input.utf8)
        )
        #expect(output.status == 0)
        let external = input + "." + Base64URL.encode(output.stdout)
        #expect(external == token(payload: payload()))
        #expect(try authorizer.authenticate(token: external, nowMillis: now).userID == "rider-1")
    }

    @Test("refuses forged, alg-none, other-algorithm and malformed tokens as invalid", arguments: invalidTokens)
    func invalid(_ name: String, _ token: String) {
        #expect(throws: AuthorizationError.self, "\(name)") {
            _ = try authorizer.authenticate(token: token, nowMillis: now)
        }
        do {
            _ = try authorizer.authenticate(token: token, nowMillis: now)
        } catch {
            guard case .invalidToken = error else {
                Issue.record("\(name): expected invalidToken, got \(error)")
                return
            }
            #expect(!"\(error)".contains(String(decoding: secret, as: UTF8.self)))
        }
    }

    @Test("an expired token is refused as expired")
    func expired() {
        #expect(throws: AuthorizationError.expired) {
            _ = try authorizer.authenticate(token: token(payload: payload(exp: nowSeconds - 1)), nowMillis: now)
        }
        #expect(throws: AuthorizationError.expired) {
            _ = try authorizer.authenticate(token: token(payload: payload(exp: nowSeconds)), nowMillis: now)
        }
    }

    @Test("a token whose nbf is in the future is refused as not yet valid")
    func notYetValid() throws {
        #expect(throws: AuthorizationError.notYetValid) {
            _ = try authorizer.authenticate(token: token(payload: payload(extra: #","nbf":\#(nowSeconds + 60)"#)), nowMillis: now)
        }
        _ = try authorizer.authenticate(token: token(payload: payload(extra: #","nbf":\#(nowSeconds)"#)), nowMillis: now)
    }

    @Test("issuer and audience are enforced when configured")
    func issuerAudience() throws {
        let strict = try JWTAuthorizer(secret: secret, issuer: "longlink", audience: "apps")
        let good = token(payload: payload(extra: #","iss":"longlink","aud":["web","apps"]"#))
        #expect(try strict.authenticate(token: good, nowMillis: now).userID == "rider-1")
        for extra in [#","iss":"other","aud":"apps""#, #","iss":"longlink","aud":"web""#, #","aud":"apps""#, #","iss":"longlink""#] {
            #expect(throws: AuthorizationError.self) { _ = try strict.authenticate(token: token(payload: payload(extra: extra)), nowMillis: now) }
        }
    }

    @Test("secrets shorter than 256 bits are refused")
    func weakSecret() {
        #expect(throws: WeakSecret.self) { _ = try JWTAuthorizer(secret: Array("short".utf8)) }
        #expect(throws: WeakSecret.self) { _ = try JWTMinter(secret: []) }
    }

    @Test("HMAC-SHA256 matches RFC 4231 test case 2 and compares in constant time")
    func hmacVector() {
        let mac = HMACSHA256.authenticationCode(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        let hex = mac.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
        #expect(hex == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(HMACSHA256.constantTimeEqual(mac, mac))
        var other = mac
        other[31] ^= 1
        #expect(!HMACSHA256.constantTimeEqual(mac, other))
        #expect(!HMACSHA256.constantTimeEqual(mac, Array(mac.prefix(31))))
    }

    @Test("base64url round-trips and refuses non-canonical text")
    func base64url() {
        for length in 0..<40 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            #expect(Base64URL.decode(Array(Base64URL.encode(bytes).utf8)) == bytes)
        }
        #expect(Base64URL.decode(Array("QQ==".utf8)) == nil)
        #expect(Base64URL.decode(Array("QR".utf8)) == nil)  // non-zero leftover bits
        #expect(Base64URL.decode(Array("Q".utf8)) == nil)
        #expect(Base64URL.decode(Array("QQ".utf8)) == [0x41])
    }
}
