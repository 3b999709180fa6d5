import Foundation
import VenueDiary

/// How `risk_score` weighs an exposure, after `ENExposureConfiguration` (the Exposure
/// Notification framework's scoring): attenuation buckets with thresholds and weights, the
/// duration, the key's transmission risk level and its days since onset of symptoms.
///
///     weighted_minutes = Σ over matched visits: minutes × attenuation_weights[bucket] / 100
///         bucket: 0 when attenuation < thresholds[0] dB (near), 1 below thresholds[1], else 2;
///         a visit without a known attenuation (no metadata or no RSSI) counts in bucket 1
///     risk_score = weighted_minutes × transmission_risk_weights[level − 1] / 100
///                                   × (onset_days contains days_since_onset ? 1 : outside_onset_weight / 100)
///
/// A key without transmission risk level (or level 0) or without days since onset takes weight 100.
public struct RiskConfiguration: Sendable, Equatable {
    public var attenuationThresholds: [Int]
    public var attenuationWeights: [Double]
    public var transmissionRiskWeights: [Double]
    public var onsetDays: ClosedRange<Int>
    public var outsideOnsetWeight: Double

    public init(
        attenuationThresholds: [Int] = [55, 63], attenuationWeights: [Double] = [100, 50, 0],
        transmissionRiskWeights: [Double] = Array(repeating: 100, count: 8), onsetDays: ClosedRange<Int> = -2...9,
        outsideOnsetWeight: Double = 0
    ) {
        self.attenuationThresholds = attenuationThresholds
        self.attenuationWeights = attenuationWeights
        self.transmissionRiskWeights = transmissionRiskWeights
        self.onsetDays = onsetDays
        self.outsideOnsetWeight = outsideOnsetWeight
    }

    func bucket(_ attenuation: Double?) -> Int {
        guard let attenuation else { return 1 }
        if attenuation < Double(attenuationThresholds[0]) { return 0 }
        if attenuation < Double(attenuationThresholds[1]) { return 1 }
        return 2
    }

    func score(visits: [(minutes: Double, attenuation: Double?)], key: DiagnosisKey) -> Double {
        let weighted = visits.reduce(0.0) { $0 + $1.minutes * attenuationWeights[bucket($1.attenuation)] / 100 }
        var factor = 1.0
        if let level = key.transmissionRiskLevel, (1...8).contains(level) { factor *= transmissionRiskWeights[level - 1] / 100 }
        if let days = key.daysSinceOnsetOfSymptoms, !onsetDays.contains(days) { factor *= outsideOnsetWeight / 100 }
        return (weighted * factor * 10).rounded() / 10
    }
}

/// What `exposure check` reports: per key file, per matched key, and the venue's time windows.
public struct ExposureReport: Codable, Sendable, Equatable {
    public struct File: Codable, Sendable, Equatable {
        public var path: String
        public var region: String
        public var keys: Int
        public var revisedKeys: Int
        public var verified: Bool

        enum CodingKeys: String, CodingKey {
            case path, region, keys, verified
            case revisedKeys = "revised_keys"
        }
    }

    public struct Attenuation: Codable, Sendable, Equatable {
        public var min: Double
        public var mean: Double
    }

    public struct Exposure: Codable, Sendable, Equatable {
        public var key: String
        public var transmissionRiskLevel: Int?
        public var reportType: String?
        public var daysSinceOnsetOfSymptoms: Int?
        public var firstSeen: String
        public var lastSeen: String
        public var minutes: Double
        public var txPower: Int?
        public var attenuationDB: Attenuation?
        public var visits: [Int64]
        public var riskScore: Double

        enum CodingKeys: String, CodingKey {
            case key, visits, minutes
            case transmissionRiskLevel = "transmission_risk_level"
            case reportType = "report_type"
            case daysSinceOnsetOfSymptoms = "days_since_onset_of_symptoms"
            case firstSeen = "first_seen"
            case lastSeen = "last_seen"
            case txPower = "tx_power"
            case attenuationDB = "attenuation_db"
            case riskScore = "risk_score"
        }

        public func encode(to encoder: Encoder) throws {
            // Absent values are written as null, so every object has every field.
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(key, forKey: .key)
            try c.encode(transmissionRiskLevel, forKey: .transmissionRiskLevel)
            try c.encode(reportType, forKey: .reportType)
            try c.encode(daysSinceOnsetOfSymptoms, forKey: .daysSinceOnsetOfSymptoms)
            try c.encode(firstSeen, forKey: .firstSeen)
            try c.encode(lastSeen, forKey: .lastSeen)
            try c.encode(minutes, forKey: .minutes)
            try c.encode(txPower, forKey: .txPower)
            try c.encode(attenuationDB, forKey: .attenuationDB)
            try c.encode(visits, forKey: .visits)
            try c.encode(riskScore, forKey: .riskScore)
        }
    }

    public struct Window: Codable, Sendable, Equatable {
        public var start: String
        public var end: String
        var startTime: Double
        var endTime: Double

        enum CodingKeys: String, CodingKey { case start, end }

        init(start: Double, end: Double) {
            startTime = start
            endTime = end
            self.start = TimeText.iso8601(start)
            self.end = TimeText.iso8601(end.rounded(.up))
        }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            start = try c.decode(String.self, forKey: .start)
            end = try c.decode(String.self, forKey: .end)
            startTime = TimeText.parse(start) ?? 0
            endTime = TimeText.parse(end) ?? 0
        }
    }

    public var generatedAt: String
    public var files: [File]
    public var keys: Int
    public var diaryIdentifiers: Int
    public var exposures: [Exposure]
    public var windows: [Window]

    enum CodingKeys: String, CodingKey {
        case files, keys, exposures, windows
        case generatedAt = "generated_at"
        case diaryIdentifiers = "diary_identifiers"
    }

    /// Builds the report from the matches.
    public init(files: [File], keys: Int, diaryIdentifiers: Int, matches: [KeyMatch], risk: RiskConfiguration, generatedAt: Double) {
        self.generatedAt = TimeText.iso8601(generatedAt)
        self.files = files
        self.keys = keys
        self.diaryIdentifiers = diaryIdentifiers
        var intervals: [(Double, Double)] = []
        exposures = matches.map { match in
            let key = match.key
            let aemk = GAENCrypto.associatedEncryptedMetadataKey(key.keyData)
            var txPower: Int?
            var perVisit: [(minutes: Double, attenuation: Double?)] = []
            var first = Double.infinity
            var last = -Double.infinity
            var minutes = 0.0
            var strongest: Int?
            var rssiSum = 0
            var samples = 0
            for (visit, _) in match.visits {
                let end = visit.checkOut ?? visit.lastSeen
                first = Swift.min(first, visit.checkIn)
                last = Swift.max(last, end)
                let m = (end - visit.checkIn) / 60
                minutes += m
                intervals.append((visit.checkIn, end))
                var visitTx: Int?
                if let metadata = visit.metadata, metadata.count == 4 {
                    visitTx = GAENCrypto.txPower(metadata: GAENCrypto.associatedMetadata(aemk: aemk, rpi: visit.payload, metadata))
                    txPower = txPower ?? visitTx
                }
                var attenuation: Double?
                if let tx = visitTx, visit.samples > 0 {
                    attenuation = Double(tx) - visit.rssiMean
                    strongest = Swift.max(strongest ?? visit.rssiMax, visit.rssiMax)
                    rssiSum += visit.rssiSum
                    samples += visit.samples
                }
                perVisit.append((m, attenuation))
            }
            var attenuation: Attenuation?
            if let tx = txPower, let strongest, samples > 0 {
                attenuation = Attenuation(
                    min: Double(tx - strongest), mean: ((Double(tx) - Double(rssiSum) / Double(samples)) * 10).rounded() / 10)
            }
            return Exposure(
                key: key.keyData.map { String(format: "%02x", $0) }.joined(),
                transmissionRiskLevel: key.transmissionRiskLevel, reportType: key.reportType?.name,
                daysSinceOnsetOfSymptoms: key.daysSinceOnsetOfSymptoms,
                firstSeen: TimeText.iso8601(first), lastSeen: TimeText.iso8601(last.rounded(.up)),
                minutes: (minutes * 10).rounded() / 10, txPower: txPower, attenuationDB: attenuation,
                visits: match.visits.compactMap(\.visit.id), riskScore: risk.score(visits: perVisit, key: key))
        }
        windows = Self.union(intervals).map { Window(start: $0.0, end: $0.1) }
    }

    /// Overlapping or touching intervals merged, in time order.
    static func union(_ intervals: [(Double, Double)]) -> [(Double, Double)] {
        var merged: [(Double, Double)] = []
        for (start, end) in intervals.sorted(by: { $0 < $1 }) {
            if let last = merged.last, start <= last.1 {
                merged[merged.count - 1].1 = Swift.max(last.1, end)
            } else {
                merged.append((start, end))
            }
        }
        return merged
    }

    public func json() -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try! encoder.encode(self), as: UTF8.self)
    }

    /// The windows as the NHS COVID-19 app's risky-venue upload CSV (`risky-venue-upload.md` of
    /// its public API contracts): one row per window, message type M1 ("inform").
    public func nhsRiskyVenues(venueID: String, messageType: String = "M1") -> String {
        var text = "# venue_id, start_time, end_time, message_type, optional_parameter\n"
        for window in windows {
            text += "\"\(venueID)\", \"\(window.start)\", \"\(window.end)\", \"\(messageType)\", \"\"\n"
        }
        return text
    }

    /// The report for people.
    public func text() -> String {
        var lines: [String] = []
        for file in files {
            lines.append("\(file.path): region \(file.region.isEmpty ? "(none)" : file.region), \(file.keys) keys"
                + (file.revisedKeys > 0 ? ", \(file.revisedKeys) revised" : "")
                + (file.verified ? ", signature verified" : ", NOT VERIFIED (--unverified)"))
        }
        lines.append("\(keys) distinct diagnosis keys against \(diaryIdentifiers) GAEN identifiers in the diary")
        if exposures.isEmpty {
            lines.append("no exposure: no diagnosis key matches a visit")
        } else {
            lines.append("\(exposures.count) diagnosis key\(exposures.count == 1 ? "" : "s") heard at the venue:")
            for e in exposures {
                var line = "  \(e.firstSeen) – \(e.lastSeen)  \(e.minutes) min, \(e.visits.count) visit\(e.visits.count == 1 ? "" : "s")"
                if let a = e.attenuationDB { line += ", attenuation min \(a.min) dB mean \(a.mean) dB" }
                line += ", risk score \(e.riskScore)"
                if let level = e.transmissionRiskLevel { line += ", transmission risk \(level)" }
                if let report = e.reportType { line += ", \(report)" }
                lines.append(line)
            }
            lines.append("time windows a positive case was at the venue:")
            for w in windows { lines.append("  \(w.start) – \(w.end)") }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
