import Testing
@testable import Replication

@Suite struct ReplicationSenderTests {
    let options = ReplicationSender.Options(batchSize: 10, window: 2, resendAfter: 10, maximumResendAfter: 40)

    @Test func nothingIsSentBeforeTheSessionIsUp() {
        var sender = ReplicationSender(diary: "d", acked: 5, options: options)
        #expect(sender.nextBatch() == nil)
        sender.connected(now: 0)
        #expect(sender.nextBatch() == 5)
    }

    @Test func atMostTheWindowIsAheadOfTheAcknowledgement() {
        var sender = ReplicationSender(diary: "d", acked: 0, options: options)
        sender.connected(now: 0)
        sender.sent(last: 10, now: 0)
        #expect(sender.nextBatch() == 10)
        sender.sent(last: 20, now: 0)
        #expect(sender.nextBatch() == nil)
        // A broker's PUBACK changes nothing; only the hub's acknowledgement opens the window.
        let moved = sender.received(HubAck(diary: "d", acked: 10), now: 1)
        #expect(moved)
        #expect(sender.nextBatch() == 20)
        #expect(sender.outstanding == [20])
    }

    @Test func anotherDiarysAcknowledgementIsIgnored() {
        var sender = ReplicationSender(diary: "d", acked: 0, options: options)
        sender.connected(now: 0)
        sender.sent(last: 10, now: 0)
        let moved = sender.received(HubAck(diary: "old", acked: 50), now: 1)
        #expect(!moved)
        #expect(sender.acked == 0)
    }

    @Test func withoutProgressEverythingAboveTheAcknowledgementGoesAgainWithTheWaitDoubling() {
        var sender = ReplicationSender(diary: "d", acked: 0, options: options)
        sender.connected(now: 0)
        sender.sent(last: 10, now: 0)
        sender.sent(last: 20, now: 0)
        let early = sender.tick(now: 9.9)
        let due = sender.tick(now: 10)
        #expect(!early && due)
        #expect(sender.nextBatch() == 0 && sender.outstanding.isEmpty)
        sender.sent(last: 10, now: 10)
        #expect(sender.deadline == 30)
        let notYet = sender.tick(now: 29)
        let now = sender.tick(now: 30)
        #expect(!notYet && now)
        sender.sent(last: 10, now: 30)
        #expect(sender.deadline == 70)
        sender.tick(now: 70)
        sender.sent(last: 10, now: 70)
        #expect(sender.deadline == 110)  // capped at 40 s
        // Progress resets the wait.
        sender.received(HubAck(diary: "d", acked: 10), now: 80)
        sender.sent(last: 20, now: 80)
        #expect(sender.deadline == 90)
        #expect(sender.resends == 3)
    }

    @Test func aCaughtUpSenderWaitsForTheDiaryToChange() {
        var sender = ReplicationSender(diary: "d", acked: 0, options: options)
        sender.connected(now: 0)
        sender.sent(last: 0, now: 0)
        #expect(sender.nextBatch() == nil && sender.caughtUp)
        sender.diaryChanged()
        #expect(sender.nextBatch() == 0)
    }

    @Test func aLowerAcknowledgementMeansTheHubLostVisitsAndTheyAreSentAgain() {
        var sender = ReplicationSender(diary: "d", acked: 0, options: options)
        sender.connected(now: 0)
        sender.sent(last: 10, now: 0)
        sender.received(HubAck(diary: "d", acked: 10), now: 1)
        sender.sent(last: 20, now: 1)
        let lowered = sender.received(HubAck(diary: "d", acked: 0), now: 2)
        #expect(lowered)
        #expect(sender.nextBatch() == 0 && sender.acked == 0)
    }

    @Test func aLostConnectionForgetsWhatWasOutAndStartsFromTheAcknowledgement() {
        var sender = ReplicationSender(diary: "d", acked: 3, options: options)
        sender.connected(now: 0)
        sender.sent(last: 13, now: 0)
        sender.disconnected()
        #expect(sender.nextBatch() == nil)
        sender.connected(now: 5)
        #expect(sender.nextBatch() == 3)
    }
}
