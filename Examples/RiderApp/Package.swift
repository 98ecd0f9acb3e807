// swift-tools-version:6.1
// An app built on Longlink the way an app team would: a package of its own that depends on the repository by path
// and on the `LonglinkClient` product alone (`import LonglinkClient` is the only Longlink import). Swift 6 language
// mode. Build: `swift build --package-path Examples/RiderApp` (its own .build directory, beside this file).
import PackageDescription

let package = Package(
    name: "RiderApp",
    dependencies: [.package(name: "Longlink", path: "../..")],
    targets: [
        .executableTarget(
            name: "rider-app",
            dependencies: [.product(name: "LonglinkClient", package: "Longlink")],
            path: "Sources/RiderApp",
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
                .enableUpcomingFeature("InternalImportsByDefault"),
            ]
        )
    ],
    swiftLanguageModes: [.v6]
)
