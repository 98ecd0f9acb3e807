import Foundation
import Synchronization

/// Certificates made at test time with the `openssl` command, in a fresh temporary directory:
///
/// - a test CA and a server certificate it issued for `localhost` and `127.0.0.1`;
/// - the same server key with an already expired certificate, and with one for the wrong host name;
/// - a self-signed certificate (no CA);
/// - a client certificate issued by the CA (for client-certificate verification);
/// - a second server certificate ("reloaded") for SIGHUP reload tests;
/// - a server certificate with an RSA key (suites such as `AES128-SHA` need one), issued by the same CA.
public final class TestCertificates: Sendable {
    /// The directory holding every file.
    public let directory: String

    /// Generates everything; throws when `openssl` fails.
    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("longlink-certs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try openssl(
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("ca.key"),
            "-out", path("ca.pem"), "-days", "2", "-subj", "/CN=Longlink Test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"
        )
        try issue("server", subject: "/CN=localhost", san: "DNS:localhost,IP:127.0.0.1", days: 2, usage: "serverAuth")
        try issue("expired", key: "server", subject: "/CN=localhost", san: "DNS:localhost,IP:127.0.0.1", days: -1, usage: "serverAuth")
        try issue("wronghost", key: "server", subject: "/CN=wrong.example", san: "DNS:wrong.example", days: 2, usage: "serverAuth")
        try issue("reloaded", key: "server", subject: "/CN=reloaded", san: "DNS:localhost,IP:127.0.0.1", days: 2, usage: "serverAuth")
        try issue("rsa-server", subject: "/CN=localhost", san: "DNS:localhost,IP:127.0.0.1", days: 2, usage: "serverAuth", rsa: true)
        try issue("client", subject: "/CN=backend-1", san: "DNS:backend-1", days: 2, usage: "clientAuth")
        try openssl(
            "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("selfsigned.key"),
            "-out", path("selfsigned.pem"), "-days", "2", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"
        )
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }

    /// One set for the whole test process (made on first use, its directory removed at exit), for suites that only
    /// need good certificates many times over: generating them takes the `openssl` command about a second. Keep
    /// it in a `static let` rather than making a set of your own there: a static set is never deinitialised, so its
    /// directory would stay behind in the temporary directory.
    public static func shared() throws -> TestCertificates {
        try sharedCertificates.withLock { state in
            if let certificates = state { return certificates }
            let certificates = try TestCertificates()
            state = certificates
            atexit {
                sharedCertificates.withLock { state in
                    if let directory = state?.directory { try? FileManager.default.removeItem(atPath: directory) }
                    state = nil
                }
            }
            return certificates
        }
    }

    /// A file in the directory.
    public func path(_ name: String) -> String { directory + "/" + name }

    /// The CA certificate.
    public var caFile: String { path("ca.pem") }
    /// The good server certificate and key.
    public var serverCertificate: String { path("server.pem") }
    /// The server key (shared by the expired, wrong-host and reloaded certificates).
    public var serverKey: String { path("server.key") }
    /// Expired yesterday.
    public var expiredCertificate: String { path("expired.pem") }
    /// Issued for `wrong.example`.
    public var wrongHostCertificate: String { path("wronghost.pem") }
    /// Self-signed, not issued by the CA.
    public var selfSignedCertificate: String { path("selfsigned.pem") }
    /// The key of the self-signed certificate.
    public var selfSignedKey: String { path("selfsigned.key") }
    /// Client certificate and key issued by the CA.
    public var clientCertificate: String { path("client.pem") }
    /// The client key.
    public var clientKey: String { path("client.key") }
    /// A second good server certificate (CN=reloaded) for the server key.
    public var reloadedCertificate: String { path("reloaded.pem") }

    /// A good server certificate for an RSA key, and that key.
    public var rsaServerCertificate: String { path("rsa-server.pem") }
    /// The RSA server key.
    public var rsaServerKey: String { path("rsa-server.key") }

    private func issue(_ name: String, key: String? = nil, subject: String, san: String, days: Int, usage: String, rsa: Bool = false) throws {
        let keyFile = path("\(key ?? name).key")
        if key == nil && rsa {
            try openssl("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", keyFile)
        } else if key == nil {
            try openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyFile)
        }
        try openssl("req", "-new", "-key", keyFile, "-out", path("\(name).csr"), "-subj", subject)
        let extensions = "subjectAltName=\(san)\nbasicConstraints=CA:FALSE\nextendedKeyUsage=\(usage)\n"
        try Data(extensions.utf8).write(to: URL(fileURLWithPath: path("\(name).ext")))
        try openssl(
            "x509", "-req", "-in", path("\(name).csr"), "-CA", caFile, "-CAkey", path("ca.key"), "-CAcreateserial",
            "-out", path("\(name).pem"), "-days", "\(days)", "-extfile", path("\(name).ext")
        )
    }

    private func openssl(_ arguments: String...) throws {
        // A generous deadline: key generation on a loaded two-core machine can take many seconds.
        let output = try ProcessRunner.run(["openssl"] + arguments, timeout: .seconds(120))
        guard output.status == 0 else {
            let how = output.status == -1 ? "was killed at its deadline" : "exited \(output.status)"
            throw CertificateError(message: "openssl \(arguments.prefix(2).joined(separator: " ")) \(how): \(output.stderr)")
        }
    }
}

/// `openssl` failed while making test certificates.
public struct CertificateError: Error, CustomStringConvertible {
    /// What failed.
    public var message: String
    public var description: String { message }
}

private let sharedCertificates = Mutex<TestCertificates?>(nil)
