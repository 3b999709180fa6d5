import CMosquitto
import Foundation

/// One MQTT v5 session with the venue's broker through libmosquitto, driven from one thread of
/// the caller's: ``poll(timeout:)`` runs libmosquitto's loop once and returns what happened.
///
/// Persistent session (clean start off, a session expiry), QoS 1, optional TLS with the venue's
/// CA and a last will. libmosquitto's own queue lives in memory and dies with the process, so
/// nothing here is trusted to keep a message: the node's diary is the outbox (``NodeReplicator``).
/// The PUBACK of a publish can be handled before `mosquitto_publish_v5` has returned its message
/// id, so one lock covers every call into the library and every callback.
final class MQTTSession: @unchecked Sendable {
    struct Options: Sendable {
        var host: String
        var port: Int
        /// The venue CA's PEM file: TLS on.
        var caFile: String?
        var clientID: String
        var username: String
        var password: String?
        /// Seconds the broker keeps the session (subscriptions, queued QoS 1 messages) while
        /// the client is away.
        var sessionExpiry: UInt32 = 7 * 86_400
        var keepalive: Int32 = 30
        /// The last will: published by the broker, retained, when the session ends uncleanly.
        var will: (topic: String, payload: [UInt8])?
    }

    enum Event: Sendable, Equatable {
        /// CONNACK: reason 0 is success (MQTT v5 reason codes otherwise: 0x86 bad user name or
        /// password, 0x87 not authorised, …).
        case connected(reason: Int32)
        case disconnected(reason: Int32)
        /// PUBACK of a QoS 1 publish (0x87: refused by the broker's ACL; 0x10: no subscriber).
        case published(mid: Int32, reason: Int32)
        case message(topic: String, payload: [UInt8], retained: Bool)
        case subscribed(mid: Int32, granted: [Int32])
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let handle: OpaquePointer
    private let lock = NSRecursiveLock()
    private var events: [Event] = []
    let options: Options

    private static let libraryReady: Void = { mosquitto_lib_init() }()

    init(_ options: Options) throws(Failure) {
        _ = Self.libraryReady
        self.options = options
        guard let handle = mosquitto_new(options.clientID, false, nil) else {
            throw Failure(description: "libmosquitto could not make a client (\(String(cString: strerror(errno))))")
        }
        self.handle = handle
        mosquitto_user_data_set(handle, Unmanaged.passUnretained(self).toOpaque())
        try check(mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5), "set MQTT v5")
        try check(mosquitto_username_pw_set(handle, options.username, options.password), "set the login")
        if let caFile = options.caFile {
            try check(mosquitto_tls_set(handle, caFile, nil, nil, nil, nil), "use the CA file \(caFile)")
        }
        if let will = options.will {
            let rc = will.payload.withUnsafeBytes { bytes in
                mosquitto_will_set_v5(handle, will.topic, Int32(bytes.count), bytes.baseAddress, 1, true, nil)
            }
            try check(rc, "set the last will")
        }
        mosquitto_connect_v5_callback_set(handle) { _, object, reason, _, _ in
            MQTTSession.from(object).record(.connected(reason: reason))
        }
        mosquitto_disconnect_v5_callback_set(handle) { _, object, reason, _ in
            MQTTSession.from(object).record(.disconnected(reason: reason))
        }
        mosquitto_publish_v5_callback_set(handle) { _, object, mid, reason, _ in
            MQTTSession.from(object).record(.published(mid: mid, reason: reason))
        }
        mosquitto_subscribe_v5_callback_set(handle) { _, object, mid, count, granted, _ in
            let codes = (0..<Int(count)).map { index in granted.map { pointer in pointer[index] } ?? 0 }
            MQTTSession.from(object).record(.subscribed(mid: mid, granted: codes))
        }
        mosquitto_message_v5_callback_set(handle) { _, object, message, _ in
            guard let message = message?.pointee, let topic = message.topic else { return }
            let payload = message.payload.map { [UInt8](UnsafeRawBufferPointer(start: $0, count: Int(message.payloadlen))) } ?? []
            MQTTSession.from(object).record(.message(topic: String(cString: topic), payload: payload, retained: message.retain))
        }
    }

    deinit {
        mosquitto_destroy(handle)
    }

    private static func from(_ object: UnsafeMutableRawPointer?) -> MQTTSession {
        Unmanaged<MQTTSession>.fromOpaque(object!).takeUnretainedValue()
    }

    private func record(_ event: Event) {
        lock.lock()
        events.append(event)
        lock.unlock()
    }

    private func check(_ rc: Int32, _ what: String) throws(Failure) {
        guard rc == MOSQ_ERR_SUCCESS.rawValue else { throw Failure(description: "cannot \(what): \(Self.describe(rc))") }
    }

    /// libmosquitto's words for one of its error codes.
    static func describe(_ rc: Int32) -> String {
        if rc == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
        return String(cString: mosquitto_strerror(rc))
    }

    /// An MQTT v5 reason code in words ("Not authorized (0x87)").
    static func reason(_ code: Int32) -> String {
        "\(String(cString: mosquitto_reason_string(code))) (0x\(String(code, radix: 16)))"
    }

    /// Opens the TCP (or TLS) connection and sends CONNECT, with the session's expiry; the
    /// CONNACK arrives as ``Event/connected(reason:)`` from ``poll(timeout:)``. Called again after
    /// a loss, it reconnects to the same broker.
    func connect() throws(Failure) {
        lock.lock()
        defer { lock.unlock() }
        var properties: OpaquePointer? = nil
        defer { mosquitto_property_free_all(&properties) }
        mosquitto_property_add_int32(&properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), options.sessionExpiry)
        let rc = mosquitto_connect_bind_v5(handle, options.host, Int32(options.port), options.keepalive, nil, properties)
        try check(rc, "reach the broker at \(options.host):\(options.port)")
    }

    /// Runs libmosquitto's network loop once (waiting at most `timeout` seconds for traffic) and
    /// returns the events it produced. Throws when the connection is gone.
    func poll(timeout: Double) throws(Failure) -> [Event] {
        lock.lock()
        let rc = mosquitto_loop(handle, Int32(max(0, min(timeout, 60)) * 1000), 1)
        let happened = events
        events.removeAll()
        lock.unlock()
        if rc != MOSQ_ERR_SUCCESS.rawValue && happened.isEmpty {
            throw Failure(description: "connection to the broker lost: \(Self.describe(rc))")
        }
        return happened
    }

    /// Publishes at QoS 1; returns the message id its PUBACK will carry.
    func publish(_ topic: String, _ payload: [UInt8], retain: Bool = false) throws(Failure) -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        var mid: Int32 = 0
        let rc = payload.withUnsafeBytes { bytes in
            mosquitto_publish_v5(handle, &mid, topic, Int32(bytes.count), bytes.baseAddress, 1, retain, nil)
        }
        try check(rc, "publish to \(topic)")
        return mid
    }

    func subscribe(_ topic: String) throws(Failure) -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        var mid: Int32 = 0
        try check(mosquitto_subscribe_v5(handle, &mid, topic, 1, 0, nil), "subscribe to \(topic)")
        return mid
    }

    /// Ends the session cleanly (no last will), flushing what libmosquitto still has to write.
    func disconnect() {
        lock.lock()
        defer { lock.unlock() }
        mosquitto_disconnect_v5(handle, 0, nil)
        _ = mosquitto_loop(handle, 100, 1)
    }
}
