"""Voter changes on the KRaft leader: AddRaftVoter and RemoveRaftVoter (KIP-853, 3.9+).

After raft/internals/AddVoterHandler, RemoveVoterHandler, AddVoterHandlerState,
RemoveVoterHandlerState and LeaderState's pending-operation bookkeeping
(``isOperationPending``, ``maybeExpirePendingOperation``, ``resetAdd/RemoveVoterHandlerState``),
apache/kafka trunk 1eb7644 (2024-10-25). The leader's checks, in Kafka's order:

AddRaftVoter: another voter change pending -> REQUEST_TIMED_OUT; no high watermark in this epoch
-> REQUEST_TIMED_OUT; kraft.version 0 -> UNSUPPORTED_VERSION; the newest VotersRecord not yet
committed -> REQUEST_TIMED_OUT; the id already a voter -> DUPLICATE_VOTER; the new voter not
ready for an ApiVersions request -> REQUEST_TIMED_OUT. Then ApiVersions goes to the new voter;
its answer: an error -> REQUEST_TIMED_OUT, a kraft.version range without the finalized level ->
INVALID_REQUEST, not caught up (LeaderState.isReplicaCaughtUp: an observer that has reached the
leader's end offset and fetched within the last hour) -> REQUEST_TIMED_OUT; else the leader
appends a VotersRecord with the new voter, which counts from that moment (the new majority
commits it), and answers NONE once the high watermark passes it. An operation still pending at
its deadline (controller.quorum.request.timeout.ms) answers REQUEST_TIMED_OUT; a leader that
loses its leadership answers NOT_LEADER_OR_FOLLOWER.

RemoveRaftVoter: the same first four checks, then a key that is not a voter (or the last voter)
-> VOTER_NOT_FOUND; else the VotersRecord without it is appended and the answer is NONE once it
commits; a leader that removed itself then resigns (LeaderState.requestResign).

UpdateRaftVoter: a voter whose listeners or supported kraft.version range differ from its entry
sends it once per update-voter period (3 x controller.quorum.fetch.timeout.ms; one from 4.1,
KAFKA-16538) in place of a
Fetch; the leader makes the common checks (kraft.version 0 -> UNSUPPORTED_VERSION in 3.9 and
4.0), then the range and listener checks (INVALID_REQUEST) and VOTER_NOT_FOUND, appends the
VotersRecord with the new entry and answers NONE at once. From 4.1 (KAFKA-16538) the voters of
a static quorum (kraft.version 0) send it to every new leader once, and the leader keeps their
directory ids and ranges in memory (``volatile_voters``), which the kraft.version upgrade
(``upgrade_kraft_version``) needs from every voter.

Not modelled: cluster ids (INCONSISTENT_CLUSTER_ID), the RPC hop from the
admin client (the request is handed to the leader's client directly).
"""

from __future__ import annotations

from kafkasim.control.kraft import raft_messages as M
from kafkasim.control.kraft.epoch_states import ONE_HOUR_MS
from kafkasim.control.kraft.kraft_version_upgrade import (
    InvalidUpdateVersionException,
    maybe_append_upgraded_kraft_version,
)
from kafkasim.control.kraft.voter_set import (
    ZERO_UUID,
    KRaftVersionRecord,
    ReplicaKey,
    VoterNode,
    VoterSet,
)
from kafkasim.core import events as ev
from kafkasim.core.errors import IllegalArgumentException, IllegalStateException

__all__ = ["VoterChangeOperation", "RaftReconfig", "ONE_HOUR_MS"]

REQUEST_TIMED_OUT = "REQUEST_TIMED_OUT"


class VoterChangeOperation:
    """AddVoterHandlerState / RemoveVoterHandlerState with its response future: ``error`` is
    None while pending, then Kafka's error name ("NONE" on success) and ``message``."""

    __slots__ = ("operation", "voter_key", "endpoints", "deadline", "last_offset",
                 "expecting_api_versions_from", "supported_kraft_version", "error", "message",
                 "reply_to")

    def __init__(self, operation: str, voter_key, endpoints=(), deadline: int = 0) -> None:
        self.operation = operation
        self.voter_key = voter_key
        self.endpoints = endpoints
        self.deadline = deadline
        self.last_offset: int | None = None
        self.expecting_api_versions_from: int | None = None
        self.supported_kraft_version = None
        self.error: str | None = None
        self.message: str | None = None
        self.reply_to = None     # (node, request, response class) of a request by RPC

    @property
    def done(self) -> bool:
        return self.error is not None

    def __repr__(self) -> str:
        return (f"VoterChangeOperation({self.operation} {self.voter_key}, "
                f"{self.error or 'pending'})")


def _done(op: VoterChangeOperation, error: str, message: str | None) -> VoterChangeOperation:
    op.error, op.message = error, message
    return op


def _is_leader(st) -> bool:
    return getattr(st, "name", None) == "Leader"


class RaftReconfig:
    """KIP-853 for one KafkaRaftClient: its voter set history (KRaftControlRecordStateMachine),
    its directory id and bootstrap servers, the kraft.version range it supports (what it
    answers ApiVersions), and the leader's AddVoterHandler + RemoveVoterHandler."""

    def __init__(self, client, history, directory_id, bootstrap_servers,
                 supported_kraft_version, auto_join: bool = False, listeners=None) -> None:
        if directory_id == ZERO_UUID:      # KafkaRaftClient's constructor (3.9+)
            raise IllegalArgumentException(
                "The node directory id must be set and not be the zero uuid")
        self.client = client
        self.history = history
        self.directory_id = directory_id
        # controller.quorum.voters, or controller.quorum.bootstrap.servers (KIP-853): where an
        # observer sends its fetches until it knows the leader
        self.bootstrap_servers = bootstrap_servers
        self.supported_kraft_version = supported_kraft_version   # None: before 3.9
        self.auto_join = auto_join      # controller.quorum.auto.join.enable (4.2)
        #: the node's own controller listeners, ((listener, host, port), ...): what an
        #: UpdateRaftVoter sends (None: not a controller that knows them)
        self.listeners = listeners
        #: KAFKA-16538 (4.1+): static-quorum voters send UpdateRaftVoter to each new leader
        self.update_voter_static = False
        #: FollowerState.updateVoterPeriodMs in fetch timeouts: 3 until 4.0, 1 from 4.1
        self.update_voter_period_fetch_timeouts = 3

    # --- the voter set (KRaftControlRecordStateMachine) -------------------------------------
    def update_voters(self, ctx) -> None:
        """KRaftControlRecordStateMachine.updateState: read control records appended since."""
        if self.history.update(self.client.log):
            self.voters_changed(ctx)

    def initialize(self, ctx) -> None:
        """On startup (QuorumState.initialize): read the control records, and decide with the
        directory id the node has *now* whether it is a voter -- a controller whose metadata
        log dir was formatted again comes back with a new directory id, so the voter set's
        entry for its id is not its own: it is an observer (which auto-join can replace)."""
        self.update_voters(ctx)
        c = self.client
        if self.history.last_kraft_version() >= 1:
            c.observer = not self.history.last_value().is_voter(
                ReplicaKey(c.node_id, self.directory_id))

    def voters_changed(self, ctx) -> None:
        """The voter set in force changed (appended or truncated VotersRecord): the client's
        voters, whether it is an observer (QuorumState.isVoter) and the leader's replica
        states follow."""
        c = self.client
        voters = self.history.last_value()
        c.voters = voters.voter_ids()
        c.observer = not voters.is_voter(ReplicaKey(c.node_id, self.directory_id))
        entry = self.history.last_entry()
        ctx.trace("raft_voters", ev.RaftVoters(entry[0] if entry else -1, c.voters))
        if _is_leader(c.state):
            c.state.update_voter_and_observer_states(voters)

    def append_control_batch(self, ctx, control: list) -> int:
        """BatchAccumulator.appendControlMessages: the open batch is completed and the control
        batch goes to the log at once. Returns the batch's last offset."""
        c = self.client
        st = c.state
        batch, st.pending, st.linger_deadline = st.pending, [], 1 << 62
        if batch:
            c.log.append_as_leader(batch, st.epoch)
        first = c.log.append_as_leader(list(control), st.epoch)
        c._flush_leader_log(ctx, st)
        return first + len(control) - 1

    def append_voters_record(self, ctx, voters: VoterSet, kraft_version: int | None = None
                             ) -> int:
        """LeaderState.appendVotersRecord: the accumulator completes its open batch and the
        control batch goes to the log at once; the new voter set counts from now on. With
        ``kraft_version`` a KRaftVersionRecord goes first (the kraft.version upgrade).
        Returns the VotersRecord's offset."""
        control = [voters.to_voters_record()]
        if kraft_version is not None:
            control.insert(0, KRaftVersionRecord(kraft_version))
        return self.append_control_batch(ctx, control)

    # --- UpdateRaftVoter (KIP-853) ----------------------------------------------------------
    def voter_node_needs_update(self) -> bool:
        """kraft.version 1 and VoterSet.voterNodeNeedsUpdate(quorum.localVoterNodeOrThrow()):
        this voter's entry in the voter set has other listeners or another kraft.version range
        than the node has now (a controller restarted with a new listener or a new release)."""
        local = self.local_voter_node()
        if local is None or self.history.last_kraft_version() < 1:
            return False
        return self.history.last_value().voter_node_needs_update(local)

    def local_voter_node(self) -> VoterNode | None:
        """QuorumState.localVoterNodeOrThrow: this node as a voter set entry -- its id and
        directory id, its listeners, the kraft.version range it supports (None: a node that
        does not know them, before 3.9 or not a controller)."""
        if self.supported_kraft_version is None or self.listeners is None:
            return None
        return VoterNode(ReplicaKey(self.client.node_id, self.directory_id), self.listeners,
                         tuple(self.supported_kraft_version))

    def start_of_epoch_control_records(self) -> list:
        """LeaderState.appendStartOfEpochControlRecords after the LeaderChange (kraft.version
        1): KRaftVersionRecord and the VotersRecord with this leader's own entry as it is now,
        when the voter set was never written to the log (the bootstrap checkpoint's, offset
        -1) or the leader's entry differs (new listeners or kraft.version range)."""
        entry = self.history.last_entry()
        version = self.history.last_kraft_version()
        if version < 1 or entry is None:
            return []
        local = self.local_voter_node()
        if entry[0] != -1 and (local is None or not entry[1].voter_node_needs_update(local)):
            return []
        voters = entry[1] if local is None else entry[1].update_voter(local)
        if voters is None:
            raise IllegalStateException(f"Update expected for leader node {local} and voter "
                                        f"set {entry[1]}")
        return [KRaftVersionRecord(version), voters.to_voters_record()]

    def should_send_update_voter_request(self, st) -> bool:
        """KafkaRaftClient.shouldSendUpdateVoteRequest: with kraft.version 1 when the voter
        set's entry differs from this node (``voter_node_needs_update``); with kraft.version 0
        (4.1+, KAFKA-16538) until this epoch's leader has answered (``!hasUpdatedLeader``),
        since a static quorum's leader keeps the voters' information in memory only and the
        kraft.version upgrade needs it. 3.9 and 4.0 send only the first."""
        if self.listeners is None:
            return False
        if self.history.last_kraft_version() >= 1:
            return self.voter_node_needs_update()
        return self.update_voter_static and not st.has_updated_leader

    def init_volatile_voters(self, leader) -> None:
        """LeaderState (4.1+): a kraft.version 0 leader starts its in-memory voter set
        (``volatileVoters``) from the static voters, its own entry updated with its directory
        id and kraft.version range; the others come with their UpdateRaftVoter."""
        if self.update_voter_static and self.history.last_kraft_version() < 1 and \
                self.supported_kraft_version is not None:
            leader.volatile_voters = {self.client.node_id: (
                self.directory_id, tuple(self.supported_kraft_version))}

    def update_voter_period_ms(self) -> int:
        """FollowerState.updateVoterPeriodMs: a few rounds of Fetch before the follower tells
        the leader about itself -- 3 x controller.quorum.fetch.timeout.ms until 4.0, one
        fetch timeout from 4.1 (KAFKA-16538, rule raft_update_voter_period_one_fetch_timeout)."""
        return self.update_voter_period_fetch_timeouts * self.client.fetch_timeout_ms

    def maybe_update_voter(self, ctx, st, now: int) -> int | None:
        """KafkaRaftClient.pollFollowerAsVoter: when the update-voter period (FollowerState
        .updateVoterPeriodMs: ``update_voter_period_ms``) has expired and the entry
        needs an update, send the leader UpdateRaftVoter in place of a Fetch and restart the
        period. None: nothing to send now (the caller fetches). The period starts at the first
        poll that finds the entry stale (Kafka's timer starts with the FollowerState). The
        period restarts only once the request is on the wire (``resetUpdateVoterTimer =
        sendResult.requestSent()``): while a Fetch is in flight to the leader it waits for
        that answer, then goes in place of the next Fetch."""
        c = self.client
        period = self.update_voter_period_ms()
        deadline = getattr(st, "update_voter_deadline", None)
        if deadline is None:
            st.update_voter_deadline = deadline = now + period
        if now < deadline or c._requests.is_backing_off(st.leader_id, now) or \
                not c._requests.is_ready(st.leader_id, now):
            return None      # (the caller's Fetch attempt finds the leader busy as well)
        st.update_voter_deadline = now + period

        def build(corr):
            return M.UpdateRaftVoterRequest(corr, c.node_id, self.directory_id, st.epoch,
                                            tuple(self.supported_kraft_version), self.listeners)
        return c._poller._maybe_send(ctx, st.leader_id, build)

    def handle_update_voter_request(self, ctx, st, req) -> str:
        """UpdateVoterHandler.handleUpdateVoterRequest (trunk 1eb7644), in its order: another
        voter change pending, no high watermark, the newest VotersRecord uncommitted ->
        REQUEST_TIMED_OUT; kraft.version 0 -> UNSUPPORTED_VERSION (3.9, 4.0; 4.1+:
        ``handle_update_voter_in_memory``); a range without the finalized kraft.version, or no
        CONTROLLER listener -> INVALID_REQUEST; not a voter (id and directory id) ->
        VOTER_NOT_FOUND. Else the leader appends the VotersRecord with the voter's new entry and
        answers NONE at once, without waiting for it to commit."""
        if self.update_voter_static and self.history.last_kraft_version() < 1:
            return self.handle_update_voter_in_memory(ctx, st, req)
        failed, entry = self._common_checks(ctx, st, "updating")
        if failed:
            return failed[0]
        low, high = req.supported_kraft_version
        if not low <= self.history.last_kraft_version() <= high or \
                not any(e[0] == "CONTROLLER" for e in req.endpoints):
            return M.INVALID_REQUEST
        key = ReplicaKey(req.voter_id, req.voter_directory_id)
        new = entry[1].update_voter(VoterNode(key, tuple(req.endpoints), (low, high)))
        if new is None:
            return "VOTER_NOT_FOUND"
        self.append_voters_record(ctx, new)
        ctx.trace("raft_voter_change", ev.RaftVoterChange("update", req.voter_id, M.NONE, ""))
        return M.NONE

    def handle_update_voter_in_memory(self, ctx, st, req) -> str:
        """UpdateVoterHandler.handleUpdateVoterRequest at kraft.version 0 (4.1+, KAFKA-16538):
        the pending-operation and high-watermark checks (REQUEST_TIMED_OUT), no in-memory voter
        set yet (``volatileVoters`` empty) -> REQUEST_TIMED_OUT, the range and listener checks
        (INVALID_REQUEST), an id that is not a voter -> VOTER_NOT_FOUND
        (``updateVoterIgnoringDirectoryId``); else the leader stores the voter's directory id
        and range in memory (``compareAndSetVolatileVoters``; nothing is written to the log),
        counts the request for check quorum (``updateCheckQuorumForFollowingVoter``) and
        answers NONE."""
        if self.is_operation_pending(ctx, st, ctx.now) or st.high_watermark < 0 or \
                st.volatile_voters is None:
            return REQUEST_TIMED_OUT
        low, high = req.supported_kraft_version
        if not low <= 0 <= high or not any(e[0] == "CONTROLLER" for e in req.endpoints):
            return M.INVALID_REQUEST
        if req.voter_id not in self.history.last_value().voter_ids():
            return "VOTER_NOT_FOUND"
        st.volatile_voters[req.voter_id] = (req.voter_directory_id, (low, high))
        st.update_check_quorum_for_following_voter(req.voter_id, ctx.now)
        ctx.trace("raft_voter_change", ev.RaftVoterChange("update", req.voter_id, M.NONE, ""))
        return M.NONE

    # --- auto-join (controller.quorum.auto.join.enable, 4.2, KAFKA-19078) -------------------
    def maybe_auto_join(self, ctx, st, now: int) -> int | None:
        """KafkaRaftClient.pollFollowerAsObserver with auto-join: an observer controller of a
        kraft.version 1 quorum, every update-voter-set period (``update_voter_period_ms``:
        one controller.quorum.fetch.timeout.ms from 4.1), sends the leader -- in place of a Fetch --
        RemoveRaftVoter for a voter with its id and another directory id, else AddRaftVoter for
        itself. None: nothing to send now (the caller fetches as usual)."""
        c = self.client
        voters = self.history.last_value()
        me = ReplicaKey(c.node_id, self.directory_id)
        if self.history.last_kraft_version() < 1 or voters.is_voter(me):
            return None
        period = self.update_voter_period_ms()
        deadline = getattr(st, "update_voter_deadline", None)
        if deadline is None:
            st.update_voter_deadline = deadline = now + period
        leader = st.leader_id
        if now < deadline or not c._requests.is_ready(leader, now) or \
                c._requests.is_backing_off(leader, now):
            return None
        old = voters.voter_node(c.node_id)
        if old is not None:
            def build(corr):
                return M.RemoveRaftVoterRequest(corr, c.node_id, old.voter_key.directory_id)
        else:
            endpoints = (("CONTROLLER", f"controller{c.node_id}", 9093),)

            def build(corr):
                return M.AddRaftVoterRequest(corr, c.node_id, self.directory_id, endpoints)
        st.update_voter_deadline = now + period
        return c._poller._maybe_send(ctx, leader, build)

    def respond(self, ctx, src, req, op, response):
        """The leader's answer to an AddRaftVoter / RemoveRaftVoter RPC: now when ``op`` is
        done, else when it completes (its future)."""
        if op.done:
            return response(req.correlation_id, op.error, op.message)
        op.reply_to = (src, req, response)
        return None

    def handle_auto_join_response(self, ctx, resp) -> bool:
        """handleAddVoterResponse / handleRemoveVoterResponse (KAFKA-19078): NONE,
        UNSUPPORTED_VERSION and DUPLICATE_VOTER end the attempt; REQUEST_TIMED_OUT restarts the
        period; other errors back off."""
        st = self.client.state
        if resp.error == REQUEST_TIMED_OUT and hasattr(st, "update_voter_deadline"):
            st.update_voter_deadline = ctx.now + self.update_voter_period_ms()
            return True
        return resp.error in (M.NONE, "UNSUPPORTED_VERSION", "DUPLICATE_VOTER",
                              REQUEST_TIMED_OUT)

    # --- the kraft.version upgrade (4.1, KAFKA-16538) ---------------------------------------
    def upgrade_kraft_version(self, ctx, new_version: int, voter_info: dict,
                              validate_only: bool = False) -> tuple[str, str] | None:
        """KafkaRaftClient.upgradeKRaftVersion / LeaderState.maybeAppendUpgradedKRaftVersion
        (Kafka 4.1, KAFKA-16538): None when done (or nothing to do), else (error, message).
        ``voter_info``: node id -> (directory id, supported kraft.version range) of the voters
        the leader heard from in this epoch (Kafka learns them from the UpdateRaftVoter
        requests 4.1 voters send a kraft.version 0 leader). The upgrade appends one control
        batch: KRaftVersionRecord(1) and a VotersRecord with every voter's directory id and
        endpoint; from then on the quorum is dynamic, irreversibly (no downgrade)."""
        st = self.client.state
        if not _is_leader(st):
            return M.NOT_LEADER_OR_FOLLOWER, "the kraft.version upgrade needs the Raft leader"
        try:
            maybe_append_upgraded_kraft_version(
                st, st.epoch, new_version, self.history.last_kraft_version(),
                self.history.last_value(), validate_only, ctx.now,
                append_control=lambda records: self.append_control_batch(ctx, records),
                volatile_voters=voter_info)
        except InvalidUpdateVersionException as e:
            return e.error, str(e)
        return None

    # --- KafkaRaftClient.handleAdd/RemoveVoterRequest ----------------------------------------
    def add_voter(self, ctx, voter_key: ReplicaKey, endpoints) -> VoterChangeOperation:
        """KafkaRaftClient.handleAddVoterRequest (KIP-853): NOT_LEADER_OR_FOLLOWER off the
        leader, INVALID_REQUEST without a directory id or a CONTROLLER endpoint, then
        AddVoterHandler. Returns the operation; ``done`` once answered."""
        op = VoterChangeOperation("add", voter_key, tuple(endpoints))
        st = self.client.state
        if not _is_leader(st):
            return _done(op, M.NOT_LEADER_OR_FOLLOWER, None)
        if voter_key.directory_id is None:
            return _done(op, M.INVALID_REQUEST, "Add voter request didn't include a valid voter")
        if not any(e[0] == "CONTROLLER" for e in endpoints):
            return _done(op, M.INVALID_REQUEST, "Add voter request didn't include the endpoint "
                         f"({list(endpoints)}) for the default listener CONTROLLER")
        op = self.handle_add_voter_request(ctx, st, voter_key, endpoints)
        self.client._poll(ctx)
        return op

    def remove_voter(self, ctx, voter_key: ReplicaKey) -> VoterChangeOperation:
        """KafkaRaftClient.handleRemoveVoterRequest (KIP-853), then RemoveVoterHandler."""
        op = VoterChangeOperation("remove", voter_key)
        st = self.client.state
        if not _is_leader(st):
            return _done(op, M.NOT_LEADER_OR_FOLLOWER, None)
        if voter_key.directory_id is None:
            return _done(op, M.INVALID_REQUEST,
                         "Remove voter request didn't include a valid voter")
        op = self.handle_remove_voter_request(ctx, st, voter_key)
        self.client._poll(ctx)
        return op

    # --- LeaderState's pending operations -----------------------------------------------------
    def _complete(self, ctx, st, which: str, error: str, message: str | None) -> None:
        """LeaderState.resetAdd/RemoveVoterHandlerState(error, message, empty)."""
        op = getattr(st, which)
        if op is None:
            return
        setattr(st, which, None)
        _done(op, error, message)
        if op.reply_to is not None:
            dst, req, response = op.reply_to
            ctx.send(dst, response(req.correlation_id, error, message))
        ctx.trace("raft_voter_change", ev.RaftVoterChange(op.operation, op.voter_key.id, error,
                                                          message or ""))

    def maybe_expire_pending_operation(self, ctx, st, now: int) -> int:
        """LeaderState.maybeExpirePendingOperation: expire, then the time until the next
        deadline (a large number with nothing pending)."""
        wait = 1 << 62
        for which in ("add_voter_state", "remove_voter_state"):
            op = getattr(st, which)
            if op is not None and now >= op.deadline:
                self._complete(ctx, st, which, REQUEST_TIMED_OUT, None)
            op = getattr(st, which)
            if op is not None:
                wait = min(wait, op.deadline - now)
        return wait

    def is_operation_pending(self, ctx, st, now: int) -> bool:
        self.maybe_expire_pending_operation(ctx, st, now)
        return st.add_voter_state is not None or st.remove_voter_state is not None

    def close(self, ctx, st) -> None:
        """LeaderState.close: the pending operations answer NOT_LEADER_OR_FOLLOWER."""
        self._complete(ctx, st, "add_voter_state", M.NOT_LEADER_OR_FOLLOWER, None)
        self._complete(ctx, st, "remove_voter_state", M.NOT_LEADER_OR_FOLLOWER, None)

    # --- the checks both handlers share ------------------------------------------------------
    def _common_checks(self, ctx, st, verb: str):
        """(error, message) of the first failing common check, or the voter set entry."""
        if self.is_operation_pending(ctx, st, ctx.now):
            return (REQUEST_TIMED_OUT, "Request timed out waiting for leader to handle previous "
                    "voter change request"), None
        hw = st.high_watermark
        if hw < 0:
            return (REQUEST_TIMED_OUT, "Request timed out waiting for leader to establish HWM "
                    "and fence previous voter changes"), None
        version = self.history.last_kraft_version()
        if version < 1:
            return ("UNSUPPORTED_VERSION", f"Cluster doesn't support {verb} voter because the "
                    f"kraft.version feature is {version}"), None
        entry = self.history.last_entry()
        if entry is None or entry[0] >= hw:
            at = f"Optional[{entry[0]}]" if entry else "Optional.empty"
            return (REQUEST_TIMED_OUT, "Request timed out waiting for voters to commit the "
                    f"latest voter change at {at} with HWM {hw}"), None
        return None, entry

    # --- AddRaftVoter ------------------------------------------------------------------------
    def handle_add_voter_request(self, ctx, st, voter_key, endpoints) -> VoterChangeOperation:
        """AddVoterHandler.handleAddVoterRequest."""
        op = VoterChangeOperation("add", voter_key, tuple(endpoints))
        failed, entry = self._common_checks(ctx, st, "adding")
        if failed:
            return _done(op, *failed)
        voters = entry[1]
        if voter_key.id in voters.voter_ids():
            return _done(op, "DUPLICATE_VOTER", f"The voter id for {voter_key} is already part "
                         f"of the set of voters {voters.keys_text()}.")
        c, now = self.client, ctx.now
        requests = c._requests
        if requests.is_backing_off(voter_key.id, now) or not requests.is_ready(voter_key.id,
                                                                              now):
            return _done(op, REQUEST_TIMED_OUT,
                         f"New voter {voter_key} is not ready to receive requests")
        c._poller._maybe_send(ctx, voter_key.id, M.ApiVersionsRequest)
        op.deadline = now + requests.remaining_request_time(voter_key.id, now)
        op.expecting_api_versions_from = voter_key.id
        st.add_voter_state = op
        return op

    def handle_api_versions_response(self, ctx, src: int, resp) -> bool:
        """AddVoterHandler.handleApiVersionsResponse (``resp`` None: the connection failed)."""
        st = self.client.state
        op = getattr(st, "add_voter_state", None)
        if op is None or op.expecting_api_versions_from != src:
            return True
        error = M.BROKER_NOT_AVAILABLE if resp is None else resp.error
        if error != M.NONE:
            self._complete(ctx, st, "add_voter_state", REQUEST_TIMED_OUT, "Aborted add voter "
                           f"operation for since API_VERSIONS returned an error {error}")
            return False
        version = self.history.last_kraft_version()
        supported = resp.supported_kraft_version
        if supported is None or not supported[0] <= version <= supported[1]:
            shown = "(min: 0, max: 0)" if supported is None else \
                f"(min: {supported[0]}, max: {supported[1]}"
            self._complete(ctx, st, "add_voter_state", M.INVALID_REQUEST, "Aborted add voter "
                           f"operation for {op.voter_key} since the kraft.version range "
                           f"{shown} doesn't support the finalized version {version}")
            return True
        if not st.is_replica_caught_up(op.voter_key, ctx.now):
            self._complete(ctx, st, "add_voter_state", REQUEST_TIMED_OUT, "Aborted add voter "
                           f"operation for {op.voter_key} since it is lagging behind")
            return True
        new = self.history.last_value().add_voter(
            VoterNode(op.voter_key, op.endpoints, tuple(supported)))
        if new is None:
            raise RuntimeError(f"Unable to add {op.voter_key} to the set of voters "
                               f"{self.history.last_value()}")
        op.expecting_api_versions_from = None
        op.last_offset = self.append_voters_record(ctx, new)
        return True

    # --- RemoveRaftVoter ---------------------------------------------------------------------
    def handle_remove_voter_request(self, ctx, st, voter_key) -> VoterChangeOperation:
        """RemoveVoterHandler.handleRemoveVoterRequest."""
        op = VoterChangeOperation("remove", voter_key)
        failed, entry = self._common_checks(ctx, st, "removing")
        if failed:
            return _done(op, *failed)
        new = entry[1].remove_voter(voter_key)
        if new is None:
            return _done(op, "VOTER_NOT_FOUND", f"Cannot remove voter {voter_key} from the set "
                         f"of voters {entry[1].keys_text()}")
        op.deadline = ctx.now + self.client.request_timeout_ms
        st.remove_voter_state = op
        op.last_offset = self.append_voters_record(ctx, new)
        return op

    # --- commit ------------------------------------------------------------------------------
    def high_watermark_updated(self, ctx, st) -> None:
        """Add/RemoveVoterHandler.highWatermarkUpdated: the VotersRecord committed; a leader
        that is not in the committed voter set resigns."""
        hw = st.high_watermark
        add = st.add_voter_state
        if add is not None and add.last_offset is not None and hw > add.last_offset:
            self._complete(ctx, st, "add_voter_state", M.NONE, None)
        rem = st.remove_voter_state
        if rem is not None and rem.last_offset is not None and hw > rem.last_offset:
            self._complete(ctx, st, "remove_voter_state", M.NONE, None)
            if self.client.observer:
                st.resign_requested = True
