import Foundation
import LonglinkLoop
import LonglinkOpenSSL

/// TLS for `longlink bench --tls`: the client transport factory the bench connections use, and, when bench starts
/// its own gateway, a throwaway CA and a server certificate for 127.0.0.1 made with the `openssl` command.
enum BenchTLS {
    /// The client transport factory: trusts `caFile`, or nothing at all with `insecure` (the caller warns).
    /// `tls12Only`: offer TLS 1.2 at most (resumptions are then abbreviated TLS 1.2 handshakes).
    static func clientFactory(caFile: String?, insecure: Bool, serverName: String, tls12Only: Bool = false) throws -> TLSTransportFactory {
        let trust: TLSConfiguration.Trust = insecure ? .insecureNoVerification : caFile.map { .caFile($0) } ?? .system
        do {
            let context = try TLSContext(.client(trust: trust, maximumVersion: tls12Only ? .tls12 : .tls13))
            return TLSTransportFactory(context: context, defaultServerName: serverName)
        } catch {
            throw BenchError("--tls: \(error.reason)")
        }
    }
}

/// A throwaway CA and a server certificate it issued for `127.0.0.1` and `localhost` (P-256, valid two days), and a
/// session ticket key file, in a fresh temporary directory that `remove()` deletes.
final class BenchCertificates: Sendable {
    /// The directory holding the files.
    let directory: String

    /// Generates the CA and the server certificate; throws when `openssl` fails or is missing.
    init() throws {
        directory = BenchServers.temporaryPath("longlink-bench-certs", "d")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        do {
            try openssl(
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", path("ca.key"),
                "-out", caFile, "-days", "2", "-subj", "/CN=Longlink Bench CA",
                "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"
            )
            try openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", keyFile)
            try openssl("req", "-new", "-key", keyFile, "-out", path("server.csr"), "-subj", "/CN=localhost")
            let extensions = "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
            try Data(extensions.utf8).write(to: URL(fileURLWithPath: path("server.ext")))
            try openssl(
                "x509", "-req", "-in", path("server.csr"), "-CA", caFile, "-CAkey", path("ca.key"), "-CAcreateserial",
                "-out", certificateFile, "-days", "2", "-extfile", path("server.ext")
            )
            try openssl("rand", "-out", ticketKeyFile, "80")
        } catch {
            remove()
            throw error
        }
    }

    /// The CA certificate (what clients trust).
    var caFile: String { path("ca.pem") }
    /// The server certificate.
    var certificateFile: String { path("server.pem") }
    /// The server's private key.
    var keyFile: String { path("server.key") }
    /// One session ticket key (`--tls-ticket-keys`): a gateway restarted by `storm --restart` still resumes.
    var ticketKeyFile: String { path("ticket.key") }

    /// Deletes the directory.
    func remove() { try? FileManager.default.removeItem(atPath: directory) }

    private func path(_ name: String) -> String { directory + "/" + name }

    private func openssl(_ arguments: String...) throws {
        guard let executable = BenchServers.findExecutable("openssl") else {
            throw BenchError("--tls needs the openssl command to make a certificate (Debian package openssl)")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw BenchError("cannot run openssl: \(error)")
        }
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError("openssl \(arguments.prefix(2).joined(separator: " ")) failed: \(String(decoding: message, as: UTF8.self))")
        }
    }
}
