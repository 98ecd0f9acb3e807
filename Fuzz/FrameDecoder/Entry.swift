// libFuzzer entry (built by `make fuzz` with --sanitize=fuzzer and -DLONGLINK_FUZZ) or, in a normal build, a
// runner that replays inputs (crash reproducers, the corpus) and writes the seed corpus.
#if LONGLINK_FUZZ
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FrameDecoderFuzz.run(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
#else
import FuzzSupport

@main
enum FrameDecoderFuzzRunner {
    static func main() { FuzzRunner.main(name: "frames", seeds: FrameDecoderFuzz.seeds(), run: FrameDecoderFuzz.run) }
}
#endif
