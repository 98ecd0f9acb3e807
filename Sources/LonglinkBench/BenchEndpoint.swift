import Glibc
import LonglinkLoop
import Synchronization

/// Where and how the benchmark's Longlink connections connect: the gateway's address, the client transport
/// factory with `--tls` or for the WebSocket runs of `--transport ws` (nil: plain TCP on the raw fd), and the
/// loopback source addresses with `--source-addresses`. Shared by every loop.
struct BenchEndpoint: Sendable {
    /// The gateway.
    var address: SocketAddress
    /// With `--tls` or over WebSocket: makes the client transport for each connected fd.
    var transport: (any TransportFactory)?
    /// How run labels name the transport: empty for plain TCP, `" over TLS"`, `" over WebSocket"`, ...
    var label: String = ""
    /// With `--source-addresses`: the local addresses connections bind to before connecting.
    var sources: BenchSources?

    /// Starts the non-blocking connect of connection `index`: from source address `index mod N` when sources are
    /// set, falling over to the next ones when that source cannot be used (`EADDRNOTAVAIL`: no such local
    /// address, or every ephemeral port to this server taken; `EADDRINUSE` on kernels without
    /// `IP_BIND_ADDRESS_NO_PORT`).
    func connect(index: Int) throws(IOError) -> (fd: CInt, connected: Bool) {
        guard let sources else { return try Socket.connect(to: address) }
        let count = sources.addresses.count
        let first = ((index % count) + count) % count
        var failure = IOError(errno: EADDRNOTAVAIL, function: "bind")
        for attempt in 0..<count {
            let slot = (first + attempt) % count
            do {
                let result = try Socket.connect(to: address, from: sources.addresses[slot])
                sources.record(slot: slot, fallovers: attempt)
                return result
            } catch {
                guard error.errno == EADDRNOTAVAIL || error.errno == EADDRINUSE else { throw error }
                failure = error
            }
        }
        sources.recordExhausted()
        throw failure
    }
}

/// The source addresses of `--source-addresses` and how they were used (all loops count into it).
final class BenchSources: Sendable {
    /// The addresses, port 0.
    let addresses: [SocketAddress]
    private let usage: Mutex<Usage>

    private struct Usage {
        var connections: [Int]
        var fallovers = 0
        var exhausted = 0
    }

    /// What the run did with the sources.
    struct Summary: Sendable, Hashable {
        /// Source addresses configured.
        var configured: Int
        /// Source addresses at least one connection used.
        var used: Int
        /// Connections that fell over to another source after `EADDRNOTAVAIL`/`EADDRINUSE`.
        var fallovers: Int
        /// Connects that found no usable source at all.
        var exhausted: Int
    }

    /// Sources from numeric IPv4 addresses (see `BenchParameters.sourceAddresses`).
    init(_ hosts: [String]) throws(IOError) {
        var addresses: [SocketAddress] = []
        for host in hosts { addresses.append(try SocketAddress(ipAddress: host, port: 0)) }
        self.addresses = addresses
        usage = Mutex(Usage(connections: Array(repeating: 0, count: addresses.count)))
    }

    func record(slot: Int, fallovers: Int) {
        usage.withLock { usage in
            usage.connections[slot] += 1
            usage.fallovers += fallovers > 0 ? 1 : 0
        }
    }

    func recordExhausted() {
        usage.withLock { $0.exhausted += 1 }
    }

    /// The counts so far.
    var summary: Summary {
        usage.withLock { usage in
            Summary(
                configured: addresses.count,
                used: usage.connections.filter { $0 > 0 }.count,
                fallovers: usage.fallovers,
                exhausted: usage.exhausted
            )
        }
    }

    /// The addresses as text, shortened to `first…last (N)` when they are many.
    var description: String {
        let hosts = addresses.map(\.host)
        guard hosts.count > 3, let first = hosts.first, let last = hosts.last else { return hosts.joined(separator: ", ") }
        return "\(first)…\(last) (\(hosts.count))"
    }
}
