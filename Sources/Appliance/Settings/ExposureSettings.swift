import Foundation
import TOMLKit

/// `[exposure]`: what `venue-beacon exposure check` trusts and how it scores (docs/exposure.md).
/// Plain values here; the `Exposure` target turns them into keys and a risk configuration.
public struct ExposureSettings: Sendable, Equatable {
    /// A health authority's public key: the `verification_key_id` and `verification_key_version`
    /// its key files name, and the key (base64 of the DER SubjectPublicKeyInfo, as the apps configure it).
    public struct Key: Sendable, Equatable {
        public var id: String
        public var version: String
        public var publicKey: String
    }

    public var verificationKeys: [Key]
    /// Attenuation bucket limits, dB: near below the first, medium below the second, far above.
    public var attenuationThresholds: [Int]
    /// Percent weight of a minute in the near, medium and far buckets.
    public var attenuationWeights: [Int]
    /// Percent weight of transmission risk levels 1–8.
    public var transmissionRiskWeights: [Int]
    /// Days since onset of symptoms (inclusive) taken at full weight.
    public var onsetDays: [Int]
    /// Percent weight of a key whose days since onset lie outside `onsetDays`.
    public var outsideOnsetWeight: Int
    /// `venue_id` of `--format nhs-risky-venues`; nil = the venue code.
    public var nhsVenueID: String?

    public init(
        verificationKeys: [Key] = [], attenuationThresholds: [Int] = [55, 63], attenuationWeights: [Int] = [100, 50, 0],
        transmissionRiskWeights: [Int] = Array(repeating: 100, count: 8), onsetDays: [Int] = [-2, 9], outsideOnsetWeight: Int = 0,
        nhsVenueID: String? = nil
    ) {
        self.verificationKeys = verificationKeys
        self.attenuationThresholds = attenuationThresholds
        self.attenuationWeights = attenuationWeights
        self.transmissionRiskWeights = transmissionRiskWeights
        self.onsetDays = onsetDays
        self.outsideOnsetWeight = outsideOnsetWeight
        self.nhsVenueID = nhsVenueID
    }

    static func read(_ section: ConfigSection) -> ExposureSettings {
        var s = section
        let d = ExposureSettings()
        var keys: [Key] = []
        let keyTexts = s.stringArray("verification_keys", default: []) { text in
            let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty,
                let der = Data(base64Encoded: parts[2].trimmingCharacters(in: .whitespaces)), der.count == 91
            else {
                return "must be a list of \"ID:VERSION:KEY\" (the verification_key_id and verification_key_version the key files name, and the base64 of the P-256 public key's DER SubjectPublicKeyInfo, 124 characters starting MFkw)"
            }
            return nil
        }
        for text in keyTexts {
            let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            keys.append(Key(id: parts[0], version: parts[1], publicKey: parts[2].trimmingCharacters(in: .whitespaces)))
        }
        let thresholds = s.intArray("attenuation_thresholds_db", default: d.attenuationThresholds, count: 2, range: 0...255, unit: "dB", ascending: true)
        let weights = s.intArray("attenuation_weights", default: d.attenuationWeights, count: 3, range: 0...100, unit: "percent")
        let trl = s.intArray("transmission_risk_weights", default: d.transmissionRiskWeights, count: 8, range: 0...100, unit: "percent")
        let onset = s.intArray("onset_days", default: d.onsetDays, count: 2, range: -14...28, unit: "days", ascending: true)
        let outside = s.int("outside_onset_weight", default: d.outsideOnsetWeight, range: 0...100, unit: "percent") ?? d.outsideOnsetWeight
        let venueID = s.string("nhs_venue_id", default: nil) { text in
            text.count <= 32 && text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") })
                ? nil : "must be at most 32 letters, digits or '-' (the NHS poster's venue id)"
        }
        s.finish()
        return ExposureSettings(
            verificationKeys: keys, attenuationThresholds: thresholds, attenuationWeights: weights, transmissionRiskWeights: trl,
            onsetDays: onset, outsideOnsetWeight: outside, nhsVenueID: venueID)
    }

    var toml: String {
        func list(_ values: [Int]) -> String { "[" + values.map(String.init).joined(separator: ", ") + "]" }
        var entries: [(String, String?, String)] = [
            ("verification_keys", "[" + verificationKeys.map { TOMLText.quote("\($0.id):\($0.version):\($0.publicKey)") }.joined(separator: ", ") + "]", ""),
            ("attenuation_thresholds_db", list(attenuationThresholds), ""),
            ("attenuation_weights", list(attenuationWeights), ""),
            ("transmission_risk_weights", list(transmissionRiskWeights), ""),
            ("onset_days", list(onsetDays), ""),
            ("outside_onset_weight", String(outsideOnsetWeight), ""),
        ]
        entries.append(("nhs_venue_id", nhsVenueID.map(TOMLText.quote), "the venue code"))
        return tomlSection("exposure", entries)
    }
}

extension ConfigSection {
    /// A list of `count` whole numbers in `range` (in ascending order when asked).
    mutating func intArray(_ key: String, default defaultValue: [Int], count: Int, range: ClosedRange<Int>, unit: String, ascending: Bool = false) -> [Int] {
        let allowed = "must be a list of \(count) whole numbers of \(unit) from \(range.lowerBound) to \(range.upperBound)\(ascending ? ", in ascending order" : "")"
        guard let value = raw(key) else { return defaultValue }
        guard let array = value.array else {
            report(key, value: ConfigSection.render(value), problem: allowed)
            return defaultValue
        }
        let numbers = array.compactMap { $0.int }
        guard numbers.count == array.count, numbers.count == count, numbers.allSatisfy(range.contains),
            !ascending || zip(numbers, numbers.dropFirst()).allSatisfy({ $0 <= $1 })
        else {
            report(key, value: ConfigSection.render(value), problem: allowed)
            return defaultValue
        }
        return numbers
    }

    /// A list of strings, each checked by `validate` (nil when fine, else what is allowed).
    mutating func stringArray(_ key: String, default defaultValue: [String], validate: (String) -> String?) -> [String] {
        guard let value = raw(key) else { return defaultValue }
        guard let array = value.array else {
            report(key, value: ConfigSection.render(value), problem: "must be a list of strings, e.g. [\"a\", \"b\"]")
            return defaultValue
        }
        var out: [String] = []
        for element in array {
            guard let text = element.string else {
                report(key, value: ConfigSection.render(value), problem: "must be a list of strings, e.g. [\"a\", \"b\"]")
                return defaultValue
            }
            if let problem = validate(text) {
                report(key, value: String(text.prefix(60)), problem: problem)
                return defaultValue
            }
            out.append(text)
        }
        return out
    }
}
