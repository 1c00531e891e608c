"""The trace's event kinds as the player's "next event" dropdown names them: the kind itself in
English (what ``Player.next_event`` takes and the trace's rows carry), a short phrase with the
kind in brackets in a translated course (``kind_label``). The dropdown's value stays the kind.

The kinds are ``kafkasim.core.events.EVENT_KINDS`` (tests/test_player_tiles.py checks that every
one has its label here); their msgctxt is this module's own, so a kind spelled like a word of
the player's ("drop", "controller") keeps its own translation.
"""

from __future__ import annotations

from kafkasim.widgets._render import N_
from kafkasim.widgets._render import tr as _tr

I18N_CONTEXT = "kafkasim.trace_kind"


#: kind -> its label's English (the kind itself: the msgid the catalog translates)
KIND_LABELS = {k: k for k in (
    N_("alter_config"), N_("append"), N_("become_follower"), N_("become_leader"),
    N_("broker_crash"), N_("broker_fenced"), N_("broker_fencing"), N_("broker_power_loss"),
    N_("broker_registered"), N_("broker_registration_backoff"),
    N_("broker_registration_failed"), N_("broker_shutdown"), N_("broker_start"),
    N_("broker_start_failed"), N_("checkpoint_warning"), N_("connect_failed"), N_("consume"),
    N_("consumer_truncation"), N_("controlled_shutdown"), N_("controller"),
    N_("controller_active"), N_("controller_elected"), N_("controller_node_start"),
    N_("controller_node_stop"), N_("controller_renounce"), N_("controller_resigned"),
    N_("drop"), N_("fault"), N_("fetch_failed"), N_("fetch_out_of_range"),
    N_("fetch_redirect"), N_("hold"), N_("hw"), N_("isr"), N_("isr_change_notification"),
    N_("isr_proposed"), N_("isr_update_failed"), N_("leader_and_isr_ignored"),
    N_("leader_recovered"), N_("log_recovery"), N_("metadata_quorum"), N_("offset_commit"),
    N_("produce_duplicate"), N_("produce_rejected"), N_("produce_result"),
    N_("produce_timed_out"), N_("raft_fetch_timeout"), N_("raft_high_watermark"),
    N_("raft_ignored_response"), N_("raft_resign"), N_("raft_snapshot"),
    N_("raft_transition"), N_("raft_truncate"),
    N_("raft_vote"), N_("raft_voter_change"), N_("raft_voters"), N_("recv"), N_("replicate"),
    N_("rule_swapped"), N_("send"), N_("stop_replica"), N_("stray_log"), N_("truncate"),
    N_("zk_session_expired"))}


def kind_label(kind: str) -> str:
    """What the dropdown shows for ``kind``: the kind in English, a phrase naming it (the kind
    in brackets) in a translated course; an unknown kind as it is."""
    return _tr(KIND_LABELS[kind], _context=I18N_CONTEXT) if kind in KIND_LABELS else kind


def kind_options(kinds: list[str]) -> list[tuple[str, str]]:
    """The dropdown's (label, value) options: the value is the kind."""
    return [(kind_label(k), k) for k in kinds]
