import Foundation
import Glibc

/// A real `redis-server` for tests: started on a free loopback port without persistence (`--save ''
/// --appendonly no`), ready once it answers PING, stopped by its PID on `stop()` and in `deinit` (so a failing
/// test does not leave it running).
public final class RedisServer {
    /// The loopback port it listens on.
    public let port: Int
    /// Its process id.
    public let pid: Int32
    private var stopped = false

    /// Starts a server and waits (at most `timeout`) until it answers PING. Throws when redis-server is missing or
    /// does not come up. `port` picks the port (to restart a stopped server where its clients expect it); by
    /// default a free one is found.
    /// `persistentDirectory` turns on the append-only file there (`appendfsync always`), so a restarted server on
    /// the same directory keeps its data.
    public init(port fixedPort: Int? = nil, persistentDirectory: String? = nil, timeout: Duration = .seconds(10)) throws {
        let executable = try Self.executable()
        var lastError = "no attempt"
        for _ in 0..<3 {  // a free port can be taken between probing and binding; try again then
            let port = try fixedPort ?? Self.freePort()
            let persistence = persistentDirectory.map { ["--appendonly", "yes", "--appendfsync", "always", "--dir", $0] }
                ?? ["--appendonly", "no"]
            let pid = try Self.spawn(executable, [
                "--port", String(port), "--bind", "127.0.0.1", "--save", "",
                "--protected-mode", "no", "--loglevel", "warning",
            ] + persistence)
            let deadline = ContinuousClock.now + timeout
            while ContinuousClock.now < deadline {
                if Self.ping(port: port) {
                    self.port = port
                    self.pid = pid
                    return
                }
                var status: Int32 = 0
                if waitpid(pid, &status, WNOHANG) == pid {
                    lastError = "redis-server exited with status \(status)"
                    break
                }
                usleep(20_000)
            }
            Self.kill(pid)
        }
        throw RedisServerError("redis-server did not answer PING: \(lastError)")
    }

    deinit { stop() }

    /// The redis-server binary; throws when it is not installed.
    static func executable() throws -> String {
        guard let executable = ["/usr/bin/redis-server", "/usr/local/bin/redis-server", "/usr/sbin/redis-server"]
            .first(where: { FileManager.default.isExecutableFile(atPath: $0) })
        else { throw RedisServerError("redis-server is not installed (Debian package redis-server)") }
        return executable
    }

    /// `redis://127.0.0.1:PORT`.
    public var url: String { "redis://127.0.0.1:\(port)" }

    /// Stops the server (SIGTERM, then SIGKILL after a second) and reaps it. Idempotent.
    public func stop() {
        guard !stopped else { return }
        stopped = true
        Self.kill(pid)
    }

    /// SIGTERM, then SIGKILL after a second, and reaps.
    static func kill(_ pid: Int32) {
        Glibc.kill(pid, SIGTERM)
        var status: Int32 = 0
        for _ in 0..<100 {
            if waitpid(pid, &status, WNOHANG) == pid { return }
            usleep(10_000)
        }
        Glibc.kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    }

    /// Spawns with an empty signal mask: a test process may block SIGTERM, and the mask survives exec.
    static func spawn(_ executable: String, _ arguments: [String]) throws -> Int32 {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: Int32 = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        guard result == 0 else { throw RedisServerError("posix_spawn redis-server: \(String(cString: strerror(result)))") }
        return pid
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RedisServerError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { throw RedisServerError("bind: \(String(cString: strerror(errno)))") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }

    /// Sends `PING` over a fresh blocking connection and checks for `+PONG`.
    static func ping(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 1, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = loopback(port: port)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return false }
        let request = Array("PING\r\n".utf8)
        guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return false }
        var reply = [UInt8](repeating: 0, count: 16)
        let count = recv(fd, &reply, reply.count, 0)
        return count >= 5 && String(decoding: reply[..<5], as: UTF8.self) == "+PONG"
    }
}

/// Why a test's redis-server could not run.
public struct RedisServerError: Error, CustomStringConvertible {
    /// What went wrong.
    public let description: String
    init(_ description: String) { self.description = description }
}
