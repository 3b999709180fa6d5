import Foundation

/// Just enough of a MIME reader to check what the appliance sends: headers (unfolded, RFC 2047
/// words decoded), multipart bodies, base64 and quoted-printable. Test-only.
struct ParsedMessage {
    var headers: [(String, String)]
    var body: String

    init(_ text: String) {
        let normalized = text.replacingOccurrences(of: "\r\n", with: "\n")
        let split = normalized.range(of: "\n\n")
        let head = split.map { String(normalized[..<$0.lowerBound]) } ?? normalized
        body = split.map { String(normalized[$0.upperBound...]) } ?? ""
        var unfolded: [String] = []
        for line in head.split(separator: "\n") {
            if line.first == " " || line.first == "\t", !unfolded.isEmpty {
                unfolded[unfolded.count - 1] += String(line)
            } else {
                unfolded.append(String(line))
            }
        }
        headers = unfolded.compactMap { line in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
    }

    func header(_ name: String) -> String? {
        headers.first { $0.0.lowercased() == name.lowercased() }.map { Self.decodeWords($0.1) }
    }

    func parameter(_ header: String, _ name: String) -> String? {
        guard let value = self.header(header) else { return nil }
        for part in value.split(separator: ";").dropFirst() {
            let kv = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if kv.count == 2, kv[0].lowercased() == name { return kv[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        }
        return nil
    }

    /// The parts of a multipart body.
    var parts: [ParsedMessage] {
        guard let boundary = parameter("Content-Type", "boundary") else { return [] }
        let chunks = body.components(separatedBy: "--" + boundary)
        guard chunks.count >= 3 else { return [] }
        return chunks.dropFirst().dropLast().map { chunk in
            var text = chunk
            if text.hasPrefix("\n") { text.removeFirst() }
            if text.hasSuffix("\n") { text.removeLast() }
            return ParsedMessage(text)
        }
    }

    /// The body with its Content-Transfer-Encoding undone.
    var decodedBody: Data? {
        switch header("Content-Transfer-Encoding")?.lowercased() {
        case "base64": return Data(base64Encoded: body.replacingOccurrences(of: "\n", with: ""))
        case "quoted-printable": return Self.decodeQuotedPrintable(body)
        default: return Data(body.utf8)
        }
    }

    static func decodeQuotedPrintable(_ text: String) -> Data {
        var out = Data()
        let bytes = Array(text.replacingOccurrences(of: "=\n", with: "").utf8)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "="), i + 2 < bytes.count, let v = UInt8(String(decoding: bytes[(i + 1)...(i + 2)], as: UTF8.self), radix: 16) {
                out.append(v)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }

    static func decodeWords(_ value: String) -> String {
        guard value.contains("=?utf-8?B?") else { return value }
        var out = Data()
        for word in value.split(whereSeparator: { $0 == " " || $0 == "\t" }) {
            let w = String(word)
            if w.hasPrefix("=?utf-8?B?"), w.hasSuffix("?="), let data = Data(base64Encoded: String(w.dropFirst(10).dropLast(2))) {
                out.append(data)
            } else {
                out.append(contentsOf: Array((" " + w).utf8))
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
