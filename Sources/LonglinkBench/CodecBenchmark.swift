import LonglinkCore
import LonglinkProtobuf

/// In-process speed of the hot path: encoding and decoding the typical push with `ProtobufFrameCodec`.
/// `longlink bench codec` prints it; compare figures from the same run only.
public enum CodecBenchmark {
    /// Encodes the typical push `iterations` times into one reused buffer (prefix and body), then decodes its
    /// body `iterations` times (Swift values out, validated), and returns both rates in frames per second.
    public static func run(iterations: Int) -> (encodesPerSecond: Double, decodesPerSecond: Double) {
        let iterations = Swift.max(iterations, 1)
        let codec = ProtobufFrameCodec()
        let frame = PushSizeComparison.typicalPush()
        let clock = ContinuousClock()
        var buffer = ByteBuffer(capacity: 256)
        var checksum = 0

        let encodeTime = clock.measure {
            for _ in 0..<iterations {
                buffer.clear()
                do { try codec.encode(frame, into: &buffer) } catch { preconditionFailure("\(error)") }
                checksum &+= buffer.readableBytes
            }
        }

        // The body without its prefix, decoded in place each time (framing is not part of the measure).
        var body: [UInt8] = []
        do {
            _ = try FrameReader().nextFrame(in: &buffer) { (bytes) throws(FrameError) in body = Array(bytes) }
        } catch {
            preconditionFailure("\(error)")
        }
        let decodeTime = body.withUnsafeBytes { bytes in
            clock.measure {
                for _ in 0..<iterations {
                    do {
                        if case .push(let push) = try codec.decodeServerFrame(body: bytes) {
                            checksum &+= Int(push.record.position.offset)
                        }
                    } catch {
                        preconditionFailure("\(error)")
                    }
                }
            }
        }
        precondition(checksum != 0)
        let encodeRate = Double(iterations) / seconds(encodeTime)
        let decodeRate = Double(iterations) / seconds(decodeTime)
        return (encodeRate, decodeRate)
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Swift.max(Double(seconds) + Double(attoseconds) / 1e18, 1e-9)
    }
}
