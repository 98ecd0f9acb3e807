import LonglinkLoop
import LonglinkRedis

/// Blocking checks against a Redis server, for start-up and figures (not the hot path).
enum RedisProbe {
    /// Whether the server at `address` answers PING now.
    static func ping(_ address: SocketAddress) -> Bool {
        guard let connection = try? RedisBlockingConnection(RedisAddress(host: address.host, port: address.port), timeout: .seconds(1))
        else { return false }
        return (try? connection.command(["PING"]))?.string == "PONG"
    }

    /// The server's process id from `INFO server`, to read its memory and CPU from /proc.
    static func processID(_ address: SocketAddress) -> Int32? {
        guard let connection = try? RedisBlockingConnection(RedisAddress(host: address.host, port: address.port)),
            let info = (try? connection.command(["INFO", "server"]))?.string
        else { return nil }
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("process_id:") {
            return Int32(line.dropFirst("process_id:".count))
        }
        return nil
    }
}
