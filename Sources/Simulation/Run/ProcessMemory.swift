import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// This process's memory, for a long run's report: resident set (`/proc/self/statm`) and the
/// bytes malloc has handed out and not had back (glibc's `malloc_info`: memory taken from the
/// system minus its free chunks, plus mmapped blocks). Nil where the system does not say.
public struct ProcessMemory: Sendable, Equatable, Codable {
    public var residentBytes: Int?
    public var heapBytes: Int?

    public init(residentBytes: Int?, heapBytes: Int?) {
        self.residentBytes = residentBytes
        self.heapBytes = heapBytes
    }

    enum CodingKeys: String, CodingKey {
        case residentBytes = "resident_bytes", heapBytes = "heap_bytes"
    }

    /// Now.
    public static func now() -> ProcessMemory {
        ProcessMemory(residentBytes: resident(), heapBytes: heap())
    }

    static func resident() -> Int? {
        #if os(Linux)
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        #else
        return nil
        #endif
    }

    static func heap() -> Int? {
        #if canImport(Glibc)
        // malloc.h is not in Swift's Glibc module: look the function up.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_info") else { return nil }
        typealias MallocInfo = @convention(c) (Int32, UnsafeMutablePointer<FILE>?) -> Int32
        let mallocInfo = unsafeBitCast(symbol, to: MallocInfo.self)
        var buffer: UnsafeMutablePointer<CChar>?
        var size = 0
        guard let stream = open_memstream(&buffer, &size) else { return nil }
        let result = mallocInfo(0, stream)
        fclose(stream)
        defer { free(buffer) }
        guard result == 0, let buffer else { return nil }
        return heapInUse(malloc_info: String(cString: buffer))
        #else
        return nil
        #endif
    }

    /// From `malloc_info`'s XML: the totals after the last arena, `system current` − `fast` −
    /// `rest` + `mmap`.
    static func heapInUse(malloc_info xml: String) -> Int? {
        guard let end = xml.range(of: "</heap>", options: .backwards) else { return nil }
        let totals = xml[end.upperBound...]
        func size(_ tag: String, _ type: String) -> Int? {
            guard let start = totals.range(of: "<\(tag) type=\"\(type)\"") else { return nil }
            let rest = totals[start.upperBound...]
            guard let sizeStart = rest.range(of: "size=\"") else { return nil }
            let digits = rest[sizeStart.upperBound...].prefix { $0.isNumber }
            return Int(digits)
        }
        guard let system = size("system", "current") else { return nil }
        return system - (size("total", "fast") ?? 0) - (size("total", "rest") ?? 0) + (size("total", "mmap") ?? 0)
    }
}
