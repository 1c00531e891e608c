"""Metadata modes: which control plane (ZooKeeper or KRaft) a Kafka release can run.

Kafka keeps its cluster metadata either in ZooKeeper (a ZooKeeper-based controller, 0.8 ... 3.9)
or in the KRaft quorum's ``__cluster_metadata`` log (KIP-500 / KIP-631). The version-rule table
says what each release allows (:mod:`kafkasim.settings.versions`):

* ``zookeeper_mode`` -- on until 4.0, which removed ZooKeeper (KIP-500; 4.0 is KRaft only);
* ``kraft_production_ready`` -- on from 3.3 (KIP-833). KRaft shipped as early access in 2.8 ... 3.2
  (``kraft_mode``); the simulator does not model those early-access controllers.

:func:`metadata_mode_for` turns a requested mode (or none) into ``"zookeeper"`` or ``"kraft"``.
Defaults: ``"kraft"`` from 4.0 (the only mode there), ``"zookeeper"`` below 4.0. For 3.3 ... 3.9
both modes exist; the default stays ``"zookeeper"`` so scenarios written before KRaft was modelled
keep their behaviour (a real 3.x ``server.properties`` chooses KRaft by setting ``process.roles``).
"""

from __future__ import annotations

import difflib

from kafkasim.settings.versions import Rules, normalize_version, rules_for

__all__ = [
    "KRAFT",
    "METADATA_MODES",
    "ZOOKEEPER",
    "MetadataModeError",
    "allowed_metadata_modes",
    "default_metadata_mode",
    "metadata_mode_for",
]

ZOOKEEPER = "zookeeper"
KRAFT = "kraft"
#: Every metadata mode, oldest first.
METADATA_MODES: tuple[str, ...] = (ZOOKEEPER, KRAFT)


class MetadataModeError(ValueError):
    """A metadata mode that is unknown, or that the requested Kafka release does not have."""


def _rules(kafka_version: str, rules: Rules | None) -> Rules:
    return rules if rules is not None else rules_for(kafka_version)


def allowed_metadata_modes(kafka_version: str, *, rules: Rules | None = None) -> tuple[str, ...]:
    """The metadata modes the simulator models for ``kafka_version``, oldest first.

    ``rules`` (e.g. ``rules_for("3.7", overrides)``) replaces the version's own rules, so a
    notebook that switches ``zookeeper_mode`` or ``kraft_production_ready`` sees the effect.
    """
    r = _rules(kafka_version, rules)
    modes = []
    if r.controller.zookeeper_mode:
        modes.append(ZOOKEEPER)
    if r.controller.kraft_production_ready:
        modes.append(KRAFT)
    return tuple(modes)


def default_metadata_mode(kafka_version: str, *, rules: Rules | None = None) -> str:
    """``"kraft"`` where ZooKeeper is gone (4.0+), else ``"zookeeper"`` (3.3-3.9 as before)."""
    r = _rules(kafka_version, rules)
    return ZOOKEEPER if r.controller.zookeeper_mode else KRAFT


def _normalise_mode(metadata_mode: object) -> str:
    if not isinstance(metadata_mode, str):
        raise MetadataModeError(
            f"metadata_mode must be a string ('zookeeper' or 'kraft') or None, got "
            f"{metadata_mode!r} ({type(metadata_mode).__name__})"
        )
    mode = metadata_mode.strip().lower()
    if mode in METADATA_MODES:
        return mode
    if mode in ("zk", "zookeeper-mode", "zkmode"):
        hint = " Did you mean 'zookeeper'?"
    else:
        close = difflib.get_close_matches(mode, METADATA_MODES, n=1, cutoff=0.5)
        hint = f" Did you mean '{close[0]}'?" if close else ""
    raise MetadataModeError(
        f"Unknown metadata_mode {metadata_mode!r}.{hint} Known modes: 'zookeeper' (the "
        "ZooKeeper-based controller, Kafka 0.8 to 3.9) and 'kraft' (the KRaft quorum controller, "
        "KIP-500, production-ready from 3.3)"
    )


def metadata_mode_for(
    kafka_version: str, metadata_mode: str | None = None, *, rules: Rules | None = None
) -> str:
    """Return ``"zookeeper"`` or ``"kraft"`` for a scenario on ``kafka_version``.

    ``metadata_mode`` None picks the default (:func:`default_metadata_mode`). A mode the release
    does not have raises :class:`MetadataModeError` naming Kafka's rule: ZooKeeper from 4.0 on
    (KIP-500 removed it), KRaft below 3.3 (early access 2.8-3.2, not modelled; none before 2.8).
    Mode names are case-insensitive.
    """
    profile = normalize_version(kafka_version)
    r = _rules(profile, rules)
    if metadata_mode is None:
        mode = default_metadata_mode(profile, rules=r)
    else:
        mode = _normalise_mode(metadata_mode)
    if mode == ZOOKEEPER and not r.controller.zookeeper_mode:
        raise MetadataModeError(
            f"Kafka {profile} has no ZooKeeper mode: Kafka 4.0 removed ZooKeeper mode (KIP-500); "
            "use metadata_mode='kraft' or kafka_version 3.9 or older"
        )
    if mode == KRAFT and not r.controller.kraft_production_ready:
        if r.controller.kraft_mode:
            raise MetadataModeError(
                f"KRaft mode is not modelled for Kafka {profile}: KRaft was early access in "
                "2.8 to 3.2 (KIP-500 / KIP-631) and production-ready only from 3.3 (KIP-833); "
                "the simulator does not model the early-access controller. Use "
                "metadata_mode='zookeeper' or kafka_version 3.3 or newer"
            )
        raise MetadataModeError(
            f"Kafka {profile} has no KRaft mode: KRaft arrived as early access in 2.8 "
            "(KIP-500 / KIP-631) and became production-ready in 3.3 (KIP-833). Use "
            "metadata_mode='zookeeper' or kafka_version 3.3 or newer"
        )
    return mode
