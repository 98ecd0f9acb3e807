import Foundation
import Glibc
import LonglinkLoop

/// Finds the local process that listens on a TCP port, so a benchmark against a gateway it did not start
/// (`--server 127.0.0.1:PORT`) still reports that server's CPU and memory: the listening socket's inode from
/// `/proc/net/tcp` (and `tcp6`), then the process whose descriptors include `socket:[inode]`.
enum ListeningProcess {
    /// The pid of the process listening on `port` on this machine, or nil (not local, gone, or not readable).
    static func pid(listeningOn port: Int) -> Int32? {
        let inodes = listeningInodes(port: port)
        guard !inodes.isEmpty,
            let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc")
        else { return nil }
        let targets = Set(inodes.map { "socket:[\($0)]" })
        for entry in entries {
            guard let pid = Int32(entry),
                let fds = try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(entry)/fd")
            else { continue }
            for fd in fds {
                if let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(entry)/fd/\(fd)"),
                    targets.contains(link)
                {
                    return pid
                }
            }
        }
        return nil
    }

    /// Inodes of sockets in state LISTEN (0A) on `port`, from `/proc/net/tcp` and `/proc/net/tcp6`.
    static func listeningInodes(port: Int) -> [String] {
        let hexPort = String(port, radix: 16, uppercase: true)
        let padded = String(repeating: "0", count: max(0, 4 - hexPort.count)) + hexPort
        var inodes: [String] = []
        for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
            guard let text = ProcFile.read(table) else { continue }
            for line in text.split(separator: "\n").dropFirst() {
                // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
                let fields = line.split(separator: " ", omittingEmptySubsequences: true)
                guard fields.count > 9, fields[3] == "0A", fields[1].hasSuffix(":" + padded) else { continue }
                inodes.append(String(fields[9]))
            }
        }
        return inodes
    }
}
