import LonglinkBench
import LonglinkTestSupport
import Testing

/// `CallgrindCalls`: the heap allocations `bench profile` reads from a callgrind file's call lines.
@Suite("Callgrind call counts", .ownThreads)
struct CallgrindCallsTests {
    /// A small callgrind file in the format valgrind 3.19 writes (shortened from a gateway profile): compressed
    /// names (`(id) name` once, `(id)` after), a callee named again from another caller, realloc calling malloc
    /// inside glibc, a recursion level (`'2`), and calls to functions that are not allocators.
    static let sample = """
        # callgrind format
        version: 1
        creator: callgrind-3.19.0
        positions: line
        events: Ir

        ob=(1) /usr/lib/x86_64-linux-gnu/libswiftCore.so
        fl=(1) ???
        fn=(10) swift_slowAlloc
        0 12
        cob=(2) /usr/lib/x86_64-linux-gnu/libc.so.6
        cfi=(2) ???
        cfn=(20) malloc
        calls=300 0
        0 36000
        cfn=(21) posix_memalign
        calls=4 0
        0 900

        ob=(3) /tmp/longlink-stripped
        fl=(3) ???
        fn=(11) $s12LonglinkLoop10ByteBufferV4growyySiF
        0 40
        cob=(2)
        cfi=(2)
        cfn=(22) realloc
        calls=7 0
        0 2100
        cfn=(20)
        calls=5 0
        0 600
        cfn=(23) memcpy
        calls=9 0
        0 90
        fn=(12) protobuf_c_message_unpack
        0 8
        cfn=(24) calloc
        calls=2 0
        0 300
        cfn=(20)
        calls=1 0
        0 120
        fn=(13) recurse'2
        0 4
        cfn=(20) malloc'2
        calls=3 0
        0 360

        ob=(2)
        fl=(2)
        fn=(22)
        0 50
        cfn=(20)
        calls=7 0
        0 800
        fn=(20)
        0 4000
        fn=(25) aligned_alloc
        0 10

        totals: 47000
        """

    @Test("sums the calls to each allocator from every caller, once per call")
    func countsAllocations() {
        let calls = CallgrindCalls.parse(Self.sample[...])
        // malloc: 300 + 5 + 1 + 3 (recursion level) from callers outside the allocator; realloc's own 7 are not
        // counted again.
        #expect(calls.calls["malloc"] == 309)
        #expect(calls.calls["realloc"] == 7)
        #expect(calls.calls["calloc"] == 2)
        #expect(calls.calls["posix_memalign"] == 4)
        #expect(calls.calls["aligned_alloc"] == nil, "defined in the file but never called")
        #expect(calls.calls["memcpy"] == nil, "not an allocator")
        #expect(calls.total == 322)
    }

    @Test("counts any callee asked for")
    func otherCallees() {
        let calls = CallgrindCalls.parse(Self.sample[...], callees: ["memcpy", "malloc"])
        // Only calls from inside the asked callees are left out: realloc is not asked here, so its 7 calls to
        // malloc count.
        #expect(calls.calls == ["memcpy": 9, "malloc": 316])
    }

    @Test("a file without calls counts nothing")
    func empty() {
        #expect(CallgrindCalls.parse("events: Ir\nfn=(1) main\n0 5\ntotals: 5\n").total == 0)
    }
}
