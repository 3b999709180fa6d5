/// The share of each phone kind among the people at the venue (weights; need not sum to 1).
public struct PhoneMix: Sendable, Equatable, Codable {
    public var heraldAndroid: Double
    public var heraldAndroidWriter: Double
    public var heraldIPhoneForeground: Double
    public var heraldIPhoneBackground: Double
    public var gaenPhone: Double

    public init(
        heraldAndroid: Double, heraldAndroidWriter: Double, heraldIPhoneForeground: Double,
        heraldIPhoneBackground: Double, gaenPhone: Double
    ) {
        self.heraldAndroid = heraldAndroid
        self.heraldAndroidWriter = heraldAndroidWriter
        self.heraldIPhoneForeground = heraldIPhoneForeground
        self.heraldIPhoneBackground = heraldIPhoneBackground
        self.gaenPhone = gaenPhone
    }

    /// Half Android, half iPhone (most iPhones locked, i.e. in the background), plus a few phones
    /// with only Exposure Notification.
    public static let standard = PhoneMix(
        heraldAndroid: 0.40, heraldAndroidWriter: 0.05, heraldIPhoneForeground: 0.12, heraldIPhoneBackground: 0.33,
        gaenPhone: 0.10)

    /// Only phones of one kind (scenario tests).
    public static func only(_ kind: DeviceKind) -> PhoneMix {
        PhoneMix(
            heraldAndroid: kind == .heraldAndroid ? 1 : 0, heraldAndroidWriter: kind == .heraldAndroidWriter ? 1 : 0,
            heraldIPhoneForeground: kind == .heraldIPhoneForeground ? 1 : 0,
            heraldIPhoneBackground: kind == .heraldIPhoneBackground ? 1 : 0, gaenPhone: kind == .gaenPhone ? 1 : 0)
    }

    /// Weights in the order of ``DeviceKind/phoneKinds``.
    var weights: [Double] {
        [heraldAndroid, heraldAndroidWriter, heraldIPhoneForeground, heraldIPhoneBackground, gaenPhone]
    }
}

/// What the venue model generates: how many people, over how long, with which phones, and how
/// they behave. The defaults describe a café or pub; times are virtual seconds.
public struct VenueConfiguration: Sendable, Equatable {
    /// People who come in (each makes one visit, some a second one later).
    public var visitors: Int
    /// Opening hours; nobody is inside after closing.
    public var openingHours: Double
    /// Fixes the whole venue: same seed, same people, phones, times, distances and radio noise.
    public var seed: UInt64
    public var mix: PhoneMix
    /// People who pass by (under a minute in range) without coming in.
    public var walkPasts: Int
    /// Devices that stay in range all day (a speaker, a till, a fridge sensor).
    public var fixedDevices: Int
    /// Share of visitors carrying an Apple accessory (AirPods, a watch) besides their phone.
    public var accessoryShare: Double
    /// Share of visitors carrying another BLE device (a fitness band).
    public var wearableShare: Double
    /// Extra people, as a share of `visitors`, whose iPhone has no Herald app: they come and go
    /// like visitors, the node may connect to them, and nothing of theirs may be recorded.
    public var applePhoneShare: Double
    /// Share of Herald Android phones that rotate their address every few seconds (the others
    /// rotate every few minutes).
    public var fastRotationShare: Double

    /// Median stay, seconds (stays are log-normal around it).
    public var medianStay: Double
    /// Standard deviation of the stay's logarithm.
    public var staySigma: Double
    /// Shortest and longest stay, seconds.
    public var minimumStay: Double
    public var maximumStay: Double
    /// Chance that a visitor staying at least 20 minutes steps out briefly (30 s to half the
    /// check-out limit) and comes back: one visit in truth.
    public var stepOutChance: Double
    /// Chance that a visitor comes back after a long gap (at least twice the check-out limit):
    /// two visits in truth.
    public var returnChance: Double

    /// The diary's limits, which define a visit in truth: gaps of at most `checkOutSeconds` are
    /// one visit; visits longer than `checkInSeconds` must be recorded.
    public var checkInSeconds: Double
    public var checkOutSeconds: Double

    /// Unix seconds at virtual time 0 (when the venue opens).
    public var origin: Double

    public init(
        visitors: Int = 100, openingHours: Double = 3, seed: UInt64 = 1, mix: PhoneMix = .standard,
        walkPasts: Int? = nil, fixedDevices: Int = 4, accessoryShare: Double = 0.3, wearableShare: Double = 0.15,
        applePhoneShare: Double = 0.05, fastRotationShare: Double = 0.1, medianStay: Double = 40 * 60,
        staySigma: Double = 0.8, minimumStay: Double = 4 * 60, maximumStay: Double = 4 * 3600,
        stepOutChance: Double = 0.2, returnChance: Double = 0.1, checkInSeconds: Double = 120,
        checkOutSeconds: Double = 300, origin: Double = VenueConfiguration.defaultOrigin
    ) {
        self.visitors = visitors
        self.openingHours = openingHours
        self.seed = seed
        self.mix = mix
        self.walkPasts = walkPasts ?? visitors / 4
        self.fixedDevices = fixedDevices
        self.accessoryShare = accessoryShare
        self.wearableShare = wearableShare
        self.applePhoneShare = applePhoneShare
        self.fastRotationShare = fastRotationShare
        self.medianStay = medianStay
        self.staySigma = staySigma
        self.minimumStay = minimumStay
        self.maximumStay = maximumStay
        self.stepOutChance = stepOutChance
        self.returnChance = returnChance
        self.checkInSeconds = checkInSeconds
        self.checkOutSeconds = checkOutSeconds
        self.origin = origin
    }

    /// 2026-06-01 09:00:00 UTC: a fixed opening time, so that a seed repeats a run to the byte.
    public static let defaultOrigin: Double = 1_780_304_400

    /// Closing time, virtual seconds.
    public var closingTime: Double { openingHours * 3600 }
}
