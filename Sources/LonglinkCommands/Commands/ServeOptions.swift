/// The options of `longlink serve`: the gateway's whole configuration surface, also what `longlink config`
/// checks and prints. Defaults live here and nowhere else.
public enum ServeOptions {
    /// Every serve option, grouped as the default config file prints them.
    public static let specs: [OptionSpec] = [
        OptionSpec("listen", default: "127.0.0.1:7070", valueName: "HOST:PORT", help: "plain TCP listener for clients"),
        OptionSpec(
            "store",
            default: "sqlite:data/longlink.sqlite",
            valueName: "STORE",
            help: "order store: memory | sqlite:PATH | redis://HOST:PORT/DB | redis-cluster://HOST:PORT[,HOST:PORT…]"
        ),
        OptionSpec(
            "broker",
            default: "local",
            valueName: "BROKER",
            help: "local (one node) | redis://HOST:PORT (nodes sharing one Redis) | redis-cluster://HOST:PORT[,…] (sharded pub/sub)"
        ),
        OptionSpec("redis-password-file", valueName: "FILE", help: "Redis password (else LONGLINK_REDIS_PASSWORD)"),
        OptionSpec("redis-channel-shards", default: "0", valueName: "N", help: "0 = one Redis channel per route; N = N sharded channels"),
        OptionSpec(
            "redis-wait-replicas",
            default: "0",
            valueName: "N",
            help: "acknowledge a change only after WAIT confirmed N Redis replicas have it (0 = on the master)"
        ),
        OptionSpec("redis-wait-timeout", default: "500ms", valueName: "DURATION", help: "how long WAIT may block per batch"),
        OptionSpec(
            "shadow-store",
            valueName: "STORE",
            help: "run a second store beside the primary and report differences"
        ),
        OptionSpec("state-machines", valueName: "FILE", help: "JSON file of business-line state machines (default: built-in)"),
        OptionSpec("node-id", valueName: "ID", help: "this node's id in connected frames (default: hostname-pid)"),
        OptionSpec("loops", default: "0", valueName: "N", help: "event loops (threads); 0 = one per core"),
        OptionSpec("max-connections", default: "19000", valueName: "N", help: "connections per process (below the file limit)"),
        OptionSpec("max-subscriptions", default: "128", valueName: "N", help: "subscriptions per connection"),
        OptionSpec("max-frame-size", default: "64KiB", valueName: "BYTES", help: "largest inbound frame"),
        OptionSpec("outbound-limit", default: "1MiB", valueName: "BYTES", help: "queued bytes per connection before the slow policy applies"),
        OptionSpec("slow-policy", default: "disconnect", valueName: "POLICY", help: "disconnect | coalesce, for readers over the outbound limit"),
        OptionSpec(
            "flush", default: "ring", valueName: "MODE",
            help: "ring: each loop sends every pending connection with one io_uring system call | each: one send per connection"
        ),
        OptionSpec("ping-interval", default: "25s", valueName: "DURATION", help: "server ping interval for clients that ask for none"),
        OptionSpec(
            "min-ping-interval", valueName: "DURATION",
            help: "shortest ping interval a client may ask for (default 10s, or --ping-interval if shorter)"
        ),
        OptionSpec(
            "max-ping-interval", valueName: "DURATION",
            help: "longest ping interval a client may ask for (default 5m, or --ping-interval if longer); 0 = fixed interval"
        ),
        OptionSpec("pong-timeout", default: "10s", valueName: "DURATION", help: "silence after a ping before the connection is closed"),
        OptionSpec("handshake-timeout", default: "10s", valueName: "DURATION", help: "time allowed for the connect frame"),
        OptionSpec("drain-period", default: "10s", valueName: "DURATION", help: "time over which SIGTERM disconnects clients"),
        OptionSpec("retention-records", default: "1000", valueName: "N", help: "history records kept per order"),
        OptionSpec("retention-age", default: "24h", valueName: "DURATION", help: "history age kept per order"),
        OptionSpec("terminal-ttl", default: "24h", valueName: "DURATION", help: "how long finished orders are kept"),
        OptionSpec("log-level", default: "info", valueName: "LEVEL", help: "trace | debug | info | notice | warning | error"),
        OptionSpec(
            "metrics-listen",
            default: "127.0.0.1:9170",
            valueName: "HOST:PORT",
            help: "operations listener: /metrics, /healthz, /readyz, admin API and page ('off' disables)"
        ),
        OptionSpec("log-format", default: "auto", valueName: "FORMAT", help: "auto (text on a terminal, else JSON lines) | json | text"),
    ] + ServeAPIOptions.specs + ServePresenceOptions.specs + ServeSecurityConfiguration.specs
        + ServeWebSocketConfiguration.specs
}
