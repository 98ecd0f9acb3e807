import Glibc

/// Reads files under `/proc`. They report a size of 0 and the kernel produces them a page at a time, and
/// Foundation's `String(contentsOfFile:)` returns only the first page (4,050 of 2.4 MB bytes of `/proc/net/tcp` with
/// 16,000 sockets open, measured): they are read here in chunks until `read` returns 0. Used by the gateway's
/// process metrics and by the bench.
public enum ProcFile {
    /// The whole text of `path`, or nil when it cannot be opened or read.
    public static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
