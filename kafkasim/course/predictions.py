"""The course's predictions (issue 33): ``predict`` and ``ready`` for the notebooks, and every
question, choice and explanation the notebooks pass them, marked for translation.

A notebook asks in English in its code (``predict("How many ...?", kind="number")``); the widget
shows the question in the course's language by looking it up under msgctxt
``kafkasim.prediction`` (``kafkasim.widgets.prediction``). ``scripts/i18n.py`` collects the
messages below into ``kafkasim/course/locale/<lang>.po``; ``tests/test_prediction.py`` checks
that every literal a notebook passes to ``predict`` or ``score`` is listed here.
"""

from __future__ import annotations

I18N_CONTEXT = "kafkasim.prediction"


def N_(message: str, /) -> str:
    return message


def predict(question: str, choices=None, kind: str | None = None, *, low: int | None = None,
            high: int | None = None, example=None):
    """``kafkasim.widgets.prediction.predict`` (imported on first use: anywidget is slow)."""
    from kafkasim.widgets.prediction import predict as _predict

    return _predict(question, choices, kind, low=low, high=high, example=example)


def ready(*predictions) -> bool:
    """``kafkasim.widgets.prediction.ready``: the run cell's guard."""
    from kafkasim.widgets.prediction import ready as _ready

    return _ready(*predictions)


#: notebook -> the questions, choices and explanations its predictions use
MESSAGES = {
    "00": (
        N_("replication.factor=3, min.insync.replicas=2: how many of the partition's brokers can"
           " be down while acks=all writes succeed?"),
        N_('The ISR must keep min.insync.replicas=2 of the 3 replicas: one broker can be down.'),
        N_("The leader's broker crashes: how soon does another broker lead?"),
        N_('under 1 s'),
        N_('1-5 s'),
        N_('5-15 s'),
        N_('over 15 s'),
        N_('20 s after the crash: is the crashed broker still in Isr?'),
        N_('still listed'),
        N_('removed'),
        N_('The controller elects a new leader once it fences the broker, 9 s '
           '(broker.session.timeout.ms) after its last heartbeat.'),
        N_('Fencing broker 2 also removes it from every ISR: a dead broker cannot stay in sync.'),
    ),
    "01": (
        N_('How many partition lines will --describe print?'),
        N_('How many different brokers will lead a partition?'),
        N_('How many brokers are in the ISR of partition 0?'),
        N_('One line per partition, whatever the replication factor: the replicas are listed'
           " on their partition's line."),
        N_('Kafka spreads the preferred leaders over the brokers: each of the three brokers '
           'leads one partition, so none does all the work.'),
        N_("A new topic's replicas are all in sync: the ISR is the whole replica set until a"
           ' follower falls behind (notebook 02).'),
        N_('How many brokers receive a ProduceRequest?'),
        N_("A producer sends each partition's records to that partition's leader. The three "
           'partitions have three different leaders, so all three brokers get a '
           'ProduceRequest, and none goes to a follower.'),
        N_('How many fetcher threads will broker 1 run?'),
        N_('How many partitions will each of its threads carry?'),
        N_('One thread per source broker: broker 1 follows partitions led by brokers 2 and '
           '3, in both topics.'),
        N_('A thread carries every partition it follows from its source broker in one Fetch:'
           ' one of each topic.'),
        N_("The leader's LEO once it has appended the three records?"),
        N_("From which offset does a follower's next Fetch ask, once it has copied them?"),
        N_('Offsets 0 and 1, then 2, 3 and 4: the LEO is the next offset, one past the last '
           'record.'),
        N_('A follower fetches from its own LEO, the first offset it does not have yet, not '
           'from its last offset: 5, not 4.'),
        N_('The FetchResponse carrying y0-y2 to broker 2 is lost. When does broker 2 get the '
           'records?'),
        N_('at once: the leader resends it'),
        N_('within 1 s: its next Fetch'),
        N_('about 30 s later'),
        N_('never'),
        N_('Nothing resends a lost response: broker 2 waits for it until '
           'replica.socket.timeout.ms (30 s), fails the fetch, backs off '
           '(replica.fetch.backoff.ms, 1 s) and fetches again from its LEO.'),
    ),
    "02": (
        N_('Right after broker 4 gets stuck, is it still in the ISR?'),
        N_('yes'),
        N_('no'),
        N_("The leader's HW while broker 4 is stuck in the ISR?"),
        N_("The leader's HW once broker 4 is out of the ISR?"),
        N_('Falling behind does not remove a replica at once: the leader waits '
           'replica.lag.time.max.ms (10 s here).'),
        N_('A lagging ISR member holds the HW: offsets 5 to 9 are on three brokers but not '
           'committed.'),
        N_('Once broker 4 is out, the smallest LEO in the ISR is 10.'),
        N_('Steady 3 msg/s, message rule: does the ISR shrink?'),
        N_('Burst 10 msg/s, message rule: does the ISR shrink?'),
        N_('Burst 10 msg/s, time rule: does the ISR shrink?'),
        N_('3 msg/s never puts a follower 5 messages behind.'),
        N_('At 10 msg/s a follower half a second away is more than 5 messages behind: a '
           'healthy follower is dropped.'),
        N_('The time rule asks whether the follower caught up in the last 10 s, which it '
           'did: the burst does not matter.'),
        N_('Does broker 3, slow disk but fetching, leave the ISR?'),
        N_('Fetching is not enough: a Fetch counts only when the follower has caught up to '
           'where the leader was at its previous Fetch, so its last caught-up time never '
           'moves.'),
        N_("With the notes' rule, does broker 3 leave the ISR?"),
        N_("With the notes' rule, how many of the 1000 writes still wait at t = 25 s?"),
        N_("Broker 3 never stops fetching, so the notes' rule keeps it."),
        N_("The HW can only move as fast as broker 3's disk: about a fifth of the writes are"
           ' still waiting.'),
        N_("Network latency: how many ISR shrinks in 60 s?"),
        N_("Slow disk: how many ISR shrinks in 60 s?"),
        N_("Broker overload: how many ISR shrinks in 60 s?"),
        N_("GC pause: how many ISR shrinks in 60 s?"),
        N_("Each spell of 6 s network delay (a 12 s fetch round trip) keeps it behind for over 10"
           " s; it rejoins when the delay ends."),
        N_("It never catches up again: out once, for good."),
        N_("Replication slows, but it still catches up within 10 s: the ISR holds."),
        N_("The 12 s freeze outlasts the 10 s lag time once; it rejoins right after."),
        N_("replica.lag.time.max.ms=10000: a stuck follower leaves after (s)?"),
        N_("replica.lag.time.max.ms=30000: a stuck follower leaves after (s)?"),
        N_("replica.lag.time.max.ms=60000: a stuck follower leaves after (s)?"),
        N_("Between 1x and 1.5x the setting after it last caught up: the leader checks every half"
           " lag time."),
        N_("Brokers 1 and 2 at LEO 1000, broker 3 stuck at 800 but still in the ISR: the "
           "leader's HW?"),
        N_('The HW is the smallest LEO in the ISR: broker 3 holds it at 800 (an acks=all write '
           'would wait) until the leader drops it.'),
        N_('Kafka 2.6: the leader shrinks the ISR. How soon does the controller have it?'),
        N_('Kafka 3.7: the leader shrinks the ISR. How soon does the controller have it?'),
        N_('Kafka 4.3: the leader shrinks the ISR. How soon does the controller have it?'),
        N_('under 100 ms'),
        N_('100 ms - 5 s'),
        N_('5-10 s'),
        N_('over 10 s'),
        N_('Kafka 4.3: how do the other brokers hear of the new ISR?'),
        N_('UpdateMetadataRequest'),
        N_('the metadata log'),
        N_('The leader writes ZooKeeper itself; its task every 2.5 s tells the controller '
           '(/isr_change_notification) only once 5 s pass without another change.'),
        N_('AlterPartition goes to the controller, which answers within ms.'),
        N_('AlterPartition goes to the active controller, which commits it within ms.'),
        N_('Brokers replicate the metadata log: no UpdateMetadata since KRaft.'),
        N_('replica.lag.time.max.ms=60000, KRaft 4.3: a crashed follower leaves after (s)?'),
        N_('replica.lag.time.max.ms=60000, KRaft 4.3: does a 12 s GC pause drop the follower?'),
        N_('The controller fences the dead broker 9-10 s after its last heartbeat and drops it '
           "from the ISR, long before the leader's 60 s check."),
        N_('A 12 s pause outlasts broker.session.timeout.ms (9 s): the controller fences the '
           'broker, whatever replica.lag.time.max.ms says.'),
    ),
    "03": (
        N_("What is the leader's HW?"),
        N_('Which offsets can a consumer read?'),
        N_("Kafka's HW is exclusive: the first offset not yet on every ISR member, the "
           'smallest LEO in the ISR (7), not the last committed offset (6).'),
        N_('A consumer reads below the HW only: offsets 0 to 6. Offsets 7 to 9 are on the '
           'leader but not on every ISR member yet.'),
        N_("With Kafka's rule, how many acknowledged writes vanish?"),
        N_('With hw_is_leader_leo, how many acknowledged writes vanish?'),
        N_('The leader commits only what every ISR member has, so the new leader has every '
           'acknowledged record.'),
        N_('o2 and o3 were acknowledged while only the cut-off leader had them; the new '
           'leader never got them. o0 and o1 had reached the followers before the cut.'),
        N_("Which message makes the leader's HW 7?"),
        N_('the Produce request'),
        N_("a follower's Fetch"),
        N_('a FetchResponse to a follower'),
        N_('a separate acknowledgement'),
        N_('Does the producer get its answer before or after both followers know HW 7?'),
        N_('before'),
        N_('after'),
        N_('How many ms after the leader does the slower follower learn HW 7?'),
        N_("The leader learns a follower's LEO from the offset its next Fetch asks for: the "
           "second follower's Fetch from offset 7 moves the HW."),
        N_('The leader answers the acks=all producer as soon as its own HW passes the '
           'record; the followers hear of it on a later response.'),
        N_("On an idle partition the followers' parked Fetch waits for new data, not for a "
           'new HW: they learn it up to replica.fetch.wait.max.ms (500 ms) later.'),
        N_('Which offsets does the first poll return?'),
        N_('And the next poll, once the followers have copied offset 7?'),
        N_('acks=1 acknowledged offset 7 with only the leader holding it: it is above the '
           'HW, so no consumer can read it yet.'),
        N_('Once both followers have it the HW moves to 8 and the consumer gets offset 7.'),
        N_('Which broker becomes the leader?'),
        N_('broker 2'),
        N_('broker 3'),
        N_('What is the last offset in its log?'),
        N_('Both are in the ISR: the controller takes the first live ISR member in '
           'assignment order, broker 2, whatever its log holds.'),
        N_('Broker 2 had copied offset 7, one past the committed ones: it keeps it. Offsets '
           '8 and 9 were on broker 1 only.'),
    ),
    "04": (
        N_('The committed offset?'),
        N_("The consumer's position?"),
        N_('The high watermark?'),
        N_("The leader's log end offset?"),
        N_('CURRENT-OFFSET?'),
        N_('LOG-END-OFFSET?'),
        N_('LAG?'),
        N_("The group's committed offset, not the consumer's position: the tool asks the "
           'group coordinator.'),
        N_("The high watermark, not the leader's LEO: brokers answer client requests with "
           'the HW.'),
        N_("LAG = HW - committed offset, whatever the notes' definition says."),
        N_('Which offsets does billing-2 read first?'),
        N_("A new member starts at the group's committed offset (4), not at the dead "
           "consumer's position (6): offsets 4 and 5 come twice."),
        N_('Offsets 8 and 9 replicated, the consumer idle: LAG?'),
        N_('The HW moved from 8 to 10 as the followers caught up: the lag grew by 2 with nobody '
           'producing.'),
    ),
    "05": (
        N_("acks=0: does 'precious' survive on the new leader?"),
        N_('survives'),
        N_('lost'),
        N_("acks=1: does 'precious' survive on the new leader?"),
        N_("acks=all: does 'precious' survive on the new leader?"),
        N_('acks=0 is done before the leader has the record; here the leader died first.'),
        N_("acks=1 answers after the leader's append; nothing had fetched it yet."),
        N_('acks=all answers once every ISR member has it, the new leader included.'),
        N_('min.insync.replicas=2: at which ISR sizes does acks=all succeed?'),
        N_('min.insync.replicas=1: at which ISR sizes does acks=all succeed?'),
        N_('min.insync.replicas=3: at which ISR sizes does acks=all succeed?'),
        N_('3 only'),
        N_('3 and 2'),
        N_('3, 2 and 1'),
        N_('An ISR below min.insync.replicas refuses acks=all before the append: ISR [1] is one '
           'broker, the minimum two.'),
        N_('A minimum of 1 never refuses: the leader alone is enough.'),
        N_('A minimum of 3 refuses as soon as one follower is out.'),
        N_('Kafka 3.6: how many of the 3 records does the consumer read?'),
        N_('Kafka 4.3: how many of the 3 records does the consumer read?'),
        N_('On 3.6 the lone leader moves the HW to its LEO (3).'),
        N_('Since 3.7 the HW stays at 1 while the ISR is below min.insync.replicas.'),
        N_("No topic setting, broker default 1: what does the topic line's Configs: show?"),
        N_('nothing'),
        N_('min.insync.replicas=1'),
        N_('After kafka-configs --alter: where does min.insync.replicas=2 show?'),
        N_("the topic line's Configs:"),
        N_('each partition line'),
        N_('nowhere: only kafka-configs --describe'),
        N_("--describe lists only the topic's own settings (overrides), never the broker "
           "default it falls back to."),
        N_("An override is the topic's: it shows once, on the topic line; a partition line "
           "shows leader, replicas and ISR."),
    ),
    "07": (
        N_('ZooKeeper mode (3.7): how long after the crash until orders-0 has a new leader?'),
        N_('KRaft (4.3): how long after the crash until orders-0 has a new leader?'),
        N_('under 2 s'),
        N_('2-6 s'),
        N_('6-12 s'),
        N_('12-18 s'),
        N_('over 18 s'),
        N_('The session ends 18 s after broker 2 was last heard from, and its last ping came up '
           'to 6 s before the crash.'),
        N_('The broker is fenced at the first check after 9 s without a heartbeat, and its last '
           'heartbeat came up to 2 s before the crash.'),
        N_("No active controller for a few seconds: what happens to the producer's writes to "
           "orders?"),
        N_('they wait for a new controller'),
        N_('they keep being acknowledged'),
        N_('A leader serves produce and fetch without a controller, which is needed only to '
           'change metadata.'),
        N_('works'),
        N_('fails or waits'),
        N_('Produce to a partition whose leader is alive?'),
        N_('Create a topic?'),
        N_('A broker crashes: do its partitions get a new leader?'),
        N_('A live leader serves produce and fetch without a controller.'),
        N_('A new topic is a metadata record: with no Raft leader nothing commits.'),
        N_('A new leader is a metadata record too: dead broker 2 still leads events-0.'),
        N_('ZooKeeper mode: the controller is killed. How long until another broker is '
           'controller?'),
        N_('What does /controller_epoch read then?'),
        N_("/controller is ephemeral: it goes when broker 1's session expires, 18 s after its "
           "last ping (12-18 s after the crash)."),
        N_('Each new controller increments /controller_epoch, so brokers can ignore requests '
           'from a deposed one.'),
        N_('3003 added: how many voters must have a record before it commits?'),
        N_('The active controller removes itself from the voters. Then?'),
        N_('it keeps leading'),
        N_('another voter leads, in a higher epoch'),
        N_('no leader until it is added back'),
        N_("A majority of four: the leader counts the new voter from the VotersRecord's append, "
           "so that record itself commits on 3 of 4."),
        N_('Once the VotersRecord without it commits, the leader resigns (EndQuorumEpoch) and the '
           'other voters elect one of them in a higher epoch; the old leader runs on as an '
           'observer.'),
    ),
    "08": (
        N_('unclean.leader.election.enable=false: what does the rule answer?'),
        N_('no leader (offline)'),
        N_('2 (clean)'),
        N_('3 (clean)'),
        N_('2 (unclean)'),
        N_('3 (unclean)'),
        N_('unclean.leader.election.enable=true: what does the rule answer?'),
        N_('Off, the rule takes only a live ISR member; the ISR is [1] and broker 1 is dead,'
           ' so the partition stays offline.'),
        N_('On, it falls back to the first live replica in assignment order, broker 2, '
           'outside the ISR: an unclean election.'),
        N_('Unclean election off: who leads afterwards?'),
        N_('none'),
        N_('1'),
        N_('2'),
        N_('3'),
        N_('Unclean election on: who leads afterwards?'),
        N_('Unclean election off: how many acknowledged writes are gone?'),
        N_('Unclean election on: how many acknowledged writes are gone?'),
        N_('Off, nobody outside the ISR may lead: the partition stays offline until broker 1'
           ' returns.'),
        N_('Offline loses nothing yet: broker 1 still has the record.'),
        N_('On, the first live replica, broker 2, takes over although it is not in the ISR.'),
        N_("only-on-1 was on broker 1 alone: broker 1 truncates to the new leader's log when"
           ' it returns.'),
        N_('Which combinations lose acknowledged writes?'),
        N_('only min ISR 1 with unclean on'),
        N_('both with unclean on'),
        N_('both with min ISR 1'),
        N_('all four'),
        N_('Either lever alone protects acknowledged writes: min.insync.replicas=2 refuses '
           'to acknowledge what one broker has, unclean election off refuses to elect a '
           'replica that lacks it.'),
        N_('Kafka 4.0 (ELR off): is anything acknowledged lost?'),
        N_('yes'),
        N_('no'),
        N_('Kafka 4.1 (ELR on): is anything acknowledged lost?'),
        N_('Without ELR the ISR keeps its dead last member; broker 1 returns with the log '
           'its power loss shortened and is elected cleanly: the followers truncate to it.'),
        N_('With ELR, broker 2 left the ISR under min ISR, so it holds every committed '
           'record and leads from the ELR.'),
    ),
    "09": (
        N_('Kafka 0.10.2: is the acknowledged m2 still on broker 1, the new leader, at the end?'),
        N_('Broker 1 restarted with HW 1 and, becoming follower, truncated its log to that HW: '
           'm2 was gone before broker 1 was elected, and m3 took its offset.'),
        N_('OffsetsForLeaderEpoch first'),
        N_('a Fetch straight away'),
        N_('Kafka 0.11.0: what does broker 1 send broker 2 before its first Fetch?'),
        N_("Today's Kafka: what does broker 1 send broker 2 before its first Fetch?"),
        N_('A 0.11 follower trusts no HW: it asks the leader where its last epoch ended and '
           'truncates to that answer before it fetches.'),
        N_('Today the follower fetches at once and sends the epoch of its last record; where '
           'the logs differ, the Fetch response names the diverging epoch.'),
        N_('Scenario 1 on 0.11.0 with the old truncate-to-HW rule: which invariant fails first?'),
        N_('NoAckedLoss'),
        N_('LogMatching'),
        N_('WeakIsr'),
        N_("Truncating to the HW already leaves an ISR member, broker 1, with less than the "
           "leader's HW: WeakIsr fails before any acknowledged write is lost."),
        N_('Kafka 0.11.0: which record does broker 2 hold at offset 3 at the end?'),
        N_('Kafka 2.0: which record does broker 2 hold at offset 3 at the end?'),
        N_('A-only'),
        N_('B-only'),
        N_("Leader 1 never had epoch 1: it answered where its epoch 2 starts, 4, broker 2's own "
           "LEO, so nothing was truncated."),
        N_("Leader 1 answered epoch 0, ending at 4; broker 2's epoch 0 ended at 3, so it "
           "truncated to 3 and copied A-only."),
    ),
    "13": (
        N_('Which broker serves the consumer in rack c?'),
        N_('broker 1'),
        N_('broker 2'),
        N_('broker 3'),
        N_('How many records does its first poll return?'),
        N_("With the rack-aware selector the leader names the replica in the consumer's "
           'rack, broker 3 (rack c), as its preferred read replica.'),
        N_("The leader's first answer carries no records, only the redirect; the records "
           'come from broker 3 in the next fetch, within the same poll.'),
        N_('replica.fetch.wait.max.ms=2000, next sent 800 ms after late is acknowledged: late '
           'reaches the rack-c consumer after (ms)?'),
        N_("With nothing new to send, the leader parks broker 3's fetch until next arrives, 800 ms "
           "later; that answer carries the new HW, and broker 3 then completes the consumer's "
           "waiting fetch. Without next: about 2000 ms."),
    ),
}


# notebooks 06, 10, 11, 12 and 90 (issue 33: predictions that count)
MESSAGES.update({
    "06": (
        N_('How many lines will --under-replicated-partitions print?'),
        N_('Which broker is missing from their ISRs?'),
        N_('broker 1'),
        N_('broker 2'),
        N_('broker 3'),
        N_('One line per partition whose ISR is smaller than its replica list: broker 3 '
           'follows all three partitions, so all three are listed.'),
        N_('Replicas minus Isr is broker 3 on every line: that is the broker to look at.'),
        N_('The 30 s blip: which rule fires?'),
        N_('neither'),
        N_('URP only'),
        N_('shrink only'),
        N_('both'),
        N_('The 7-minute outage: which rule fires?'),
        N_('The flapping follower: which rule fires?'),
        N_('Both rules go pending and neither fires: the ISR healed itself within 30 s.'),
        N_('URP stays above 0 for 7 minutes, so the URP rule fires after 5. The shrinks all '
           'happened at the start, and one increase keeps a 5-minute rate above 0 for a '
           'little less than 5 minutes: the shrink rule never fires.'),
        N_('No partition stays under-replicated for 5 minutes in a row, but new shrinks every '
           'minute keep the 5-minute rate above 0: only the shrink rule fires.'),
    ),
    "10": (
        N_('After the crash: which HW does the follower load?'),
        N_('After the crash: which LEO does it load?'),
        N_('The HW comes from replication-offset-checkpoint, rewritten only every 5000 ms; '
           'the follower had not even learnt HW 8 yet.'),
        N_('A crash keeps the page cache: every record the follower had appended is still there.'),
        N_("After the clean shutdown: the follower's recovery point?"),
        N_('After the clean shutdown: which HW does it load?'),
        N_('A clean shutdown flushes every log, so the recovery point is the LEO.'),
        N_('Shutdown rewrites replication-offset-checkpoint with the HW the follower had learnt '
           'by then: 8, not the stale 5.'),
    ),
    "11": (
        N_('With racks: how many partitions have no leader?'),
        N_('With racks: how many are below min.insync.replicas?'),
        N_('Without racks: how many partitions have no leader?'),
        N_('Without racks: how many are below min.insync.replicas?'),
        N_('Every partition kept two replicas outside rack a, and the controller elects a '
           'live ISR member.'),
        N_('One copy per rack: losing rack a costs each partition one replica, leaving 2 in '
           'the ISR: at min.insync.replicas, not below it.'),
        N_('RF 3 and only two brokers down: every partition still has a live ISR member to '
           'elect.'),
        N_('Without racks the placer puts consecutive brokers together: the partitions '
           'holding both 1 and 2 keep a single in-sync replica.'),
    ),
    "12": (
        N_('After the restart: how many partitions does broker 1 lead?'),
        N_('After the restart: how many partitions does broker 2 lead?'),
        N_('After the restart: how many partitions does broker 3 lead?'),
        N_('A restarted broker rejoins every ISR as a follower: a restart never takes '
           'leadership back by itself.'),
        N_('Broker 2 came next in the assignment of both partitions broker 1 led, so it took '
           'both.'),
        N_("Broker 3 kept its own two partitions and got none of broker 1's."),
        N_('How many of the six partitions answer NONE?'),
        N_('What do the other partitions answer?'),
        N_('ELECTION_NOT_NEEDED'),
        N_('PREFERRED_LEADER_NOT_AVAILABLE'),
        N_('(there are none)'),
        N_('Only the two partitions whose preferred replica, broker 1, lost leadership need '
           'an election.'),
        N_('The other four are already led by their preferred replica. Broker 1 is back in '
           'every ISR, so none is refused.'),
        N_('Kafka 3.7 (ZooKeeper): does partition 0 go back to broker 1?'),
        N_('yes'),
        N_('no'),
        N_('Kafka 4.3 (KRaft): does partition 0 go back to broker 1?'),
        N_('1/10 = 10 % is not greater than 10 %: the ZooKeeper controller leaves partition 0 '
           'on broker 2 for as long as nothing else changes.'),
        N_('KRaft has no percentage: partition 0 goes home at the next run of the periodic '
           'preferred-election task.'),
    ),
    "90": (
        N_('Which configurations of this sweep lose an acknowledged write?'),
        N_('only the unclean-on ones'),
        N_('the unclean-on ones and acks=1'),
        N_('every configuration'),
        N_("acks=1 can lose the last records (section 1's demo), but with followers 5 ms away "
           'these eight seeds never caught a leader dying with records only it had.'),
        N_('Unclean election lets a replica that lacks acknowledged records lead. With it off '
           'and crashes that keep the disk, the new leader has every record acks=all waited '
           'for.'),
        N_('2 records/s, 50 ms latency: a 2000 ms wait instead of 10 ms makes p50 ...'),
        N_('slower'),
        N_('faster'),
        N_('same'),
        N_('A long wait never holds a record back: a parked fetch is answered the moment a '
           'record is appended.'),
        N_('At 2 records/s a fetch almost always finds nothing new, so the wait limit is used '
           'on nearly every fetch: it matters.'),
        N_('A short wait runs out first; a record that arrives while the empty answer and the '
           'next fetch are on the wire waits for that fetch, up to one round trip.'),
    ),
})
