import VenueDiary

/// `[venue]`: the diary's ``VenueIdentity`` (what the node advertises as a Herald venue beacon
/// and writes into exports), read from the config file.
extension VenueIdentity {
    /// A Herald payload is at most 510 bytes: 9 bytes of header, then sections of
    /// (code, length, bytes) where each length is one byte.
    public static let maximumPayloadBytes = 510
    static let headerBytes = 9

    static func read(_ section: ConfigSection) -> VenueIdentity? {
        var s = section
        let country = s.requiredInt("country", range: 0...65535)
        let state = s.requiredInt("state", range: 0...65535)
        let code = s.requiredInt("code", range: 0...4_294_967_295)
        let text: (String) -> String? = { value in
            if value.utf8.count > 255 { return "must be at most 255 bytes of UTF-8 (it is \(value.utf8.count))" }
            if value.unicodeScalars.contains(where: { $0.value < 0x20 }) { return "must not contain control characters" }
            return nil
        }
        let name = s.requiredString("name", what: "the premises name phones show, e.g. \"Erin's Stakehouse\"") { value in
            value.isEmpty ? "must not be empty" : text(value)
        }
        let location = s.string("location", default: nil, validate: text)
        let area = s.string("area", default: nil, validate: text)
        let url = s.string("url", default: nil) { value in
            if !value.hasPrefix("https://") || value.count <= "https://".count { return "must be a URL starting with https://" }
            return text(value)
        }
        s.finish()

        guard let country, let state, let code, let name else { return nil }
        let venue = VenueIdentity(
            country: UInt16(country), state: UInt16(state), code: UInt32(code), name: name,
            location: location?.nilIfEmpty, area: area?.nilIfEmpty, url: url?.nilIfEmpty)
        let size = venue.payloadSize
        if size > maximumPayloadBytes {
            let longest = [("name", venue.name), ("location", venue.location ?? ""), ("area", venue.area ?? ""), ("url", venue.url ?? "")]
                .max { $0.1.utf8.count < $1.1.utf8.count }!
            section.report(
                longest.0, value: TOMLText.quote(longest.1),
                problem: "makes the venue payload \(size) bytes; a Herald payload is at most \(maximumPayloadBytes): shorten [venue] \(longest.0)")
            return nil
        }
        return venue
    }

    /// Size of the Herald venue beacon payload these settings produce.
    public var payloadSize: Int {
        var size = Self.headerBytes
        for field in [name, location, area, url] {
            if let field, !field.isEmpty { size += 2 + field.utf8.count }
        }
        return size
    }

    var toml: String {
        tomlSection("venue", [
            ("country", String(country), ""), ("state", String(state), ""), ("code", String(code), ""),
            ("name", TOMLText.quote(name), ""),
            ("location", location.map(TOMLText.quote), "no location within the premises is advertised"),
            ("area", area.map(TOMLText.quote), "no area is advertised"),
            ("url", url.map(TOMLText.quote), "no URL is advertised"),
        ])
    }
}

extension String {
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
