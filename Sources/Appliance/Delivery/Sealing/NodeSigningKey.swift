import Crypto
import Foundation
import Glibc

/// The node's Ed25519 signing key: created once in the state directory (`export.signing_key`,
/// mode 0600), kept across upgrades, never exported; only its public key leaves the node
/// (`venue-beacon identity`, the signatures' key ID, the fingerprint in emails and exports).
///
/// The file holds one comment line and the 32-byte Ed25519 seed in base64.
public struct NodeSigningKey: Sendable {
    private let seed: [UInt8]
    /// The Ed25519 public key.
    public let publicKey: [UInt8]
    /// minisign's key ID: the first 8 bytes of SHA-256(public key), stored so that minisign
    /// prints them in that order (it reads the ID as a little-endian number).
    public let keyID: [UInt8]
    /// SHA-256 of the public key: the fingerprint's source.
    private let digest: [UInt8]

    public init(seed: [UInt8]) throws {
        let privateKey = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
        self.seed = seed
        publicKey = Array(privateKey.publicKey.rawRepresentation)
        digest = Array(SHA256.hash(data: publicKey))
        keyID = Array(digest.prefix(8).reversed())
    }

    /// The first 128 bits of SHA-256(public key) in groups of four hex digits, to read out over
    /// the phone or print on a form. Its first 16 digits are minisign's key ID.
    public var fingerprint: String {
        let hex = digest.prefix(16).map { String(format: "%02X", $0) }.joined()
        return stride(from: 0, to: hex.count, by: 4).map { i in
            String(hex[hex.index(hex.startIndex, offsetBy: i)..<hex.index(hex.startIndex, offsetBy: i + 4)])
        }.joined(separator: " ")
    }

    /// The key ID as minisign prints it (16 hex digits).
    public var minisignKeyID: String { digest.prefix(8).map { String(format: "%02X", $0) }.joined() }

    func sign(_ message: [UInt8]) throws -> [UInt8] {
        Array(try Curve25519.Signing.PrivateKey(rawRepresentation: seed).signature(for: message))
    }

    static let header = "venue-beacon node signing key (Ed25519 seed, base64): never copy this file off the node"

    /// Reads the key at `path`, or creates it when there is none. Creation is atomic and
    /// happens once: a complete file is linked into place only if nothing is there yet, so two
    /// processes starting together end up with the same key. Returns whether it was created.
    public static func loadOrCreate(at path: String) throws(NodeKeyError) -> (key: NodeSigningKey, created: Bool) {
        if let key = try loadIfPresent(at: path) { return (key, false) }
        let seed = Array(Curve25519.Signing.PrivateKey().rawRepresentation)
        let text = header + "\n" + Data(seed).base64EncodedString() + "\n"
        let directory = (path as NSString).deletingLastPathComponent
        let temporary = "\(directory.isEmpty ? "." : directory)/.\((path as NSString).lastPathComponent).new-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .cannotCreate(FileSystemError(operation: "create", path: temporary, code: errno)) }
        defer { unlink(temporary) }
        do throws(FileSystemError) {
            guard fchmod(fd, 0o600) == 0 else { throw FileSystemError(operation: "chmod", path: temporary, code: errno) }
            // Made by root (`sudo venue-beacon identity` before the first start): the key
            // belongs to whoever owns the state directory (the service's user), not to root.
            var owner = stat()
            if geteuid() == 0, stat(directory.isEmpty ? "." : directory, &owner) == 0, owner.st_uid != 0 {
                guard fchown(fd, owner.st_uid, owner.st_gid) == 0 else {
                    throw FileSystemError(operation: "chown", path: temporary, code: errno)
                }
            }
            try FileDescriptor.writeAll(fd, Array(text.utf8), path: temporary)
            guard fsync(fd) == 0 else { throw FileSystemError(operation: "fsync", path: temporary, code: errno) }
            close(fd)
        } catch {
            close(fd)
            throw .cannotCreate(error)
        }
        // link(2) never replaces: whoever links first wins, and the other reads that key.
        if link(temporary, path) != 0 {
            let code = errno
            if code == EEXIST, let key = try loadIfPresent(at: path) { return (key, false) }
            throw .cannotCreate(FileSystemError(operation: "create", path: path, code: code))
        }
        try? AtomicFile.syncDirectory(directory)
        do {
            return (try NodeSigningKey(seed: seed), true)
        } catch {
            throw .malformed(path)
        }
    }

    /// Reads the key at `path`; nil when there is no file. Refuses a key others can read.
    public static func loadIfPresent(at path: String) throws(NodeKeyError) -> NodeSigningKey? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw .unreadable(FileSystemError(operation: "open", path: path, code: errno))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(FileSystemError(operation: "stat", path: path, code: errno)) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .malformed(path) }
        guard info.st_mode & 0o077 == 0 else { throw .exposed(path, mode: info.st_mode & 0o777) }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = read(fd, &bytes, bytes.count)
        guard n >= 0 else { throw .unreadable(FileSystemError(operation: "read", path: path, code: errno)) }
        let lines = String(decoding: bytes[..<n], as: UTF8.self).split(separator: "\n")
        guard lines.count == 2, let seed = Data(base64Encoded: String(lines[1])), seed.count == 32,
            let key = try? NodeSigningKey(seed: Array(seed))
        else { throw .malformed(path) }
        return key
    }
}

public enum NodeKeyError: Error, CustomStringConvertible {
    case cannotCreate(FileSystemError)
    case unreadable(FileSystemError)
    case malformed(String)
    case exposed(String, mode: mode_t)

    public var description: String {
        switch self {
        case .cannotCreate(let error): "cannot create the node's signing key: \(error)"
        case .unreadable(let error): "cannot read the node's signing key: \(error)"
        case .malformed(let path): "\(path) is not a venue-beacon signing key (damaged?); move it aside only if you mean to give the node a new identity"
        case .exposed(let path, let mode):
            "\(path) can be read by others (mode \(String(mode, radix: 8))): chmod 600 it, and consider the key compromised if others did read it"
        }
    }
}
