import Foundation
import Glibc
import LonglinkLoop
import Synchronization

/// `storm --restart`: the gateway bench started for the run, on a SQLite store in a temporary directory, killed
/// with SIGKILL at the cut (no drain, no goodbye frames: a crash) and started again on the same ports and the same
/// store file. Used from the coordinating thread; `stop()` stops whichever child runs last.
final class BenchGatewayRestarter: Sendable {
    private let executable: String
    private let current: Mutex<BenchServer>

    /// Takes over `gateway` (started by `BenchServers.startGateway`, which recorded its flags).
    init(executable: String, gateway: BenchServer) {
        self.executable = executable
        self.current = Mutex(gateway)
    }

    /// SIGKILL, then waits (at most 5 s) until the process is gone and reaped.
    func kill() {
        let child = current.withLock { $0.child }
        child?.signal(SIGKILL)
        _ = child?.waitForExit(timeout: .seconds(5))
    }

    /// Starts the gateway again with the same flags on the same plain and TLS ports, retrying while the ports are
    /// still held by the dying process's sockets; returns once it listens.
    func restart(timeout: Duration = .seconds(20)) throws -> BenchServer {
        let old = current.withLock { $0 }
        var flags = old.launchFlags ?? BenchServers.gatewayFlags
        if let tls = old.tlsAddress, let index = flags.firstIndex(of: "--tls-listen"), index + 1 < flags.count {
            flags[index + 1] = tls.description
        }
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                let server = try BenchServers.startGateway(
                    executable: executable,
                    flags: flags,
                    listen: "127.0.0.1:\(old.address.port)",
                    timeout: deadline - ContinuousClock.now
                )
                current.withLock { $0 = server }
                return server
            } catch {
                guard ContinuousClock.now + .milliseconds(50) < deadline else { throw error }
                usleep(50_000)
            }
        }
    }

    /// The gateway running now.
    var gateway: BenchServer { current.withLock { $0 } }

    /// Stops the gateway running now (the first one is stopped by whoever started it).
    func stop() { current.withLock { $0 }.stop() }
}
