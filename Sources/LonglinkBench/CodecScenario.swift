import LonglinkProtobuf

/// `longlink bench codec`: encode and decode rates of the typical push with `ProtobufFrameCodec`, and its size
/// against the same content as JSON.
enum CodecScenario {
    static func run(_ parameters: BenchParameters) -> [BenchRun] {
        let iterations = parameters.messages
        let rates = CodecBenchmark.run(iterations: iterations)
        let sizes = PushSizeComparison.measure()
        return [
            BenchRun(
                system: "protobuf",
                label: "typical push (taxi 8812 driver_assigned → driver_arriving), \(iterations) iterations",
                figures: [
                    Figure("encodes_per_second", rates.encodesPerSecond, "/s"),
                    Figure("decodes_per_second", rates.decodesPerSecond, "/s"),
                    Figure("push_bytes", Double(sizes.protobufBytes), "B"),
                    Figure("json_bytes", Double(sizes.jsonBytes), "B"),
                    Figure("size_vs_json_percent", 100 * Double(sizes.protobufBytes) / Double(max(1, sizes.jsonBytes)), "%"),
                ]
            )
        ]
    }
}
