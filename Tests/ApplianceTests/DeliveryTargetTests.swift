import Foundation
import Testing
@testable import Appliance

@Suite struct SendmailTransportTests {
    @Test func acceptedMessageArrivesOnStdinWithTheSendmailArguments() throws {
        let dir = TemporaryDirectory("sendmail")
        let program = dir.script("sendmail", "echo \"$@\" > \(dir.file("args")); cat > \(dir.file("received"))")
        let message = dir.file("m.eml")
        try Data("To: a@b.org\n\nhello\n.\n".utf8).write(to: URL(fileURLWithPath: message))
        try SendmailTransport(program: program).handOff(messageAt: message)
        #expect(FileManager.default.contents(atPath: dir.file("received")) == FileManager.default.contents(atPath: message))
        #expect(String(decoding: FileManager.default.contents(atPath: dir.file("args")) ?? Data(), as: UTF8.self) == "-t -i\n")
    }

    @Test func nonZeroExitIsAFailureWithStderr() throws {
        let dir = TemporaryDirectory("sendmail")
        let program = dir.script("sendmail", "cat >/dev/null; echo 'msmtp: cannot connect to 127.0.0.1, port 1: Connection refused' >&2; exit 69")
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir.file("m")))
        #expect(throws: HandOffError("\(program) exited with status 69: msmtp: cannot connect to 127.0.0.1, port 1: Connection refused")) {
            try SendmailTransport(program: program).handOff(messageAt: dir.file("m"))
        }
    }

    @Test func missingProgramSaysWhatToInstall() throws {
        let dir = TemporaryDirectory("sendmail")
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir.file("m")))
        let error = thrownError(HandOffError.self) {
            try SendmailTransport(program: "/nonexistent/sendmail").handOff(messageAt: dir.file("m"))
        }
        #expect(error?.reason.contains("/nonexistent/sendmail does not exist") == true)
        #expect(error?.reason.contains("msmtp-mta") == true)
    }

    /// Dispatch threads block most signals; the child must not inherit that (msmtp has to be
    /// stoppable, and it must see SIGPIPE like any program).
    @Test func programStartsWithNoBlockedSignals() throws {
        let dir = TemporaryDirectory("sendmail")
        let program = dir.script("sendmail", "cat >/dev/null; grep SigBlk /proc/self/status > \(dir.file("mask"))")
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir.file("m")))
        try SendmailTransport(program: program).handOff(messageAt: dir.file("m"))
        let mask = String(decoding: FileManager.default.contents(atPath: dir.file("mask")) ?? Data(), as: UTF8.self)
        #expect(mask == "SigBlk:\t0000000000000000\n")
    }

    @Test func hangingProgramIsStoppedAtTheTimeoutWithItsChildren() async throws {
        let dir = TemporaryDirectory("sendmail")
        // A child of sendmail's (msmtp's own helper, say) that would outlive a kill of sendmail alone.
        let program = dir.script("sendmail", "sleep 300 & echo $! > \(dir.file("child")); wait")
        try Data("x".utf8).write(to: URL(fileURLWithPath: dir.file("m")))
        let error = thrownError(HandOffError.self) {
            try SendmailTransport(program: program, timeout: 0.5).handOff(messageAt: dir.file("m"))
        }
        #expect(error?.reason.contains("did not finish within") == true)
        let child = try #require(Int32(String(decoding: FileManager.default.contents(atPath: dir.file("child")) ?? Data(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)))
        // Killed with the group: gone, or a zombie until init reaps it, once the kernel has
        // delivered the signal; a child left out of the kill sleeps on for 300 s.
        func state() -> Substring? { (try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8))?.split(separator: " ").dropFirst(2).first }
        #expect(await eventually { state() == nil || state() == "Z" }, "sendmail's child \(child) survived: \(state() ?? "")")
        kill(child, SIGKILL)
    }

    /// A sendmail that reads part of a message and exits 0 cannot have sent it: the message
    /// stays in the outbox.
    @Test func aProgramThatStopsReadingEarlyHasNotSentIt() throws {
        let dir = TemporaryDirectory("sendmail")
        try Data(repeating: UInt8(ascii: "m"), count: 300_000).write(to: URL(fileURLWithPath: dir.file("m")))
        for (body, read) in [("dd bs=100 count=1 of=/dev/null 2>/dev/null", "100"), ("exit 0", "0")] {
            let program = dir.script("sendmail-\(read)", body)
            #expect(throws: HandOffError("\(program) exited with status 0 having read only \(read) of the message's 300000 bytes: not sent")) {
                try SendmailTransport(program: program).handOff(messageAt: dir.file("m"))
            }
        }
        let whole = dir.script("sendmail-whole", "cat >/dev/null")
        #expect(throws: Never.self) { try SendmailTransport(program: whole).handOff(messageAt: dir.file("m")) }
    }
}

@Suite struct DirectoryDeliveryTests {
    @Test func writesTheExactBytesAtomically() throws {
        let dir = TemporaryDirectory("usb")
        let path = try DirectoryDelivery(directory: dir.path, requireMount: false).write(Fixture.csv, named: "venue-diary-1-20260101-20260115.csv")
        #expect(path == dir.file("venue-diary-1-20260101-20260115.csv"))
        #expect(FileManager.default.contents(atPath: path) == Fixture.csv)
        #expect(dir.names() == ["venue-diary-1-20260101-20260115.csv"])  // no temporary file left
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)  // visit data: private where the file system has modes
        // Again with the same name: replaced, still one file.
        _ = try DirectoryDelivery(directory: dir.path, requireMount: false).write(Data("new".utf8), named: "venue-diary-1-20260101-20260115.csv")
        #expect(FileManager.default.contents(atPath: path) == Data("new".utf8))
        #expect(dir.names().count == 1)
    }

    @Test func missingDirectory() {
        let dir = TemporaryDirectory("usb")
        let target = dir.file("stick")
        #expect(throws: DirectoryDeliveryError.missing(target)) {
            try DirectoryDelivery(directory: target, requireMount: true).write(Fixture.csv, named: "x.csv")
        }
        #expect(DirectoryDeliveryError.missing(target).description.contains("does not exist: is the USB stick plugged in and mounted?"))
    }

    @Test func notADirectory() throws {
        let dir = TemporaryDirectory("usb")
        try Data().write(to: URL(fileURLWithPath: dir.file("file")))
        #expect(throws: DirectoryDeliveryError.notADirectory(dir.file("file"))) {
            try DirectoryDelivery(directory: dir.file("file"), requireMount: false).check()
        }
    }

    @Test func plainDirectoryIsRefusedWhenAMountIsRequired() {
        let dir = TemporaryDirectory("usb")
        #expect(throws: DirectoryDeliveryError.notMounted(dir.path)) {
            try DirectoryDelivery(directory: dir.path, requireMount: true).check()
        }
    }

    /// A read-only file system, for real: a tmpfs mounted read-only (the tests run as root with
    /// CAP_SYS_ADMIN, where root's permission bypass does not apply to EROFS). It is a mount
    /// point, so the mount check passes and the read-only check is what refuses it.
    @Test func readOnlyMountIsRefusedAsReadOnly() throws {
        let dir = TemporaryDirectory("usb")
        let mountPoint = dir.file("stick")
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        let mounted = try runProgram("/usr/bin/mount", ["-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", mountPoint])
        try #require(mounted.status == 0, "mounting a read-only tmpfs failed: \(mounted.output)")
        defer { _ = try? runProgram("/usr/bin/umount", [mountPoint]) }

        #expect(throws: DirectoryDeliveryError.readOnly(mountPoint)) {
            try DirectoryDelivery(directory: mountPoint, requireMount: true).write(Fixture.csv, named: "x.csv")
        }
        #expect(DirectoryDeliveryError.readOnly(mountPoint).description.contains("is read-only"))

        // The same mount made writable is accepted (so the refusal above was the read-only flag).
        let remounted = try runProgram("/usr/bin/mount", ["-o", "remount,rw", mountPoint])
        try #require(remounted.status == 0, "\(remounted.output)")
        let path = try DirectoryDelivery(directory: mountPoint, requireMount: true).write(Fixture.csv, named: "x.csv")
        #expect(FileManager.default.contents(atPath: path) == Fixture.csv)
    }
}
