internal import CLonglinkOpenSSL
import Glibc

/// Sets up a server context's session tickets (`TLSConfiguration.SessionTickets`): random rotating keys (kept
/// across a reload), keys from a shared file, or none.
enum TicketKeys {
    /// Bytes per key in a key file: 16-byte name, 32-byte HMAC key, 32-byte AES key (nginx's layout).
    static let keyLength = 80
    /// The most keys a file may hold.
    static let maximumKeys = 8

    static func install(_ tickets: TLSConfiguration.SessionTickets, on context: OpaquePointer, previous: OpaquePointer?) throws(TLSError) {
        switch tickets {
        case .disabled:
            CLonglinkOpenSSL_CTX_disable_resumption(context)
        case .rotating(let period):
            if let previous, CLonglinkOpenSSL_CTX_share_ticket_keys(context, previous) == 1 { return }
            let seconds = max(1, period.components.seconds)
            guard CLonglinkOpenSSL_CTX_use_ticket_keys(context, nil, 0, Int(seconds)) == 1 else {
                throw TLSError("cannot make session ticket keys: \(OpenSSLErrors.last())")
            }
        case .keyFile(let path):
            var keys = try read(path)
            defer { for index in keys.indices { keys[index] = 0 } }
            let installed = keys.withUnsafeBufferPointer { bytes in
                CLonglinkOpenSSL_CTX_use_ticket_keys(context, bytes.baseAddress, bytes.count / keyLength, 0)
            }
            guard installed == 1 else { throw TLSError("cannot use the session ticket keys of \(path): \(OpenSSLErrors.last())") }
        }
    }

    /// The file's bytes: one to eight 80-byte keys.
    static func read(_ path: String) throws(TLSError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw TLSError("cannot read session ticket key file \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while bytes.count <= keyLength * maximumKeys {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw TLSError("cannot read session ticket key file \(path): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            bytes += chunk.prefix(count)
        }
        for index in chunk.indices { chunk[index] = 0 }
        guard !bytes.isEmpty, bytes.count % keyLength == 0, bytes.count <= keyLength * maximumKeys else {
            throw TLSError(
                "session ticket key file \(path) must hold 1 to \(maximumKeys) keys of \(keyLength) bytes each "
                    + "(make one with: openssl rand 80 > \(path)), not \(bytes.count) bytes"
            )
        }
        return bytes
    }
}
