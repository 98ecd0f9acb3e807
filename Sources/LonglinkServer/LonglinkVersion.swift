/// The version of this build.
public enum LonglinkVersion {
    /// Semantic version.
    public static let current = "0.1.0"
    /// The wire protocol version spoken.
    public static let protocolVersion: UInt32 = 1
}
