import CZlib

/// A raw deflate stream (as a zip member holds it) inflated as its compressed bytes come, in
/// pieces of any size: what it inflates to is handed on in pieces of at most
/// ``ZipReader/chunkBytes``, never held whole. It must inflate to exactly `size` bytes; more, a
/// damaged stream, or a stream that has not ended by ``finish()`` is refused as "the deflated data
/// is damaged or truncated". Bytes after the stream's end are ignored.
final class Inflater {
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private var output = [UInt8](repeating: 0, count: ZipReader.chunkBytes)
    private let name: String
    private let size: Int
    private var started = false
    /// The bytes inflated so far.
    private(set) var total = 0
    /// Whether the deflate stream has ended.
    private(set) var ended = false

    /// Inflates member `name`, which must inflate to `size` bytes.
    init(name: String, size: Int) throws(ExposureFileError) {
        self.name = name
        self.size = size
        stream.initialize(to: z_stream())
        guard inflateInit2_(stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .badZip("\(name): zlib could not start")
        }
        started = true
    }

    deinit {
        if started { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    private var damaged: ExposureFileError { .badZip("\(name): the deflated data is damaged or truncated") }

    /// Inflates the next compressed bytes, handing what they inflate to to `body`.
    func feed(_ input: ArraySlice<UInt8>, _ body: (ArraySlice<UInt8>) -> Void) throws(ExposureFileError) {
        guard !ended, !input.isEmpty else { return }
        var failed = false
        input.withUnsafeBufferPointer { inBuffer in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: inBuffer.baseAddress)
            stream.pointee.avail_in = UInt32(inBuffer.count)
            defer {
                stream.pointee.next_in = nil
                stream.pointee.avail_in = 0
            }
            while true {
                let (status, produced) = output.withUnsafeMutableBufferPointer { out in
                    stream.pointee.next_out = out.baseAddress
                    stream.pointee.avail_out = UInt32(out.count)
                    let status = inflate(stream, Z_NO_FLUSH)
                    return (status, out.count - Int(stream.pointee.avail_out))
                }
                stream.pointee.next_out = nil
                if produced > 0 {
                    total += produced
                    guard total <= size else {
                        failed = true
                        return
                    }
                    body(output[0..<produced])
                }
                if status == Z_STREAM_END {
                    ended = true
                    return
                }
                guard status == Z_OK || status == Z_BUF_ERROR else {
                    failed = true
                    return
                }
                // All input taken and the output not filled: zlib waits for more input.
                if produced < output.count && stream.pointee.avail_in == 0 { return }
                if produced == 0 { return }  // no progress possible (Z_BUF_ERROR)
            }
        }
        if failed { throw damaged }
    }

    /// Checks that the stream ended and inflated to the size the member says.
    func finish() throws(ExposureFileError) {
        guard ended, total == size else { throw damaged }
    }
}
