/// BLAKE2b (RFC 7693), unkeyed, streaming: what minisign signs (its "ED" signatures sign the
/// BLAKE2b-512 of the file, so a file of any size is signed without holding it). swift-crypto
/// has no BLAKE2b. Checked against RFC 7693's vector and `b2sum`.
public struct BLAKE2b {
    static let iv: [UInt64] = [
        0x6a09_e667_f3bc_c908, 0xbb67_ae85_84ca_a73b, 0x3c6e_f372_fe94_f82b, 0xa54f_f53a_5f1d_36f1,
        0x510e_527f_ade6_82d1, 0x9b05_688c_2b3e_6c1f, 0x1f83_d9ab_fb41_bd6b, 0x5be0_cd19_137e_2179,
    ]
    static let sigma: [[Int]] = [
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
        [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4], [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
        [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13], [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
        [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11], [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
        [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5], [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
    ]

    private var h: [UInt64]
    private var block = [UInt8](repeating: 0, count: 128)
    private var filled = 0
    private var total: UInt64 = 0  // bytes compressed so far (files past 2^64 bytes are not a concern)
    public let outputLength: Int

    public init(outputLength: Int = 64) {
        precondition((1...64).contains(outputLength))
        self.outputLength = outputLength
        h = Self.iv
        h[0] ^= 0x0101_0000 ^ UInt64(outputLength)
    }

    public mutating func update(_ bytes: some Collection<UInt8>) {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil { update(Array(bytes)) }
    }

    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < bytes.count {
            // A full block is compressed only when more follows: the last block is flagged.
            if filled == 128 {
                total &+= 128
                compress(last: false)
                filled = 0
            }
            let n = min(128 - filled, bytes.count - offset)
            block.withUnsafeMutableBytes { dst in
                dst.baseAddress!.advanced(by: filled).copyMemory(from: bytes.baseAddress!.advanced(by: offset), byteCount: n)
            }
            filled += n
            offset += n
        }
    }

    public mutating func finalize() -> [UInt8] {
        total &+= UInt64(filled)
        for i in filled..<128 { block[i] = 0 }
        compress(last: true)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for word in h { for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: word >> (8 * UInt64(i)))) } }
        return Array(out.prefix(outputLength))
    }

    public static func hash(_ bytes: some Collection<UInt8>, outputLength: Int = 64) -> [UInt8] {
        var b = BLAKE2b(outputLength: outputLength)
        b.update(bytes)
        return b.finalize()
    }

    @inline(__always) private static func rotr(_ x: UInt64, _ n: UInt64) -> UInt64 { (x >> n) | (x << (64 - n)) }

    private mutating func compress(last: Bool) {
        var m = (UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0),
                 UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        withUnsafeMutableBytes(of: &m) { words in
            block.withUnsafeBytes { src in words.copyMemory(from: src) }
        }
        // Little-endian words: a no-op on the Pi and x86.
        let t0 = total, flag: UInt64 = last ? ~0 : 0
        withUnsafeMutableBytes(of: &m) { raw in
            let m = raw.bindMemory(to: UInt64.self)
            for i in 0..<16 { m[i] = UInt64(littleEndian: m[i]) }
            h.withUnsafeMutableBufferPointer { h in
                var v0 = h[0], v1 = h[1], v2 = h[2], v3 = h[3], v4 = h[4], v5 = h[5], v6 = h[6], v7 = h[7]
                var v8 = Self.iv[0], v9 = Self.iv[1], v10 = Self.iv[2], v11 = Self.iv[3]
                var v12 = Self.iv[4] ^ t0, v13 = Self.iv[5], v14 = Self.iv[6] ^ flag, v15 = Self.iv[7]
                @inline(__always) func g(_ a: inout UInt64, _ b: inout UInt64, _ c: inout UInt64, _ d: inout UInt64, _ x: UInt64, _ y: UInt64) {
                    a = a &+ b &+ x; d = Self.rotr(d ^ a, 32)
                    c = c &+ d; b = Self.rotr(b ^ c, 24)
                    a = a &+ b &+ y; d = Self.rotr(d ^ a, 16)
                    c = c &+ d; b = Self.rotr(b ^ c, 63)
                }
                for round in 0..<12 {
                    let s = Self.sigma[round % 10]
                    s.withUnsafeBufferPointer { s in
                        g(&v0, &v4, &v8, &v12, m[s[0]], m[s[1]])
                        g(&v1, &v5, &v9, &v13, m[s[2]], m[s[3]])
                        g(&v2, &v6, &v10, &v14, m[s[4]], m[s[5]])
                        g(&v3, &v7, &v11, &v15, m[s[6]], m[s[7]])
                        g(&v0, &v5, &v10, &v15, m[s[8]], m[s[9]])
                        g(&v1, &v6, &v11, &v12, m[s[10]], m[s[11]])
                        g(&v2, &v7, &v8, &v13, m[s[12]], m[s[13]])
                        g(&v3, &v4, &v9, &v14, m[s[14]], m[s[15]])
                    }
                }
                h[0] ^= v0 ^ v8; h[1] ^= v1 ^ v9; h[2] ^= v2 ^ v10; h[3] ^= v3 ^ v11
                h[4] ^= v4 ^ v12; h[5] ^= v5 ^ v13; h[6] ^= v6 ^ v14; h[7] ^= v7 ^ v15
            }
        }
    }
}
