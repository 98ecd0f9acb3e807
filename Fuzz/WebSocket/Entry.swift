// libFuzzer entry (built by `make fuzz` with --sanitize=fuzzer and -DLONGLINK_FUZZ) or, in a normal build, a
// runner that replays inputs (crash reproducers, the corpus) and writes the seed corpus.
#if LONGLINK_FUZZ
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    WebSocketFuzz.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
#else
import FuzzSupport

@main
enum WebSocketFuzzRunner {
    static func main() { FuzzRunner.main(name: "websocket", seeds: WebSocketFuzz.seeds(), run: WebSocketFuzz.run) }
}
#endif
