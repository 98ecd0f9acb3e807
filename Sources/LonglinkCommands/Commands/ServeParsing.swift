import LonglinkRedis
public import LonglinkServer
import LonglinkStores

// Parsing `serve`'s address and toggle values, with the flag named in the error: the command line's part of
// types that LonglinkServer owns.

extension HostPort {
    /// Parses `HOST:PORT`; `option` names the flag in the error.
    public init(parsing text: String, option: String) throws(CommandLineError) {
        guard let colon = text.lastIndex(of: ":") else {
            throw CommandLineError("--\(option) expects HOST:PORT, got '\(text)'")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = UInt16(text[text.index(after: colon)...]) else {
            throw CommandLineError("--\(option) expects HOST:PORT with a port from 0 to 65535, got '\(text)'")
        }
        self.init(host: host, port: port)
    }
}

extension BrokerChoice {
    /// Parses a toggle value.
    public init(parsing text: String, option: String = "broker") throws(CommandLineError) {
        if text == "local" {
            self = .local
            return
        }
        if text.hasPrefix(RedisClusterAddress.scheme) {
            guard let cluster = RedisClusterAddress(url: text) else {
                throw CommandLineError("--\(option): expected redis-cluster://HOST:PORT[,HOST:PORT…], got '\(text)'")
            }
            self = .redisCluster(cluster)
            return
        }
        guard let address = RedisAddress(url: text) else {
            throw CommandLineError("--\(option) must be 'local', redis://HOST[:PORT] or redis-cluster://HOST:PORT[,…], got '\(text)'")
        }
        self = .redis(address)
    }
}

extension StoreFactory {
    /// Parses a toggle value, with the accepted forms in the error.
    static func specification(_ text: String, option: String = "store") throws(CommandLineError) -> StoreSpecification {
        do {
            return try StoreSpecification(parsing: text)
        } catch {
            throw CommandLineError("--\(option): \(error)")
        }
    }
}
