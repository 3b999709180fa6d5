import Herald
import VenueDiary

/// `[venue]`: the diary's ``VenueIdentity`` (what the node advertises as a Herald venue beacon
/// and writes into exports), read from the config file.
///
/// Two types for one venue, because the diary (which names the venue in exports) must not
/// depend on Herald: ``VenueIdentity`` is the venue, Herald's `BeaconPayload` its bytes on the
/// air. They meet only here (``beacon``, ``init(_:)``), and the payload's size rules are
/// `BeaconPayload`'s alone.
extension VenueIdentity {
    static func read(_ section: ConfigSection) -> VenueIdentity? {
        var s = section
        let country = s.requiredInt("country", range: 0...65535)
        let state = s.requiredInt("state", range: 0...65535)
        let code = s.requiredInt("code", range: 0...4_294_967_295)
        let text: (String) -> String? = { value in
            let limit = ExtendedData.maximumSectionDataBytes
            if value.utf8.count > limit { return "must be at most \(limit) bytes of UTF-8 (it is \(value.utf8.count))" }
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
        if size > BeaconPayload.maximumSize {
            let longest = [("name", venue.name), ("location", venue.location ?? ""), ("area", venue.area ?? ""), ("url", venue.url ?? "")]
                .max { $0.1.utf8.count < $1.1.utf8.count }!
            section.report(
                longest.0, value: TOMLText.quote(longest.1),
                problem: "makes the venue payload \(size) bytes; a Herald payload is at most \(BeaconPayload.maximumSize): shorten [venue] \(longest.0)")
            return nil
        }
        return venue
    }

    /// The Herald venue beacon V1 payload the node advertises for this venue (empty texts are
    /// left out, as Herald omits empty sections).
    public var beacon: BeaconPayload {
        BeaconPayload(country: country, state: state, code: code, name: name, location: location, area: area, url: url)
    }

    /// The venue a beacon payload names (its texts from their sections; no name is empty).
    public init(_ beacon: BeaconPayload) {
        self.init(
            country: beacon.country, state: beacon.state, code: beacon.code, name: beacon.name ?? "",
            location: beacon.extendedData.text(.location), area: beacon.extendedData.text(.area),
            url: beacon.extendedData.text(.url))
    }

    /// Size of the Herald venue beacon payload these settings produce.
    public var payloadSize: Int { beacon.encodedSize }

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
