import Foundation
import Sightings
import VenueDiary

/// A payload the node learned (read over GATT or written to it), for the read statistics.
public struct PayloadRead: Sendable, Equatable {
    /// Virtual seconds.
    public var time: Double
    public var payload: [UInt8]
    /// The earliest measurement of the target taken before the read and attributed with it
    /// (virtual seconds), nil when there were none.
    public var earliestAttributed: Double?

    public init(time: Double, payload: [UInt8], earliestAttributed: Double? = nil) {
        self.time = time
        self.payload = payload
        self.earliestAttributed = earliestAttributed
    }
}

/// How well the diary recorded the venue: the diary's visits judged against the ground truth.
///
/// The headline figures (recall, precision, splits, errors) are over Herald phones, whose payload
/// is their identity for the whole stay. GAEN phones change identity with every rolling proximity
/// identifier, so they are judged per identifier in ``gaen``. See ``VisitMatching`` for the rules.
public struct EfficacyReport: Sendable, Equatable, Codable {
    /// Recalled eligible visits ÷ eligible visits (1 when there are none).
    public var recall: Double
    /// Recalled eligible visits ÷ recorded visits (1 when nothing was recorded): every phantom,
    /// extra fragment of a split visit and recorded walk-past lowers it.
    public var precision: Double
    /// True visits recorded as more than one diary visit.
    public var splitVisits: Int
    /// Diary visits that match no true visit of their payload.
    public var phantomVisits: Int
    /// True visits not longer than the check-in limit that the diary recorded.
    public var walkPastsRecorded: Int
    /// Diary visits that span more than one true visit.
    public var mergedVisits: Int
    public var checkInErrorSeconds: ErrorStatistics
    public var checkOutErrorSeconds: ErrorStatistics
    /// True visits of Herald phones, those longer than the check-in limit, and those recorded.
    public var trueVisits: Int
    public var eligibleVisits: Int
    public var recalledVisits: Int
    /// Visits longer than the check-in limit that no node could record and this one did not: a
    /// phone that cannot advertise made itself known for no longer than the limit of its stay
    /// (``WriterVisibility``). Not eligible, so not held against recall; counted here.
    public var hiddenVisits: Int
    /// Herald visits in the diary.
    public var diaryVisits: Int
    public var checkInLimitSeconds: Double
    public var byDeviceKind: [String: KindFigures]
    public var gaen: GAENFigures
    /// Nil when the run did not collect reads.
    public var payloadReads: ReadFigures?
    public var venue: VenueFigures

    public struct KindFigures: Sendable, Equatable, Codable {
        public var eligibleVisits: Int
        public var recalledVisits: Int
        public var splitVisits: Int
        public var checkInErrorMedian: Double?

        enum CodingKeys: String, CodingKey {
            case eligibleVisits = "eligible_visits", recalledVisits = "recalled_visits", splitVisits = "split_visits"
            case checkInErrorMedian = "check_in_error_median"
        }
    }

    public struct GAENFigures: Sendable, Equatable, Codable {
        /// True visits per rolling proximity identifier, and those longer than the check-in limit.
        public var trueVisits: Int
        public var eligibleVisits: Int
        public var recalledVisits: Int
        public var recall: Double
        public var diaryVisits: Int
        public var phantomVisits: Int
        public var splitVisits: Int

        enum CodingKeys: String, CodingKey {
            case trueVisits = "true_visits", eligibleVisits = "eligible_visits", recalledVisits = "recalled_visits"
            case recall, diaryVisits = "diary_visits", phantomVisits = "phantom_visits", splitVisits = "split_visits"
        }
    }

    public struct ReadFigures: Sendable, Equatable, Codable {
        /// Herald phones with a visit longer than the check-in limit, and those whose payload was read.
        public var phones: Int
        public var phonesRead: Int
        /// Reads per phone with a visit (mean and maximum).
        public var readsPerPhoneMean: Double
        public var readsPerPhoneMax: Int
        /// From arrival to the first read during an eligible visit.
        public var timeToFirstReadSeconds: ErrorStatistics

        enum CodingKeys: String, CodingKey {
            case phones, phonesRead = "phones_read", readsPerPhoneMean = "reads_per_phone_mean"
            case readsPerPhoneMax = "reads_per_phone_max", timeToFirstReadSeconds = "time_to_first_read_seconds"
        }
    }

    public struct VenueFigures: Sendable, Equatable, Codable {
        public var seed: UInt64
        public var visitors: Int
        public var hours: Double
        public var walkPasts: Int
        public var devices: Int

        enum CodingKeys: String, CodingKey {
            case seed, visitors, hours, walkPasts = "walk_pasts", devices
        }
    }

    enum CodingKeys: String, CodingKey {
        case recall, precision
        case splitVisits = "split_visits", phantomVisits = "phantom_visits", walkPastsRecorded = "walk_pasts_recorded"
        case mergedVisits = "merged_visits"
        case checkInErrorSeconds = "check_in_error_seconds", checkOutErrorSeconds = "check_out_error_seconds"
        case trueVisits = "true_visits", eligibleVisits = "eligible_visits", recalledVisits = "recalled_visits"
        case hiddenVisits = "hidden_visits"
        case diaryVisits = "diary_visits", checkInLimitSeconds = "check_in_limit_seconds"
        case byDeviceKind = "by_device_kind", gaen, payloadReads = "payload_reads", venue
    }
}

extension EfficacyReport {
    /// Judges the diary's visits (wall-clock times, as stored) against the truth. `reads` are the
    /// payloads the node learned, when the run collected them; `payloadWrites` the payload writes
    /// the node took from phones that cannot advertise (``Air/payloadWrites``), which tell which
    /// of their stays no node could record (without them, none is hidden).
    public init(truth: GroundTruth, diary: [Visit], reads: [PayloadRead]? = nil, payloadWrites: [Int: [Double]]? = nil) {
        let origin = truth.configuration.origin
        let limit = truth.configuration.checkInSeconds
        func recorded(_ kind: PayloadKind) -> [RecordedVisit] {
            diary.filter { $0.kind == kind }.map {
                RecordedVisit(payload: $0.payload, checkIn: $0.checkIn - origin, checkOut: ($0.checkOut ?? $0.lastSeen) - origin)
            }
        }

        let heraldVisits = truth.visits.filter { $0.kind == .herald }
        let hidden = payloadWrites.map { writes in
            heraldVisits.map { visit in
                visit.deviceKind == .heraldAndroidWriter
                    && WriterVisibility.isHidden(
                        arrive: visit.arrive, leave: visit.leave, rotation: truth.devices[visit.device].rotation,
                        payloadWrites: writes[visit.device] ?? [], checkIn: limit)
            }
        }
        let herald = VisitMatching(truth: heraldVisits, recorded: recorded(.herald), hidden: hidden)
        let all = herald.tally(checkIn: limit)
        recall = all.eligible == 0 ? 1 : Double(all.recalled) / Double(all.eligible)
        precision = herald.recorded == 0 ? 1 : Double(all.recalled) / Double(herald.recorded)
        splitVisits = all.split
        phantomVisits = herald.phantom
        walkPastsRecorded = all.walkPastsRecorded
        mergedVisits = herald.merged
        checkInErrorSeconds = ErrorStatistics(signedErrors: all.checkInErrors)
        checkOutErrorSeconds = ErrorStatistics(signedErrors: all.checkOutErrors)
        trueVisits = all.trueVisits
        eligibleVisits = all.eligible
        recalledVisits = all.recalled
        hiddenVisits = all.hidden
        diaryVisits = herald.recorded
        checkInLimitSeconds = limit

        var kinds: [String: KindFigures] = [:]
        for kind in DeviceKind.phoneKinds where kind.payloadKind == .herald {
            let t = herald.tally(checkIn: limit) { $0.deviceKind == kind }
            guard t.trueVisits > 0 else { continue }
            kinds[kind.rawValue] = KindFigures(
                eligibleVisits: t.eligible, recalledVisits: t.recalled, splitVisits: t.split,
                checkInErrorMedian: ErrorStatistics(signedErrors: t.checkInErrors).median)
        }
        byDeviceKind = kinds

        let gaenMatching = VisitMatching(truth: truth.visits.filter { $0.kind == .gaen }, recorded: recorded(.gaen))
        let g = gaenMatching.tally(checkIn: limit)
        gaen = GAENFigures(
            trueVisits: g.trueVisits, eligibleVisits: g.eligible, recalledVisits: g.recalled,
            recall: g.eligible == 0 ? 1 : Double(g.recalled) / Double(g.eligible), diaryVisits: gaenMatching.recorded,
            phantomVisits: gaenMatching.phantom, splitVisits: g.split)

        payloadReads = reads.map { Self.readFigures(truth: truth, reads: $0, checkIn: limit) }
        venue = VenueFigures(
            seed: truth.configuration.seed, visitors: truth.configuration.visitors, hours: truth.configuration.openingHours,
            walkPasts: truth.configuration.walkPasts, devices: truth.devices.count)
    }

    private static func readFigures(truth: GroundTruth, reads: [PayloadRead], checkIn: Double) -> ReadFigures {
        var readTimes: [[UInt8]: [Double]] = [:]
        for read in reads {
            readTimes[read.payload, default: []].append(read.time)
        }
        for key in readTimes.keys { readTimes[key]?.sort() }
        var phones = Set<Int>()
        var phonesRead = Set<Int>()
        var firstReads: [Double] = []
        for visit in truth.visits where visit.kind == .herald && visit.duration > checkIn {
            phones.insert(visit.device)
            let times = readTimes[visit.payload] ?? []
            if !times.isEmpty { phonesRead.insert(visit.device) }
            if let first = times.first(where: { $0 >= visit.arrive && $0 <= visit.leave }) {
                firstReads.append(first - visit.arrive)
            }
        }
        let counts = phones.map { id in truth.devices[id].payload.map { readTimes[$0]?.count ?? 0 } ?? 0 }
        return ReadFigures(
            phones: phones.count, phonesRead: phonesRead.count,
            readsPerPhoneMean: counts.isEmpty ? 0 : Double(counts.reduce(0, +)) / Double(counts.count),
            readsPerPhoneMax: counts.max() ?? 0, timeToFirstReadSeconds: ErrorStatistics(signedErrors: firstReads))
    }
}

extension EfficacyReport {
    /// One JSON object on one line, keys sorted.
    public func json() throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return String(decoding: try encoder.encode(self), as: UTF8.self)
    }

    /// The report for people.
    public var text: String {
        func percent(_ x: Double) -> String { String(format: "%.1f%%", x * 100) }
        func seconds(_ x: Double?) -> String { x.map { String(format: "%.1f s", $0) } ?? "–" }
        func errors(_ e: ErrorStatistics) -> String {
            "median \(seconds(e.median)), p95 \(seconds(e.p95)), max \(seconds(e.max))"
        }
        var lines = [
            "Efficacy against ground truth: \(venue.visitors) visitors, \(venue.walkPasts) walk-pasts, "
                + "\(String(format: "%g", venue.hours)) h, seed \(venue.seed)",
            "  Herald phones: \(trueVisits) true visits, \(eligibleVisits) longer than the "
                + "\(String(format: "%g", checkInLimitSeconds)) s check-in limit",
            "  recall           \(percent(recall)) (\(recalledVisits) of \(eligibleVisits) recorded)"
                + (hiddenVisits > 0 ? "; \(hiddenVisits) hidden (a phone that cannot advertise known for no longer than the limit)" : ""),
            "  precision        \(percent(precision)) (\(diaryVisits) diary visits: \(phantomVisits) phantom, "
                + "\(splitVisits) split, \(mergedVisits) merged, \(walkPastsRecorded) walk-pasts recorded)",
            "  check-in error   \(errors(checkInErrorSeconds))",
            "  check-out error  \(errors(checkOutErrorSeconds))",
        ]
        for kind in byDeviceKind.keys.sorted() {
            guard let k = byDeviceKind[kind] else { continue }
            lines.append(
                "    \(kind): \(k.recalledVisits) of \(k.eligibleVisits) recorded, \(k.splitVisits) split, "
                    + "check-in error median \(seconds(k.checkInErrorMedian))")
        }
        lines.append(
            "  GAEN: \(gaen.recalledVisits) of \(gaen.eligibleVisits) identifier visits recorded "
                + "(\(percent(gaen.recall))), \(gaen.phantomVisits) phantom")
        if let r = payloadReads {
            lines.append(
                "  payload reads: \(r.phonesRead) of \(r.phones) phones read, "
                    + String(format: "%.1f", r.readsPerPhoneMean) + " reads per phone (max \(r.readsPerPhoneMax)), "
                    + "time to first read median \(seconds(r.timeToFirstReadSeconds.median)), "
                    + "p95 \(seconds(r.timeToFirstReadSeconds.p95))")
        }
        return lines.joined(separator: "\n")
    }
}
