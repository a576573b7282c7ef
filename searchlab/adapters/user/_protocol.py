"""The measurement protocol of a user's problem: searchlab's defaults, the spec's, ``problem.measure``.

Why layered: a spec file (a T1 ``Searchlab.Measurement`` block, a command spec's ``measure``)
states how its author wants the program timed, and ``problem.measure.*`` is the one typed
option every measuring problem takes (issue 21, item 1). Hydra hands the whole protocol over,
defaults filled in, so a field of ``problem.measure`` counts as given where it differs from
:class:`~searchlab.core.measure.MeasurementProtocol`'s default. Deviation: setting a field
back to its default on the command line cannot undo a spec's value for it (edit the spec).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from searchlab.core.measure import MeasurementProtocol, protocol_from

_DEFAULT = MeasurementProtocol()


def given_fields(protocol: MeasurementProtocol) -> dict[str, Any]:
    """The fields of ``protocol`` that differ from the default protocol's."""
    return {f.name: getattr(protocol, f.name) for f in fields(protocol)
            if getattr(protocol, f.name) != getattr(_DEFAULT, f.name)}


def layered_protocol(option: MeasurementProtocol, spec: Mapping[str, Any] | None,
                     **defaults: Any) -> MeasurementProtocol:
    """``defaults`` (the problem's own), over them the spec's block, over that ``problem.measure``."""
    return protocol_from({**dict(spec or {}), **given_fields(option)}, **defaults)
