// swift-tools-version:6.1
// Longlink: a real-time push gateway. The target graph below is the architecture:
// LonglinkCore (domain, seams, no I/O) ← LonglinkLoop (epoll) ← adapters (one C module each) ← Gateway (the pipeline)
// ← Server (the composition of a running gateway) ← Commands (the CLI). Rules: CONTRIBUTING.md.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Longlink",
    products: [
        .executable(name: "longlink", targets: ["longlink"]),
        .library(name: "LonglinkClient", targets: ["LonglinkClient"]),
        .library(name: "LonglinkCore", targets: ["LonglinkCore"]),
    ],
    targets: [
        // MARK: C shims: one small module per C library; their types never leave the adapter importing them.
        .target(name: "CLonglinkLinux", path: "CShims/CLonglinkLinux", cSettings: [.define("_GNU_SOURCE")]),
        .target(
            name: "CLonglinkProto",
            path: "CShims/CLonglinkProto",
            linkerSettings: [.linkedLibrary("protobuf-c")]
        ),
        .target(
            name: "CLonglinkOpenSSL",
            path: "CShims/CLonglinkOpenSSL",
            linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]
        ),
        .target(
            name: "CLonglinkSQLite",
            path: "CShims/CLonglinkSQLite",
            linkerSettings: [.linkedLibrary("sqlite3")]
        ),
        .target(
            name: "CLonglinkHiredis",
            path: "CShims/CLonglinkHiredis",
            linkerSettings: [.linkedLibrary("hiredis")]
        ),
        // Tooling only: the load generator's io_uring reader on raw system calls (LonglinkBench imports it).
        .target(name: "CLonglinkBenchUring", path: "CShims/CLonglinkBenchUring"),

        // MARK: Swift modules.
        .target(name: "LonglinkCore", path: "Sources/LonglinkCore", swiftSettings: swiftSettings),
        .target(
            name: "LonglinkLoop",
            dependencies: ["LonglinkCore", "CLonglinkLinux"],
            path: "Sources/LonglinkLoop",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LonglinkWebSocket",
            dependencies: ["LonglinkCore", "LonglinkLoop"],
            path: "Sources/LonglinkWebSocket",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LonglinkProtobuf",
            dependencies: ["LonglinkCore", "CLonglinkProto"],
            path: "Sources/LonglinkProtobuf",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LonglinkOpenSSL",
            dependencies: ["LonglinkCore", "LonglinkLoop", "LonglinkJSON", "CLonglinkOpenSSL"],
            path: "Sources/LonglinkOpenSSL",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LonglinkSQLite",
            dependencies: ["LonglinkCore", "CLonglinkSQLite"],
            path: "Sources/LonglinkSQLite",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LonglinkRedis",
            dependencies: ["LonglinkCore", "LonglinkLoop", "CLonglinkHiredis"],
            path: "Sources/LonglinkRedis",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LonglinkBench",
            dependencies: [
                "LonglinkCore", "LonglinkLoop", "LonglinkProtobuf", "LonglinkSQLite", "LonglinkStores", "LonglinkRedis",
                "LonglinkOpenSSL", "LonglinkWebSocket", "LonglinkJSON", "CLonglinkBenchUring",
            ],
            path: "Sources/LonglinkBench",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LonglinkStores",
            dependencies: ["LonglinkCore", "LonglinkJSON"],
            path: "Sources/LonglinkStores",
            swiftSettings: swiftSettings
        ),
        .target(name: "LonglinkJSON", path: "Sources/LonglinkJSON", swiftSettings: swiftSettings),
        .target(
            name: "LonglinkHTTP",
            dependencies: ["LonglinkCore", "LonglinkLoop", "LonglinkJSON"],
            path: "Sources/LonglinkHTTP",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LonglinkGateway",
            dependencies: ["LonglinkCore", "LonglinkLoop", "LonglinkStores"],
            path: "Sources/LonglinkGateway",
            swiftSettings: swiftSettings
        ),
        // The product's tooling around a running gateway: the operations listener (metrics, health, admin API and
        // page) and the backend HTTP API. The pipeline (LonglinkGateway) knows nothing of HTTP or JSON.
        .target(
            name: "LonglinkOperations",
            dependencies: ["LonglinkCore", "LonglinkLoop", "LonglinkGateway", "LonglinkStores", "LonglinkHTTP", "LonglinkJSON"],
            path: "Sources/LonglinkOperations",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LonglinkInspect",
            dependencies: ["LonglinkCore", "LonglinkProtobuf", "LonglinkJSON"],
            path: "Sources/LonglinkInspect",
            swiftSettings: swiftSettings
        ),
        // The running gateway's composition: picks the store, broker and presence, starts the writer, the gateway and
        // the operations listeners (what `serve` runs, and what tests and `bench` run in-process).
        .target(
            name: "LonglinkServer",
            dependencies: [
                "LonglinkCore", "LonglinkLoop", "LonglinkProtobuf", "LonglinkSQLite", "LonglinkStores", "LonglinkGateway",
                "LonglinkOperations", "LonglinkJSON", "LonglinkRedis",
            ],
            path: "Sources/LonglinkServer",
            swiftSettings: swiftSettings
        ),
        // The command line: parses options and calls LonglinkServer (serve) or the client, bench and inspect modules.
        .target(
            name: "LonglinkCommands",
            dependencies: [
                "LonglinkCore", "LonglinkLoop", "LonglinkProtobuf", "LonglinkSQLite", "LonglinkStores", "LonglinkGateway",
                "LonglinkClient", "LonglinkOpenSSL", "LonglinkInspect", "LonglinkBench", "LonglinkHTTP", "LonglinkJSON", "LonglinkRedis",
                "LonglinkWebSocket", "LonglinkServer", "LonglinkOperations",
            ],
            path: "Sources/LonglinkCommands",
            swiftSettings: swiftSettings
        ),
        .target(
            name: "LonglinkClient",
            dependencies: ["LonglinkCore", "LonglinkLoop", "LonglinkProtobuf", "LonglinkOpenSSL"],
            path: "Sources/LonglinkClient",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "longlink",
            dependencies: ["LonglinkCommands"],
            path: "Sources/longlink",
            swiftSettings: swiftSettings
        ),

        // MARK: Fuzz targets (libFuzzer): `make fuzz` builds them with --sanitize=fuzzer -DLONGLINK_FUZZ; a normal build
        // makes corpus replay runners of the same code (`longlink-fuzz-frames Fuzz/corpus/frames`).
        .target(name: "FuzzSupport", path: "Fuzz/Support", swiftSettings: swiftSettings),
        .executableTarget(
            name: "longlink-fuzz-frames",
            dependencies: ["LonglinkCore", "LonglinkProtobuf", "FuzzSupport"],
            path: "Fuzz/FrameDecoder",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "longlink-fuzz-jwt",
            dependencies: ["LonglinkCore", "LonglinkOpenSSL", "FuzzSupport"],
            path: "Fuzz/JWTParser",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "longlink-fuzz-peer",
            dependencies: ["LonglinkCore", "LonglinkGateway", "LonglinkProtobuf", "FuzzSupport"],
            path: "Fuzz/PeerStateMachine",
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "longlink-fuzz-websocket",
            dependencies: ["LonglinkWebSocket", "FuzzSupport"],
            path: "Fuzz/WebSocket",
            swiftSettings: swiftSettings
        ),

        // MARK: Tests: one target per module, shared contract suites in LonglinkTestSupport.
        .target(
            name: "LonglinkTestSupport",
            dependencies: [
                "LonglinkCore", "LonglinkLoop", "LonglinkProtobuf",
                // GatewayHarness: an in-process gateway for the gateway and operations suites.
                "LonglinkServer", "LonglinkGateway", "LonglinkStores", "LonglinkClient", "LonglinkOperations",
                "LonglinkJSON",  // the admin tap's Server-Sent Events (HTTPTestClient+Events)
            ],
            path: "Tests/LonglinkTestSupport",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LonglinkCoreTests",
            dependencies: ["LonglinkCore", "LonglinkTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LonglinkLoopTests",
            dependencies: ["LonglinkLoop", "LonglinkTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LonglinkProtobufTests",
            dependencies: ["LonglinkProtobuf", "LonglinkTestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        // Spawned by LonglinkSQLiteTests' crash test, which SIGKILLs it mid-stream (built by `swift build`).
        .executableTarget(
            name: "longlink-sqlite-crash-writer",
            dependencies: ["LonglinkCore", "LonglinkSQLite"],
            path: "Tests/SQLiteCrashWriter",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LonglinkOpenSSLTests",
            dependencies: ["LonglinkOpenSSL", "LonglinkCore", "LonglinkTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LonglinkSQLiteTests",
            dependencies: ["LonglinkSQLite", "LonglinkTestSupport"],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LonglinkStoresTests",
            dependencies: ["LonglinkStores", "LonglinkSQLite", "LonglinkTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LonglinkGatewayTests",
            dependencies: [
                "LonglinkGateway", "LonglinkCommands", "LonglinkClient", "LonglinkProtobuf", "LonglinkStores",
                "LonglinkTestSupport", "LonglinkHTTP", "LonglinkJSON", "LonglinkLoop", "LonglinkServer", "LonglinkOperations",
            ],
            swiftSettings: swiftSettings
        ),
        // The operations listener (metrics, health, admin API and page) and its ring of recent changes, on a real
        // in-process gateway (GatewayHarness).
        .testTarget(
            name: "LonglinkOperationsTests",
            dependencies: [
                "LonglinkOperations", "LonglinkServer", "LonglinkGateway", "LonglinkClient", "LonglinkCore", "LonglinkHTTP",
                "LonglinkJSON", "LonglinkStores", "LonglinkTestSupport",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LonglinkSecurityTests",
            dependencies: [
                "LonglinkGateway", "LonglinkCommands", "LonglinkClient", "LonglinkProtobuf", "LonglinkStores", "LonglinkOpenSSL",
                "LonglinkLoop", "LonglinkCore", "LonglinkTestSupport", "LonglinkServer", "LonglinkOperations",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "LonglinkJSONTests", dependencies: ["LonglinkJSON"], swiftSettings: swiftSettings),
        .testTarget(
            name: "LonglinkHTTPTests",
            dependencies: ["LonglinkHTTP", "LonglinkLoop", "LonglinkTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LonglinkClientTests",
            dependencies: ["LonglinkClient", "LonglinkTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LonglinkRedisTests",
            dependencies: ["LonglinkRedis", "LonglinkLoop", "LonglinkTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LonglinkBenchTests",
            dependencies: [
                "LonglinkBench", "LonglinkCommands", "LonglinkRedis", "LonglinkLoop", "LonglinkCore", "LonglinkGateway",
                "LonglinkStores", "LonglinkTestSupport", "LonglinkServer", "LonglinkProtobuf",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LonglinkScaleOutTests",
            dependencies: [
                "LonglinkCommands", "LonglinkRedis", "LonglinkGateway", "LonglinkStores", "LonglinkSQLite", "LonglinkLoop",
                "LonglinkProtobuf", "LonglinkCore", "LonglinkTestSupport", "LonglinkServer",
            ],
            swiftSettings: swiftSettings
        ),
        // Redis Cluster: the adapter's cluster client, store and broker, and gateway nodes on a real local cluster.
        .testTarget(
            name: "LonglinkRedisClusterTests",
            dependencies: [
                "LonglinkRedis", "LonglinkCommands", "LonglinkGateway", "LonglinkStores", "LonglinkLoop", "LonglinkProtobuf",
                "LonglinkCore", "LonglinkSQLite", "LonglinkTestSupport", "LonglinkServer",
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LonglinkInspectTests",
            dependencies: [
                "LonglinkInspect", "LonglinkCommands", "LonglinkClient", "LonglinkGateway", "LonglinkStores",
                "LonglinkProtobuf", "LonglinkTestSupport", "LonglinkServer",
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LonglinkWebSocketTests",
            dependencies: [
                "LonglinkWebSocket", "LonglinkLoop", "LonglinkCore", "LonglinkProtobuf", "LonglinkTestSupport",
                "LonglinkGateway", "LonglinkStores", "LonglinkServer", "LonglinkOperations",
                "LonglinkOpenSSL",  // wss in the transport contract
            ],
            exclude: ["Scripts"],
            swiftSettings: swiftSettings
        ),
        // The example app (Examples/RiderApp, its own package) run against a gateway process; `make test` builds it.
        .testTarget(
            name: "LonglinkExamplesTests",
            dependencies: ["LonglinkTestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LonglinkCommandsTests",
            dependencies: ["LonglinkCommands", "LonglinkSQLite", "LonglinkStores", "LonglinkTestSupport", "LonglinkServer", "LonglinkOperations"],
            swiftSettings: swiftSettings
        ),
        // Issue 19's allocation budget. The counter interposes malloc & co. in the executable that links it: test
        // programs only, never the longlink executable or a library product. The budget program runs a gateway in its
        // own process (LonglinkAllocationTests in debug, `make test-release-budgets` in release).
        .target(name: "CLonglinkAllocationCounter", path: "Tests/CLonglinkAllocationCounter"),
        .executableTarget(
            name: "longlink-allocation-budget",
            dependencies: [
                "CLonglinkAllocationCounter", "LonglinkServer", "LonglinkGateway", "LonglinkStores", "LonglinkCore",
                "LonglinkLoop", "LonglinkProtobuf",
            ],
            path: "Tests/AllocationBudget",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "LonglinkAllocationTests",
            dependencies: ["LonglinkTestSupport"],
            swiftSettings: swiftSettings
        ),
    ]
)
