import Foundation
import Glibc
import Testing
@testable import Appliance

/// The sealing codecs (bech32, age, BLAKE2b, minisign, the node key), checked against their
/// specifications' vectors and against the real `age`, `minisign` and `b2sum` programs
/// (Debian's, installed by scripts/setup).
@Suite struct SealingTests {
    static let age = "/usr/bin/age", ageKeygen = "/usr/bin/age-keygen", minisign = "/usr/bin/minisign"

    // MARK: bech32

    @Test func bech32VectorsFromBIP173() throws {
        for valid in ["A12UEL5L", "a12uel5l", "abcdef1qpzry9x8gf2tvdw0s3jn54khce6mua7lmqqqxw"] {
            #expect((try? Bech32.decode(valid).get()) != nil, "\(valid)")
        }
        func problem(_ text: String) -> Bech32.Problem? {
            if case .failure(let problem) = Bech32.decode(text) { return problem }
            return nil
        }
        #expect(problem("A12uEL5L") == .mixedCase)
        #expect(problem("a12uel5m") == .badChecksum)
        #expect(problem("pzry9x0s0muk") == .noSeparator)
        let data: [UInt8] = Array(0..<32)
        let text = Bech32.encode(hrp: "age", data: data)
        #expect(try Bech32.decode(text).get().data == data)
    }

    @Test func ageRecipientsFromAgeKeygenParseAndTyposAreCaught() throws {
        let dir = TemporaryDirectory("bech32")
        #expect(try runProgram(Self.ageKeygen, ["-o", dir.file("k")]).status == 0)
        let text = try String(contentsOfFile: dir.file("k"), encoding: .utf8)
        let recipientLine = try #require(text.split(separator: "\n").first { $0.hasPrefix("# public key: ") })
        let recipient = String(recipientLine.dropFirst("# public key: ".count))
        let secret = try #require(text.split(separator: "\n").first { $0.hasPrefix("AGE-SECRET-KEY-1") })
        let parsed = try AgeRecipient.parse(recipient).get()
        #expect(parsed.description == recipient)
        // Our identity codec derives the same public key age-keygen printed.
        #expect(try AgeIdentity.parse(String(secret)).get().recipient == parsed)
        var typo = Array(recipient)
        typo[10] = typo[10] == "q" ? "p" : "q"
        #expect(AgeRecipient.parse(String(typo)) == .failure(.bech32(.badChecksum)))
        #expect(AgeRecipient.parse("ssh-ed25519 AAAA") == .failure(.notAnAgeKey))
        #expect(AgeRecipient.parse(Bech32.encode(hrp: "age", data: Array(repeating: 1, count: 16))) == .failure(.wrongLength(16)))
    }

    /// Low-order X25519 points and other encodings of them (u ≥ p, the ignored top bit set):
    /// every shared secret with one is all zeros, so a file sealed to it opens for anyone.
    static let weakKeys: [String: String] = [
        "zero": "0000000000000000000000000000000000000000000000000000000000000000",
        "one": "0100000000000000000000000000000000000000000000000000000000000000",
        "p - 1": "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "order 8": "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
        "order 8, the other": "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
        "p (zero)": "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "p + 1 (one)": "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
        "zero, top bit set": "0000000000000000000000000000000000000000000000000000000000000080",
        "order 8, top bit set": "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b880",
    ]

    static func bytes(hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { i in
            UInt8(hex[hex.index(hex.startIndex, offsetBy: i)..<hex.index(hex.startIndex, offsetBy: i + 2)], radix: 16)!
        }
    }

    /// In name order. (A closure in the `@Test` attribute itself crashes Swift 6.0.3's compiler.)
    static let weakKeysByName = weakKeys.sorted { $0.key < $1.key }

    @Test(arguments: weakKeysByName)
    func weakRecipientsAreRefusedAsAgeRefusesThem(name: String, hex: String) throws {
        let weak = AgeRecipient(publicKey: Self.bytes(hex: hex))
        #expect(AgeRecipient.parse(weak.description) == .failure(.lowOrder), "\(name)")
        #expect(AgeKeyProblem.lowOrder.description.contains("weak key"))
        // Debian's age refuses the same key: these are the class, not our invention.
        let dir = TemporaryDirectory("weak-age")
        FileManager.default.createFile(atPath: dir.file("p"), contents: Data("visit".utf8))
        #expect(try runProgram(Self.age, ["-r", weak.description, "-o", dir.file("p.age"), dir.file("p")]).status != 0, "\(name)")
        // Beside a real key, the writer still refuses, before writing a byte.
        var written: [UInt8] = []
        #expect(throws: AgeWriterError.weakRecipient(weak)) {
            _ = try AgeWriter(recipients: [AgeIdentity.generate().recipient, weak]) { written += $0 }
        }
        #expect(written.isEmpty)
    }

    @Test func realKeysAreNotMistakenForWeakOnes() throws {
        for _ in 0..<200 {
            let recipient = AgeIdentity.generate().recipient
            #expect(try AgeRecipient.parse(recipient.description).get() == recipient)
        }
    }

    // MARK: age

    /// Seals `plaintext` with our writer (handed in pieces of `piece` bytes) to fresh age-keygen keys.
    func sealed(_ plaintext: [UInt8], piece: Int = 1000, recipients count: Int = 1, dir: TemporaryDirectory) throws -> (file: String, keys: [String]) {
        var keys: [String] = [], recipients: [AgeRecipient] = []
        for i in 0..<count {
            let keyFile = dir.file("key\(i)")
            #expect(try runProgram(Self.ageKeygen, ["-o", keyFile]).status == 0)
            let out = try runProgram(Self.ageKeygen, ["-y", keyFile]).output.trimmingCharacters(in: .whitespacesAndNewlines)
            recipients.append(try AgeRecipient.parse(out).get())
            keys.append(keyFile)
        }
        var ciphertext: [UInt8] = []
        let writer = try AgeWriter(recipients: recipients) { ciphertext += $0 }
        var index = 0
        while index < plaintext.count {
            try writer.write(plaintext[index..<min(index + piece, plaintext.count)])
            index += piece
        }
        try writer.finish()
        let file = dir.file("sealed.age")
        FileManager.default.createFile(atPath: file, contents: Data(ciphertext))
        return (file, keys)
    }

    func decrypt(_ file: String, key: String, dir: TemporaryDirectory) throws -> (status: Int32, output: String, plaintext: Data?) {
        let out = dir.file("opened-\(UUID().uuidString.prefix(6))")
        let result = try runProgram(Self.age, ["-d", "-i", key, "-o", out, file])
        // age creates no output file for an empty plaintext.
        return (result.status, result.output, result.status == 0 ? FileManager.default.contents(atPath: out) ?? Data() : nil)
    }

    @Test(arguments: [0, 1, 65_535, 65_536, 65_537, 2 * 65_536, 300_001])
    func ageOpensWhatWeSealAtEveryChunkBoundary(size: Int) throws {
        let dir = TemporaryDirectory("age")
        let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
        let (file, keys) = try sealed(plaintext, piece: 4093, dir: dir)
        let opened = try decrypt(file, key: keys[0], dir: dir)
        #expect(opened.status == 0, "\(opened.output)")
        #expect(opened.plaintext == Data(plaintext))
    }

    @Test func everyRecipientOpensItAndNoOtherKeyDoes() throws {
        let dir = TemporaryDirectory("age-many")
        let plaintext = Array("visit_id,kind\r\n1,herald\r\n".utf8)
        let (file, keys) = try sealed(plaintext, recipients: 3, dir: dir)
        for key in keys { #expect(try decrypt(file, key: key, dir: dir).plaintext == Data(plaintext)) }
        #expect(try runProgram(Self.ageKeygen, ["-o", dir.file("stranger")]).status == 0)
        let wrong = try decrypt(file, key: dir.file("stranger"), dir: dir)
        #expect(wrong.status != 0)
        #expect(wrong.output.contains("no identity matched"), "\(wrong.output)")
    }

    @Test func aTruncatedOrFlippedFileFailsLoudly() throws {
        let dir = TemporaryDirectory("age-tamper")
        let plaintext = (0..<150_000).map { UInt8(truncatingIfNeeded: $0) }
        let (file, keys) = try sealed(plaintext, dir: dir)
        let bytes = try #require(FileManager.default.contents(atPath: file))
        // Cut at a chunk boundary (a whole last chunk missing: STREAM's last-chunk flag catches
        // it), mid-chunk, and in the header.
        for cut in [bytes.count - (150_000 - 2 * 65_536) - 16, bytes.count - 100, 100] {
            FileManager.default.createFile(atPath: dir.file("cut"), contents: bytes.prefix(cut))
            let opened = try decrypt(dir.file("cut"), key: keys[0], dir: dir)
            #expect(opened.status != 0, "cut at \(cut) opened")
        }
        for position in [30, bytes.count / 2, bytes.count - 1] {
            var flipped = bytes
            flipped[position] ^= 0x01
            FileManager.default.createFile(atPath: dir.file("flipped"), contents: flipped)
            #expect(try decrypt(dir.file("flipped"), key: keys[0], dir: dir).status != 0, "flip at \(position) opened")
        }
    }

    // MARK: BLAKE2b

    @Test func blake2bMatchesRFC7693AndB2sum() throws {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(BLAKE2b.hash(Array("abc".utf8))) == "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d17d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923")
        #expect(hex(BLAKE2b.hash([])) == "786a02f742015903c6c6fd852552d272912f4740e15847618a86e217f71f5419d25e1031afee585313896444934eb04b903a685b1448b755d56f701afe9be2ce")
        let dir = TemporaryDirectory("b2")
        for size in [127, 128, 129, 256, 1_000_003] {
            let data = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }
            FileManager.default.createFile(atPath: dir.file("f"), contents: Data(data))
            let b2sum = try runProgram("/usr/bin/b2sum", [dir.file("f")]).output.prefix(128)
            var streamed = BLAKE2b()
            var i = 0
            while i < data.count {
                streamed.update(data[i..<min(i + 1000, data.count)])
                i += 1000
            }
            #expect(hex(streamed.finalize()) == b2sum, "size \(size)")
        }
    }

    // MARK: minisign and the node key

    @Test func minisignVerifiesOurSignatureAndRefusesAChangedFileOrComment() throws {
        let dir = TemporaryDirectory("minisign")
        let key = try NodeSigningKey.loadOrCreate(at: dir.file("node.key")).key
        let content = Array("sealed bytes\n".utf8) + (0..<70_000).map { UInt8(truncatingIfNeeded: $0) }
        FileManager.default.createFile(atPath: dir.file("f.age"), contents: Data(content))
        let signature = try Minisign.signature(
            hash: BLAKE2b.hash(content), key: key, trustedComment: "timestamp:1\tfile:f.age\tvenue:123123", untrustedComment: "test")
        FileManager.default.createFile(atPath: dir.file("f.age.minisig"), contents: Data(signature.utf8))
        let verified = try runProgram(Self.minisign, ["-Vm", dir.file("f.age"), "-P", Minisign.publicKey(key)])
        #expect(verified.status == 0, "\(verified.output)")
        #expect(verified.output.contains("Trusted comment: timestamp:1\tfile:f.age\tvenue:123123"))
        // The .pub file form works with -p.
        FileManager.default.createFile(atPath: dir.file("node.pub"), contents: Data(Minisign.publicKeyFile(key).utf8))
        #expect(try runProgram(Self.minisign, ["-Vm", dir.file("f.age"), "-p", dir.file("node.pub")]).status == 0)

        var changed = content
        changed[5] ^= 1
        FileManager.default.createFile(atPath: dir.file("f.age"), contents: Data(changed))
        #expect(try runProgram(Self.minisign, ["-Vm", dir.file("f.age"), "-P", Minisign.publicKey(key)]).status != 0)
        FileManager.default.createFile(atPath: dir.file("f.age"), contents: Data(content))
        let forged = signature.replacingOccurrences(of: "venue:123123", with: "venue:999999")
        FileManager.default.createFile(atPath: dir.file("f.age.minisig"), contents: Data(forged.utf8))
        #expect(try runProgram(Self.minisign, ["-Vm", dir.file("f.age"), "-P", Minisign.publicKey(key)]).status != 0)
        // Another node's key does not verify it.
        let other = try NodeSigningKey.loadOrCreate(at: dir.file("other.key")).key
        FileManager.default.createFile(atPath: dir.file("f.age.minisig"), contents: Data(signature.utf8))
        #expect(try runProgram(Self.minisign, ["-Vm", dir.file("f.age"), "-P", Minisign.publicKey(other)]).status != 0)
    }

    @Test func theNodeKeyIsCreatedOnce0600AndKept() throws {
        let dir = TemporaryDirectory("node-key")
        let path = dir.file("node-signing.key")
        let (first, created) = try NodeSigningKey.loadOrCreate(at: path)
        #expect(created)
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let (again, createdAgain) = try NodeSigningKey.loadOrCreate(at: path)
        #expect(!createdAgain)
        #expect(again.publicKey == first.publicKey)
        #expect(first.fingerprint.count == 39)  // 8 groups of 4 hex digits
        #expect(first.fingerprint.replacingOccurrences(of: " ", with: "").hasPrefix(first.minisignKeyID))
        #expect(dir.names() == ["node-signing.key"])  // no temporary left
        // The secret never appears in what is shown.
        let secret = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")[1]
        #expect(!Minisign.publicKeyFile(first).contains(secret))
        chmod(path, 0o644)
        #expect(throws: NodeKeyError.self) { try NodeSigningKey.loadOrCreate(at: path) }
    }

    @Test func theSealerSignsWhatItDelivers() throws {
        let dir = TemporaryDirectory("sealer")
        let key = try NodeSigningKey.loadOrCreate(at: dir.file("node.key")).key
        #expect(try runProgram(Self.ageKeygen, ["-o", dir.file("tracers.key")]).status == 0)
        let recipient = try AgeRecipient.parse(
            try runProgram(Self.ageKeygen, ["-y", dir.file("tracers.key")]).output.trimmingCharacters(in: .whitespacesAndNewlines)).get()
        var out: [UInt8] = []
        let sealer = try ExportSealer(sealing: ExportSealing(recipients: [recipient], key: key)) { out += $0 }
        try sealer.write(Array("a,b\r\n1,2\r\n".utf8))
        let signature = try #require(try sealer.finish(trustedComment: "t", untrustedComment: "u"))
        #expect(sealer.bytesOut == out.count)
        FileManager.default.createFile(atPath: dir.file("x.csv.age"), contents: Data(out))
        FileManager.default.createFile(atPath: dir.file("x.csv.age.minisig"), contents: Data(signature.utf8))
        #expect(try runProgram(Self.minisign, ["-Vm", dir.file("x.csv.age"), "-P", Minisign.publicKey(key)]).status == 0)
        #expect(try decrypt(dir.file("x.csv.age"), key: dir.file("tracers.key"), dir: dir).plaintext == Data("a,b\r\n1,2\r\n".utf8))
    }
}

/// `AgeReader` (for `venue-beacon open`) against files sealed by Debian's `age -r`.
@Suite struct AgeReaderTests {
    func open(_ file: String, _ identity: AgeIdentity) throws -> [UInt8] {
        let handle = try #require(FileHandle(forReadingAtPath: file))
        defer { try? handle.close() }
        var out: [UInt8] = []
        try AgeReader.open(identity: identity, read: { Array(handle.readData(ofLength: $0)) }, output: { out += $0 })
        return out
    }

    @Test(arguments: [0, 1, 65_536, 65_537, 200_000])
    func opensWhatAgeSealedForOurKey(size: Int) throws {
        let dir = TemporaryDirectory("age-reader")
        let identity = AgeIdentity.generate()
        let plaintext = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13) }
        FileManager.default.createFile(atPath: dir.file("p"), contents: Data(plaintext))
        let sealed = try runProgram(SealingTests.age, ["-r", identity.recipient.description, "-o", dir.file("p.age"), dir.file("p")])
        #expect(sealed.status == 0, "\(sealed.output)")
        #expect(try open(dir.file("p.age"), identity) == plaintext)
    }

    @Test func wrongKeyTruncatedAndFlippedFailLoudly() throws {
        let dir = TemporaryDirectory("age-reader-bad")
        let identity = AgeIdentity.generate()
        FileManager.default.createFile(atPath: dir.file("p"), contents: Data((0..<150_000).map { UInt8(truncatingIfNeeded: $0) }))
        #expect(try runProgram(SealingTests.age, ["-r", identity.recipient.description, "-o", dir.file("p.age"), dir.file("p")]).status == 0)
        #expect(throws: AgeReader.Problem.noMatchingIdentity) { try open(dir.file("p.age"), AgeIdentity.generate()) }
        let bytes = try #require(FileManager.default.contents(atPath: dir.file("p.age")))
        for cut in [bytes.count - 10, bytes.count - (150_000 - 2 * 65_536) - 16] {
            FileManager.default.createFile(atPath: dir.file("cut"), contents: bytes.prefix(cut))
            #expect(throws: AgeReader.Problem.self) { try open(dir.file("cut"), identity) }
        }
        var flipped = bytes
        flipped[bytes.count / 2] ^= 1
        FileManager.default.createFile(atPath: dir.file("flip"), contents: flipped)
        #expect(throws: AgeReader.Problem.damagedPayload) { try open(dir.file("flip"), identity) }
        // A flipped bit in the last chunk is damage, not truncation; a cut at a chunk boundary
        // (the file ends after a full middle chunk) is truncation.
        var lastFlipped = bytes
        lastFlipped[bytes.count - 20] ^= 0x80
        FileManager.default.createFile(atPath: dir.file("flip-last"), contents: lastFlipped)
        #expect(throws: AgeReader.Problem.damagedPayload) { try open(dir.file("flip-last"), identity) }
        FileManager.default.createFile(atPath: dir.file("cut-boundary"), contents: bytes.prefix(bytes.count - (150_000 - 2 * 65_536) - 16))
        #expect(throws: AgeReader.Problem.truncated) { try open(dir.file("cut-boundary"), identity) }
        var header = bytes
        header[40] ^= 1
        FileManager.default.createFile(atPath: dir.file("head"), contents: header)
        #expect(throws: AgeReader.Problem.self) { try open(dir.file("head"), identity) }
    }
}
