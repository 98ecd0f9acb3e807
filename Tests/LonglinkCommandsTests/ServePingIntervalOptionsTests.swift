import LonglinkCommands
import LonglinkTestSupport
import Testing

@Suite("serve: ping interval bounds", .ownThreads)
struct ServePingIntervalOptionsTests {
    func configuration(_ arguments: [String]) throws -> ServeConfiguration {
        try ServeConfiguration(options: OptionResolver(specs: ServeOptions.specs).resolve(arguments: arguments, environment: [:]))
    }

    @Test("defaults are 10 s … 5 min around the 25 s interval, widening to hold a given interval")
    func defaults() throws {
        #expect(try configuration([]).pingIntervalBounds == .seconds(10)...(.seconds(300)))
        #expect(try configuration(["--ping-interval", "2s"]).pingIntervalBounds == .seconds(2)...(.seconds(300)))
        #expect(try configuration(["--ping-interval", "10m"]).pingIntervalBounds == .seconds(10)...(.seconds(600)))
    }

    @Test("given bounds are used; --max-ping-interval 0 fixes the interval; bounds that exclude the interval fail")
    func given() throws {
        let custom = try configuration(["--min-ping-interval", "1s", "--max-ping-interval", "2m", "--ping-interval", "5s"])
        #expect(custom.pingIntervalBounds == .seconds(1)...(.seconds(120)))
        #expect(try configuration(["--max-ping-interval", "0"]).pingIntervalBounds == nil)
        #expect(throws: CommandLineError.self) { _ = try configuration(["--min-ping-interval", "30s"]) }
        #expect(throws: CommandLineError.self) { _ = try configuration(["--max-ping-interval", "20s"]) }
    }
}
